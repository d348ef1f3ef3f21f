"""Every command shown to a reader runs: the ```sh blocks of the README and of docs/*.md,
and the examples of every command's --help.

Each block runs as one bash script (``set -euo pipefail``) in a copy of a work folder that
holds what the examples name: the repository's data/, examples/ and hwspecs/, a spec of
this host from ``hw probe --quick`` (myhost.yaml), a calibration fitted on made-up
samples (calibration.json), and the points and accuracy files a reader writes by hand.
Lines that install, run the test suite or the benchmark scripts, calibrate this host
(minutes; the made-up calibration stands in), need a Dask cluster, a GPU or a corpus of
matrices outside the repository are left out, each for its reason.

Where a document shows what a block prints (a ```text block after the ```sh block, with
only prose between them), the block's stdout must show it: every line of the shown text,
in order, is a line of the real output (the document may leave lines out, such as a
table's rule or footnotes), after this normalisation of both sides and nothing more:

- runs of spaces become one space and lines are stripped (a column's width follows its
  widest cell; trailing padding is invisible);
- the work folder's absolute path becomes ``.``;
- a figure timed on the host that runs the example (:data:`HOST_TIMED`: how long a
  reordering takes, and the products that pay for it) becomes a stand-in.
Every other number, name and word must be the one the document shows.

A block runs a line at a time, as bash would run it, and each ``sparsroof`` command runs in
this interpreter (:func:`tests.conftest.sparsroof`) with the environment and folder the
script gives it: its arguments as bash expands them, its stdout to the file a ``>`` names
or into what the block prints, or into the rest of a ``|`` pipeline, which bash runs. Any
other line (``printf``, ``python -m sparsroof``) runs in bash, and a block that a line at a
time would not run as bash runs it (jobs in the background, variables, ``cd``) runs whole
in bash, each command its own process.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from ..conftest import ROOT, sparsroof

#: (pattern, why) for lines the test does not run
LEFT_OUT = (
    (r"^pip install -e", "installs the project"),
    (r"python -m pytest", "runs this test suite"),
    (r"^ruff |^mypy", "lint and type checks run on their own"),
    (r"^python bench/", "benchmark scripts take minutes"),
    (r"sparsroof calibrate ", "calibrating takes minutes; a made-up calibration stands in"),
    (r"--scheduler", "needs a Dask cluster"),
    (r"--backend cusparse|--device cuda|bench/gpu_check", "needs a GPU with CuPy"),
    (r'^pip install "?(sparsroof|\.)\[gpu\]', "installs the GPU extra"),
    (r"pip download", "downloads wheels"),
    (r"CORPUS", "names a corpus of matrices outside the repository"),
)
#: (pattern, stand-in) for figures that are timed on the host running the example
HOST_TIMED = (
    # reorder time and break-even of analyze --reorder: "1.54 s  12.1 k runs"
    (re.compile(r"\b[\d.,]+ (?:s|ms|us|ns|min|h) [\d.,]+ (?:k |M )?runs\b"),
     "<reorder time> <break-even>"),
)
#: blocks with these run for seconds to minutes: marked slow
SLOW = re.compile(r"hw probe(?! .*--quick)|sparsroof bench |sparsroof batch |sparsroof whatif ")
#: blocks with these measure this host for seconds each: the full run's (ALL_EXAMPLES)
MEASURES_HOST = re.compile(r"hw probe(?! .*--quick)|sparsroof bench ")


def _logical_lines(text: str) -> list[str]:
    """Lines with backslash continuations joined."""
    return text.replace("\\\n", " ").splitlines()


def _runnable(lines: list[str]) -> str:
    kept = []
    for line in lines:
        line = re.sub(r"^pip install \S+ && ", "", line.strip())  # quick start: the run part
        if line and not any(re.search(p, line) for p, _ in LEFT_OUT):
            kept.append(line)
    return "\n".join(kept)


def doc_blocks() -> list[tuple[str, str]]:
    return [(where, block) for where, block, _ in doc_blocks_shown()]


def doc_blocks_shown() -> list[tuple[str, str, str | None]]:
    """(where, ```sh block, the ```text block that shows its output or None) of the
    README and docs/*.md, in order."""
    found: list[tuple[str, str, str | None]] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        fences = list(re.finditer(r"```(\w*)\n(.*?)```", path.read_text(), re.S))
        n = 0
        for i, fence in enumerate(fences):
            if fence.group(1) != "sh":
                continue
            n += 1
            after = fences[i + 1] if i + 1 < len(fences) else None
            shown = after.group(2) if after is not None and after.group(1) == "text" else None
            found.append((f"{path.relative_to(ROOT)}#{n}", fence.group(2), shown))
    return found


def normalised(text: str, folder: Path | None = None) -> list[str]:
    """The non-empty lines of ``text`` as the shown output is compared (module docstring)."""
    if folder is not None:
        text = text.replace(str(folder), ".")
    lines = []
    for line in text.splitlines():
        line = " ".join(line.split())
        for pattern, stand_in in HOST_TIMED:
            line = pattern.sub(stand_in, line)
        if line:
            lines.append(line)
    return lines


def missing_from(shown: list[str], printed: list[str]) -> str | None:
    """The first shown line that is not, in order, a printed line; None when all are."""
    at = 0
    for line in shown:
        try:
            at = printed.index(line, at) + 1
        except ValueError:
            return line
    return None


def help_blocks() -> list[tuple[str, str]]:
    from sparsroof.cli import cli

    found = []

    def walk(command: click.Command, ctx: click.Context, name: str) -> None:
        match = re.search(r"Examples?:\n(.*?)(?:\n\s*\n|$)", command.help or "", re.S)
        if match:
            found.append((f"sparsroof {name} --help".replace("  ", " "), match.group(1)))
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                child = command.get_command(ctx, sub)
                assert child is not None
                walk(child, click.Context(child, parent=ctx), f"{name} {sub}".strip())

    walk(cli, click.Context(cli), "")
    return found


#: SPARSROOF_EXAMPLES=all runs every block (CI does); without it, the blocks that
#: :func:`in_full_run_only` names are skipped
ALL_EXAMPLES = os.environ.get("SPARSROOF_EXAMPLES") == "all"


def in_full_run_only(script: str, shown: str | None, seen: set[str]) -> str | None:
    """Why a block runs only in the full run (SPARSROOF_EXAMPLES=all), or None where the
    default run runs it too: every block that shows its output does, and every other block
    that runs a command no earlier block ran and neither probes this host in full nor times
    it (:data:`MEASURES_HOST`, 10-30 s a probe)."""
    if shown is not None:
        return None
    if MEASURES_HOST.search(script):
        return "probes this host in full or times it"
    if all(" ".join(line.split("#", 1)[0].split()) in seen for line in script.splitlines()):
        return "each of its commands an earlier block runs"
    return None


def _params() -> list[object]:
    params: list[object] = []
    helps = [(where, block, None) for where, block in help_blocks()]
    seen: set[str] = set()
    for where, block, shown in doc_blocks_shown() + helps:
        script = _runnable(_logical_lines(block))
        if not script:  # every line is left out, each for its reason (LEFT_OUT)
            continue
        marks = [pytest.mark.slow] if SLOW.search(script) else []
        why = in_full_run_only(script, shown, seen)
        if why is not None and not ALL_EXAMPLES:
            marks.append(pytest.mark.skip(reason=f"SPARSROOF_EXAMPLES=all runs it: {why}"))
        seen.update(" ".join(line.split("#", 1)[0].split()) for line in script.splitlines())
        params.append(pytest.param(script, shown, id=where, marks=marks))
    return params


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.host.test_calibrate import _synthetic_calibration

    base = tmp_path_factory.mktemp("examples")
    for folder in ("data", "examples", "hwspecs"):
        shutil.copytree(ROOT / folder, base / folder)
    probe = sparsroof("hw", "probe", "--quick", "-o", "myhost.yaml", cwd=base)
    assert probe.returncode == 0, probe.stderr
    # the examples apply it to the spec 'hw probe' writes of this host, probed again by some
    # of them: a made-up cache roof would sit above or below this host's own as its load
    # moves them (L1 50-250 GB/s, L3 25-100), so the stand-in measured none
    _synthetic_calibration(base / "calibration.json", l2_roof=None)
    (base / "points.csv").write_text("pattern,sparsity,speedup,accuracy\n2:4,0.5,1.6,79.9\n"
                                     "unstructured,0.5,1.1,80.1\nunstructured,0.9,2.5,76.0\n")
    (base / "acc.csv").write_text("pattern,sparsity,accuracy\nblock4,50,78\n2:4,50,80.5\n")
    # measured layer times of a network (whatif --measured), made up
    (base / "layer-times.csv").write_text("layer,pattern,sparsity,time_s\nblocks.0.mlp.fc1,"
                                          "dense,,3.2e-6\nblocks.0.mlp.fc1,2:4,,2.1e-6\n")
    # measured times a reader brings to compare: a CSV, a bench run here, Ginkgo's JSON
    (base / "measured.csv").write_text("matrix,time_s\ndata/lap2d_64.mtx,2.5e-5\n")
    bench = sparsroof("bench", "data/lap2d_64.mtx", "--hw", "myhost.yaml", "--repeat", "3",
                      "-O", "json", cwd=base)
    assert bench.returncode in (0, 3), bench.stderr
    (base / "bench.json").write_text(bench.stdout)
    # GPU runs a reader brings (bench --backend cusparse needs a GPU): the format fixture,
    # made-up times in the shape that command writes, its matrix where the examples have it
    gpu_runs = json.loads((ROOT / "tests" / "data" / "gpu-bench-format-fixture.json")
                          .read_text())
    for run in gpu_runs["results"]:
        run["path"] = "data/lap2d_64.mtx"
    (base / "gpu-runs.json").write_text(json.dumps(gpu_runs))
    (base / "ginkgo-spmv.json").write_text(
        '[{"filename": "/home/bench/ssget/MM/data/lap2d_64.mtx", "spmv": {"csr": {"time": 9000.0, '
        '"completed": true}, "coo": {"time": 11000.0, "completed": true}}}]')
    return base


def test_every_source_has_examples() -> None:
    names = {where.split("#")[0] for where, _ in doc_blocks()}
    assert "README.md" in names and len(names) >= 8
    shown = [where for where, _, text in doc_blocks_shown() if text is not None]
    assert len([w for w in shown if w.startswith("README.md")]) >= 2, shown
    helps = {where for where, _ in help_blocks()}
    assert {"sparsroof analyze --help", "sparsroof check --help", "sparsroof hw --help"} <= helps


#: a line that a block must run whole in bash for: a job in the background, a variable, a
#: change of folder, a compound command
_WHOLE_IN_BASH = re.compile(r"(?<![&|>])&(?![&>])|\$|`|^\s*(?:cd|export|wait|for|while|if|"
                            r"function)\b|^\s*\w+=")
#: what a shell gives special meaning to in a word, beyond quotes
_SHELL = re.compile(r"[;&()<>|`$\\{}!~]")


def _words(text: str) -> list[str] | None:
    """The words of a plain command line as bash splits them, quotes removed, comments
    dropped; None where the line is not just words (a quote inside a word, an escape, an
    expansion or operator outside single quotes)."""
    words = []
    for token in shlex.split(text, comments=True, posix=False):
        quote = token[0]
        if quote in "'\"":
            inner = token[1:-1]
            if len(token) < 2 or token[-1] != quote or quote in inner \
                    or (quote == '"' and re.search(r"[`$\\!]", inner)):
                return None
            words.append(inner)
        elif "'" in token or '"' in token or _SHELL.search(token):
            return None
        else:
            words.append(token)
    return words


def _command(line: str) -> tuple[str, str | None, str | None] | None:
    """(the sparsroof command's own text, the file its stdout goes to, the rest of its
    pipeline) where ``line`` is ``sparsroof ARGS [> FILE]`` or ``sparsroof ARGS | REST``;
    None otherwise."""
    if re.search(r"\d>|>&|&>", line):
        return None
    lexer = shlex.shlex(line, posix=False, punctuation_chars="|>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    if not tokens or tokens[0] != "sparsroof":
        return None
    operators = [i for i, token in enumerate(tokens) if set(token) <= set("|>")]
    if not operators:
        return line, None, None
    at = operators[0]
    start = _offset(line, at, tokens)
    if tokens[at] == "|":  # bash runs the rest of the pipeline
        return line[:start], None, line[start + 1:]
    if tokens[at] == ">" and len(tokens) == at + 2 and _words(tokens[-1]) == [tokens[-1]]:
        return line[:start], tokens[-1], None
    return None


def _offset(line: str, index: int, tokens: list[str]) -> int:
    """Where the ``index``-th of the line's ``tokens`` (a | or >) starts in ``line``."""
    at = 0
    for token in tokens[:index]:
        at = line.index(token, at) + len(token)
    return line.index(tokens[index], at)


def _argv(text: str, here: Path, env: dict[str, str]) -> list[str] | None:
    """The arguments of a sparsroof command line, as bash expands them (its globs by bash)."""
    words = _words(text)
    if words is None:
        return None
    if any(c in text for c in "*?["):
        expanded = subprocess.run(["bash", "-c", "printf '%s\\0' " + text.split(None, 1)[1]],
                                  cwd=here, env=env, capture_output=True, text=True, check=True)
        return expanded.stdout.split("\0")[:-1]
    return words[1:]


def run_block(script: str, here: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """Run a block as ``bash -euo pipefail`` would: (its status, stdout, stderr); every
    sparsroof command it can in this interpreter (module docstring)."""

    def bash(text: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=here, env=env,
                              input=stdin, capture_output=True, text=True, timeout=540)

    # bench exits 3 when a run beats its bound; the quick probe measures each level's roof
    # in a few calls, and on a busy host a later run can still outrun one: the example ran
    lines = script.splitlines()
    if any(_WHOLE_IN_BASH.search(line.split("#", 1)[0]) for line in lines):
        whole = bash(re.sub(r"^(sparsroof bench .*)$", r"\1 || test $? -eq 3", script,
                            flags=re.M))
        return whole.returncode, whole.stdout, whole.stderr
    stdout, stderr = [], []
    for line in lines:
        command = _command(line)
        argv = _argv(command[0], here, env) if command is not None else None
        if command is None or argv is None:
            if line.startswith("sparsroof bench "):
                line = f"{line} || test $? -eq 3"
            ran = bash(line)
            stdout.append(ran.stdout)
            stderr.append(ran.stderr)
            if ran.returncode:
                return ran.returncode, "".join(stdout), "".join(stderr)
            continue
        _, to_file, rest = command
        ran = sparsroof(*argv, cwd=here, env=env)
        stderr.append(ran.stderr)
        code = ran.returncode
        if argv[0] == "bench" and code == 3:
            code = 0
        if to_file is not None:
            (here / to_file).write_text(ran.stdout)
        elif rest is not None:
            tail = bash(rest, stdin=ran.stdout)
            stdout.append(tail.stdout)
            stderr.append(tail.stderr)
            code = code or tail.returncode
        else:
            stdout.append(ran.stdout)
        if code:
            return code, "".join(stdout), "".join(stderr)
    return 0, "".join(stdout), "".join(stderr)


@pytest.mark.parametrize("script,shown", _params())
def test_example_runs(script: str, shown: str | None, workdir: Path, tmp_path: Path) -> None:
    if "jq " in script and shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    here = tmp_path / "w"
    shutil.copytree(workdir, here)
    if re.search(r"hw probe -o myhost.yaml(?!.*--force)", script):
        (here / "myhost.yaml").unlink()  # the block makes its own, as a reader's first probe
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               COLUMNS="100")
    returncode, stdout, stderr = run_block(script, here, env)
    assert returncode == 0, f"{script}\n---\n{stderr[-2000:]}"
    assert "Traceback" not in stderr
    if shown is not None:
        printed = normalised(stdout, here)
        missing = missing_from(normalised(shown), printed)
        assert missing is None, (f"the document shows\n  {missing}\nwhich the example does "
                                 f"not print; it printed:\n" + "\n".join(printed))


def test_shown_output_is_compared_line_by_line() -> None:
    """The comparison itself: padding and host-timed figures are normalised, nothing
    else; lines may be left out but not reordered or changed."""
    printed = normalised("d  format  ordering  bandwidth  reorder time   break-even  best\n"
                         "──────\n8  csr     rcm        700     1.54 s  12.1 k runs  yes \n"
                         "footnote\n")
    assert printed[2] == "8 csr rcm 700 <reorder time> <break-even> yes"
    shown = normalised("8  csr  rcm  700   4.19 s  32.8 k runs  yes\n")
    assert missing_from(shown, printed) is None
    assert missing_from(normalised("8  csr  rcm  701  1.54 s  12.1 k runs  yes"), printed)
    assert missing_from(normalised("footnote\n──────"), printed) == "──────"
    # SoL and other modelled times are not host-timed: a changed one is a difference
    assert missing_from(["97.5 us"], normalised("98 us")) == "97.5 us"
    assert normalised("/tmp/x/w/data/a.mtx: error", Path("/tmp/x/w")) == ["./data/a.mtx: error"]


def test_block_runs_as_bash_runs_it(tmp_path: Path) -> None:
    """A block run a line at a time, its commands in this interpreter, does what bash does
    with it: the output in order, > and | as the shell's, the first failure ends it."""
    env = dict(os.environ, COLUMNS="100")
    code, out, _ = run_block("sparsroof --version > v.txt\nprintf 'x\\n'\n"
                             "sparsroof --version | tr a-z A-Z\nsparsroof --version", tmp_path, env)
    version = (tmp_path / "v.txt").read_text()
    assert code == 0 and version.startswith("sparsroof")
    assert out == "x\n" + version.upper() + version
    code, out, err = run_block("printf 'a\\n'\nsparsroof nosuch\nprintf 'b\\n'", tmp_path, env)
    assert (code, out) == (2, "a\n") and "no command 'nosuch'" in err
    code, _, _ = run_block("sparsroof --version | false", tmp_path, env)
    assert code == 1
    (tmp_path / "b c.mtx").write_text("")
    assert _command("sparsroof a 'b c.mtx' > o.json  # c") == ("sparsroof a 'b c.mtx' ",
                                                                 "o.json", None)
    assert _argv("sparsroof spy *.mtx 'x*' \"y z\"", tmp_path, env) == \
        ["spy", "b c.mtx", "x*", "y z"]
    for line in ("sparsroof a 2> e", "sparsroof a $X", "sparsroof a >> f", "sparsroof a || b",
                 "python -m sparsroof a"):
        command = _command(line)
        assert command is None or _words(command[0]) is None, line
    assert _WHOLE_IN_BASH.search("sparsroof a & sparsroof b")


def test_the_default_run_leaves_out_only_probes_timings_and_repeats() -> None:
    seen = {"sparsroof hw list"}
    assert in_full_run_only("sparsroof hw probe -o h.yaml --force", None, seen)
    assert in_full_run_only("sparsroof bench data/a.mtx --hw h.yaml", None, seen)
    assert in_full_run_only("sparsroof hw list   # again", None, seen)
    assert in_full_run_only("sparsroof hw probe --quick -o h.yaml", None, seen) is None
    assert in_full_run_only("sparsroof hw list\nsparsroof hw show a100", None, seen) is None
    assert in_full_run_only("sparsroof hw probe -o h.yaml", "OK", seen) is None  # shown
