"""Kept answers: a command run again from a shell on unchanged inputs prints what it printed
without running; anything its output depends on, changed, runs it again."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sparsroof.caching import answers

from ..conftest import DATA, fresh_python

LAP = DATA / "lap2d_64.mtx"

#: the installed command, as a shell runs it: argv from the command line, main() without one
_RUN = ("import sys; sys.argv = ['sparsroof', *sys.argv[1:]]\n"
        "from sparsroof.cli import main\n"
        "try:\n    main()\n"
        "finally:\n"
        "    print('\\nRAN', 'click' in sys.modules, file=sys.stderr)\n")


def _shell(*args: str | Path, cache: Path, cwd: Path | None = None,
           env: dict[str, str] | None = None) -> tuple[int, str, str, bool]:
    """(status, stdout, stderr, whether the command ran) of ``sparsroof ARGS``: a kept
    answer is printed without the command group (nor click, numpy or the file)."""
    environ = dict(os.environ) | {"SPARSROOF_CACHE_DIR": str(cache)} | (env or {})
    out = fresh_python(_RUN, *args, cwd=cwd, env=environ)
    err, _, ran = out.stderr.rpartition("\nRAN ")
    return out.returncode, out.stdout, err, ast.literal_eval(ran.strip())


def _kept(cache: Path) -> int:
    folder = cache / "answers"
    return len(list(folder.glob("*.json"))) if folder.is_dir() else 0




@pytest.mark.parametrize("args", [["analyze", "--hw", "a100,h100-sxm"],
                                  ["classify", "-O", "json"], ["formats", "--hw", "c2050"]])
def test_the_same_command_prints_its_kept_answer(args: list[str],
                                                               tmp_path: Path) -> None:
    first = _shell(args[0], LAP, *args[1:], cache=tmp_path)
    assert first[0] == 0 and first[3] and _kept(tmp_path) == 1
    again = _shell(args[0], LAP, *args[1:], cache=tmp_path)
    assert again == (0, first[1], first[2], False)  # the same output, nothing run
    assert first[1].strip()


def test_what_the_output_depends_on_runs_the_command_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _shell("analyze", LAP, cache=cache)[3]
    assert not _shell("analyze", LAP, cache=cache)[3]
    # other options, another terminal width, another working folder: computed afresh
    assert _shell("analyze", LAP, "--hw", "v100-sxm2", cache=cache)[3]
    assert _shell("analyze", LAP, cache=cache, env={"COLUMNS": "83"})[3]
    assert _shell("analyze", LAP, cache=cache, cwd=tmp_path)[3]
    assert _kept(cache) == 4
    # a file made later under a bundled spec's name is seen
    assert _shell("analyze", LAP, "--hw", "v100-sxm2", cache=cache, cwd=tmp_path)[3]
    assert not _shell("analyze", LAP, "--hw", "v100-sxm2", cache=cache, cwd=tmp_path)[3]
    (tmp_path / "v100-sxm2").write_text("not a spec")
    assert _shell("analyze", LAP, "--hw", "v100-sxm2", cache=cache, cwd=tmp_path)[3]


@pytest.mark.parametrize("extra", [["--no-cache"], ["--plot", "fig.png"], ["--reorder", "rcm"],
                                   ["--hw", "no-such-spec"]])
def test_commands_that_write_time_fail_or_must_not_cache_are_not_kept(
        extra: list[str], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for _ in range(2):
        status, _, _, ran = _shell("analyze", LAP, *extra, cache=cache, cwd=tmp_path)
        assert ran
    assert _kept(cache) == 0
    assert (tmp_path / "fig.png").is_file() == ("--plot" in extra)


def test_a_changed_input_changes_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    path = tmp_path / LAP.name
    shutil.copyfile(LAP, path)
    # a file changed within the timestamps' granularity is not trusted: no key
    assert answers.answer_key(["analyze", str(path)]) is None
    monkeypatch.setattr(answers, "RACY_NS", 0)
    key = answers.answer_key(["analyze", str(path)])
    assert key is not None and key == answers.answer_key(["analyze", str(path)])
    path.write_text(path.read_text())  # the same bytes, written again
    assert answers.answer_key(["analyze", str(path)]) not in (None, key)
    # a folder, stdin, help and other commands are never kept
    for args in (["analyze", str(tmp_path)], ["analyze", "-"], ["analyze", "--help"],
                 ["bench", str(path)], ["formats", str(path), "--run"],
                 ["check", str(path)], []):
        assert answers.answer_key(args) is None


def test_a_damaged_answer_is_a_miss_and_an_unwritable_cache_is_no_error(tmp_path: Path
                                                                        ) -> None:
    cache = tmp_path / "cache"
    first = _shell("analyze", LAP, cache=cache)
    (kept,) = (cache / "answers").glob("*.json")
    kept.write_text("{not json")
    assert _shell("analyze", LAP, cache=cache) == first  # computed again, and kept again
    assert not _shell("analyze", LAP, cache=cache)[3]
    blocked = tmp_path / "file"
    blocked.write_text("")
    for _ in range(2):
        status, out, _, ran = _shell("analyze", LAP, cache=blocked)
        assert status == 0 and out == first[1] and ran


def test_a_spec_named_with_blanks_in_a_list_is_keyed(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answers, "RACY_NS", 0)
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "my.yaml"
    spec.write_text("name: mine\n")
    args = ["analyze", str(LAP), "--hw", "h100-sxm, my.yaml"]  # --hw strips the blank
    key = answers.answer_key(args)
    spec.write_text("name: changed\n")
    assert answers.answer_key(args) not in (None, key)


def test_no_key_without_a_stream_or_a_working_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["analyze", str(LAP)]
    assert answers.answer_key(args) is not None
    with monkeypatch.context() as m:
        m.setattr(sys, "stdout", None)
        assert answers.answer_key(args) is None

    def gone() -> str:
        raise FileNotFoundError("the working folder was deleted")
    monkeypatch.setattr(os, "getcwd", gone)
    assert answers.answer_key(args) is None


def test_a_failed_write_or_store_keeps_nothing(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARSROOF_CACHE_DIR", str(tmp_path))

    class Closed:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    def prints() -> int:  # as the command's guard does: a closed pipe ends it with 0
        try:
            sys.stdout.write("part of it")
        except BrokenPipeError:
            return 0
        return 0
    monkeypatch.setattr(sys, "stdout", Closed())
    assert answers.recorded("k1", prints) == 0
    monkeypatch.undo()
    assert not (tmp_path / "answers").exists()
    monkeypatch.setenv("SPARSROOF_CACHE_DIR", str(tmp_path))

    opened = os.fdopen

    class Full:  # the temporary file, on a full disk
        def __init__(self, fd: int, *args: object, **kwargs: object) -> None:
            self._file = opened(fd, "w")

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self._file.close()

        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fdopen", Full)
    assert answers.recorded("k2", lambda: 0) == 0
    assert not list((tmp_path / "answers").glob("*")), "no answer, no half-written file"


def test_a_replay_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = ["analyze", *sorted(map(str, DATA.glob("*.mtx")))]
    assert _shell(*args, cache=cache)[0] == 0 and _kept(cache) == 1
    read, write = os.pipe()
    os.close(read)  # every write to stdout now fails
    environ = dict(os.environ) | {"SPARSROOF_CACHE_DIR": str(cache)}
    try:
        out = subprocess.run([sys.executable, "-c", _RUN, *args], stdout=write,
                             stderr=subprocess.PIPE, text=True, timeout=300, env=environ)
    finally:
        os.close(write)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "RAN False" in out.stderr  # the kept answer was replayed, not the command
