"""The public Python API: what a notebook reaches from ``import sparsroof``."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import sparsroof
from sparsroof.cli import cli
from sparsroof.cli.guard import run_guarded

DATA = Path(__file__).resolve().parents[2] / "data"


def test_every_public_name_resolves() -> None:
    for name in sparsroof.__all__:
        assert getattr(sparsroof, name) is not None, name


def test_public_signatures_name_no_any() -> None:
    """A typed API: no ``Any`` in the parameters or results of the public functions."""
    for name in ("analyze", "classify", "load", "load_spec", "peek", "measure", "bound",
                 "traffic", "bundled_names"):
        signature = inspect.signature(getattr(sparsroof, name))
        texts = [str(p.annotation) for p in signature.parameters.values()]
        texts.append(str(signature.return_annotation))
        assert not any("Any" in t for t in texts), (name, texts)


def test_analyze_takes_scipy_of_any_format_and_dense_arrays() -> None:
    a = sp.random(200, 200, density=0.05, format="csr", random_state=0)
    sols = {fmt: sparsroof.analyze(a.asformat(fmt), hw="a100").to_dict()["matrices"][0]
            ["results"][0]["bound"]["sol_s"] for fmt in ("csr", "csc", "coo", "lil", "dok")}
    sols["dense"] = sparsroof.analyze(a.toarray(), hw="a100").to_dict()["matrices"][0][
        "results"][0]["bound"]["sol_s"]
    assert len(set(sols.values())) == 1 and next(iter(sols.values())) > 0, sols


def test_api_and_command_line_give_the_same_document() -> None:
    path = DATA / "lap2d_64.mtx"
    api = sparsroof.analyze(str(path), hw="v100-sxm2", kernel="spmm", d="1,16",
                            storage="csr,ell").to_dict()
    result = CliRunner().invoke(cli, ["analyze", str(path), "--hw", "v100-sxm2", "--kernel",
                                      "spmm", "--d", "1,16", "--storage", "csr,ell",
                                      "-O", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == json.loads(json.dumps(api))


def test_a_matrix_a_path_and_scipy_agree() -> None:
    path = DATA / "lap2d_64.mtx"
    m = sparsroof.load(path)
    from_scipy = sparsroof.Matrix.from_scipy(
        sp.coo_array((m.values, (m.row, m.col)), shape=m.shape), name="lap")
    sol = {kind: sparsroof.analyze(x, hw="a100").results[0].bound.sol_s
           for kind, x in (("path", path), ("matrix", m), ("scipy", from_scipy))}
    assert len(set(sol.values())) == 1, sol


def test_classify_and_load_spec() -> None:
    verdict = sparsroof.classify(DATA / "lap2d_64.mtx")
    assert verdict.label == "banded" and verdict.params["diagonals"] == 5
    assert sparsroof.load_spec("a100").name == "a100-80gb"


def test_options_are_checked() -> None:
    m = sparsroof.Matrix.from_scipy(np.eye(8))
    with pytest.raises(sparsroof.OptionError, match="unknown option 'widht'"):
        sparsroof.analyze(m, widht=4)
    with pytest.raises(sparsroof.OptionError, match="unknown choice 'csrr'"):
        sparsroof.analyze(m, storage="csrr")
    with pytest.raises(sparsroof.OptionError, match="either a Config or options"):
        sparsroof.analyze(m, config=sparsroof.Config(), kernel="spmm")


#: (API keywords, CLI arguments, the API's message, the command line's) for one bad option
OPTION_WORDING = [
    ({"d": 0}, ["--d", "0"], "d: widths must be whole numbers from 1 to 1,048,576",
     "--d: widths must be whole numbers from 1 to 1,048,576"),
    ({"d": "1,x"}, ["--d", "1,x"], "d: 'x' is not a whole number",
     "--d: 'x' is not a whole number"),
    ({"kernel": "spmv", "d": 8}, ["--kernel", "spmv", "--d", "8"],
     "d: spmv multiplies by one vector (d = 1); for wider B use kernel='spmm'",
     "--d: spmv multiplies by one vector (d = 1); for wider B use --kernel spmm"),
    ({"storage": "csrr"}, ["--storage", "csrr"],
     "storage: unknown choice 'csrr'; did you mean 'csr'?",
     "--storage: unknown choice 'csrr'; did you mean 'csr'?"),
    ({"model": "nah"}, ["--model", "nah"], "model: unknown choice 'nah'",
     "--model: unknown choice 'nah'"),
    ({"ranks": "2,0"}, ["--ranks", "2,0"],
     "ranks: rank counts must be whole numbers from 1 to 16,777,216",
     "--ranks: rank counts must be whole numbers from 1 to 16,777,216"),
    ({"reorder": "rcm", "model": "compulsory"}, ["--reorder", "rcm", "--model", "compulsory"],
     "reorder compares the cache-aware model: keep auto or cache-aware in model",
     "--reorder compares the cache-aware model: keep auto or cache-aware in --model"),
    ({"dtype": "int8", "unit": "simt", "model": "compulsory"},
     ["--dtype", "int8", "--unit", "simt", "--model", "compulsory"],
     "try dtype='fp32' or unit='tensor'", "try --dtype fp32 or --unit tensor"),
]


@pytest.mark.parametrize("keywords,arguments,api_says,cli_says", OPTION_WORDING)
def test_option_errors_speak_the_api_and_the_command_line_each_in_its_words(
        capsys: pytest.CaptureFixture[str], keywords: dict[str, object],
        arguments: list[str], api_says: str, cli_says: str) -> None:
    """The API names its parameters (d, calls_per_sync, kernel='spmm'); the command line
    says the same with its flags (--d, --calls-per-sync, --kernel spmm)."""
    with pytest.raises(sparsroof.SparsroofError) as err:
        sparsroof.analyze(DATA / "lap2d_64.mtx", hw="a100", cache=False, **keywords)
    message = str(err.value)
    assert api_says in message and "--" not in message, message
    code = run_guarded(cli, ["analyze", str(DATA / "lap2d_64.mtx"), "--no-cache",
                             *arguments])
    err_text = capsys.readouterr().err
    assert code == 2 and err_text.count("\n") == 1 and cli_says in err_text, err_text


def test_from_scipy_refuses_what_is_not_a_matrix() -> None:
    with pytest.raises(sparsroof.MatrixFileError, match="2 dimensions"):
        sparsroof.Matrix.from_scipy(np.ones((2, 2, 2)))


def test_the_readme_python_example_runs() -> None:
    import re
    import subprocess
    import sys

    root = DATA.parent
    readme = (root / "README.md").read_text()
    block = re.search(r"## Python API.*?```python\n(.*?)```", readme, re.S)
    assert block, "the README has no Python API example"
    run = subprocess.run([sys.executable, "-c", block.group(1)], cwd=root,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    sol, bound_kind, total = run.stdout.splitlines()[0].split()
    assert float(sol) > 0 and bound_kind in ("memory", "compute", "launch")
    assert float(total) > 2000 * 2000 * 0.01 * 8  # ELL's values and more, at d = 16


def test_the_notebook_api() -> None:
    """A short repr and an HTML table, records and (with pandas) a frame, several specs in
    one call on one measurement, a name for an in-memory matrix, and one call to draw."""
    a = sparsroof.analyze(sp.eye(64, format="csr"), hw="a100", name="eye64",
                          model="compulsory,random")
    text = repr(a)
    assert len(text) < 200 and text.startswith("<Analysis eye64 64 x 64, 64 entries")
    assert "fastest csr" in text and "(launch)" in text
    page = a._repr_html_()
    assert page.count("<tr>") == 1 + len(a.results) and "&lt;Analysis eye64" in page
    rows = a.to_records()
    assert [r["matrix"] for r in rows] == ["eye64"] * 2
    assert {r["model"] for r in rows} == {"compulsory", "random"}
    both = sparsroof.analyze(sp.eye(64, format="csr"), hw=["a100", "h100-sxm"])
    assert [x.spec for x in both] == ["a100-80gb", "h100-sxm"]
    with pytest.raises(sparsroof.OptionError, match=r"hw='a100,h100-sxm': give several "
                       r"specs as a list, e.g. hw=\['a100', 'h100-sxm'\]"):
        sparsroof.analyze(sp.eye(4), hw="a100,h100-sxm")
    fig = sparsroof.draw(a)
    assert "A100" in fig.axes[0].get_title() and fig.axes[0].get_xscale() == "log"
    with pytest.raises(sparsroof.FigureError, match="one spec at a time"):
        sparsroof.draw(both)
    assert all(issubclass(getattr(sparsroof, n), sparsroof.SparsroofError)
               for n in sparsroof.__all__ if n.endswith("Error"))


def test_every_public_name_has_a_docstring() -> None:
    aliases = {"MatrixLike"}  # a type alias: documented where it is defined
    undocumented = [n for n in sparsroof.__all__ if n not in {"__version__", *aliases}
                    and not (getattr(sparsroof, n).__doc__ or "").strip()]
    assert undocumented == []


def test_the_api_page_examples_run() -> None:
    """docs/api.md's Python blocks, one script in the order shown (the later blocks use
    the earlier ones' names): each prints what its comments say."""
    import re
    import subprocess
    import sys

    root = DATA.parent
    blocks = re.findall(r"```python\n(.*?)```", (root / "docs" / "api.md").read_text(), re.S)
    assert len(blocks) >= 2
    run = subprocess.run([sys.executable, "-c", "\n".join(blocks)], cwd=root,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[2] == "True True"                 # the coordinates-only load
    assert lines[-2].split()[1:] == ["launch", "L2"]  # bound(): one launch, held in L2
    assert lines[-1] == "1.3e-06 5.2 ok False"     # judge(): 25 us against 1.3 us
