"""The library called as its docstrings invite: what analyze takes, measure takes too;
names a function does not know are usage errors naming the parameter, never a KeyError;
one result is picked by name; a Matrix goes back to scipy."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import sparsroof
from sparsroof.analysis import Config
from sparsroof.compare.runs import MeasuredRun
from sparsroof.errors import OptionError

DATA = Path(__file__).resolve().parents[2] / "data"
LAP = str(DATA / "lap2d_64.mtx")


def test_measure_takes_a_path_a_scipy_matrix_and_a_matrix_alike() -> None:
    by_path = sparsroof.measure(LAP)
    loaded = sparsroof.load(LAP)
    same = repr(by_path)  # repr: a feature left unmeasured is NaN, unequal to itself
    assert same == repr(sparsroof.measure(loaded)) == repr(sparsroof.measure(loaded.to_scipy()))
    assert same == repr(sparsroof.analyze(LAP, hw="a100").structure)
    assert (by_path.rows, by_path.bandwidth) == (4096, 64)


@pytest.mark.parametrize(("change", "named"), [
    ({"storage": "CSR"}, "storage: unknown choice 'CSR'; did you mean 'csr'?"),
    ({"dtype": "float64"}, "dtype: unknown choice 'float64'"),
    ({"model": "optimistic"}, "model: unknown choice 'optimistic'"),
    ({"kernel": "gemm"}, "kernel: unknown choice 'gemm'"),
    ({"index": "int16"}, "index: unknown choice 'int16'"),
    ({"width": 0}, "width: a whole number of columns of B, at least 1 .not 0."),
    ({"width": True}, "width: a whole number"),
    ({"width": 16}, "spmv multiplies one vector"),
])
def test_traffic_names_what_it_does_not_know(change: dict[str, object], named: str) -> None:
    s = sparsroof.measure(LAP)
    options = {"kernel": "spmv", "width": 1, "storage": "csr", "model": "compulsory",
               "dtype": "fp64", "index": "int32", **change}
    with pytest.raises(OptionError, match=named):
        sparsroof.traffic(s, **options)  # type: ignore[arg-type]


def test_traffic_by_hand() -> None:
    """CSR of the 4,096-row Laplacian (20,224 entries), fp64 and int32: values and column
    indices 12 bytes an entry, 4,097 row pointers; x read once, y written once."""
    s = sparsroof.measure(LAP)
    t = sparsroof.traffic(s, kernel="spmv", width=1, storage="csr", model="compulsory",
                          dtype="fp64", index="int32")
    assert t is not None and s.stored_entries == 20224
    assert t.bytes_a == 20224 * 12 + 4097 * 4
    assert (t.bytes_b, t.bytes_c, t.flops_useful) == (4096 * 8, 4096 * 8, 2 * 20224)


def test_config_refuses_text_where_it_holds_several_values() -> None:
    with pytest.raises(OptionError, match=r"storages='csr': give a tuple such as "
                                          r"\('csr', 'ell'\), or Config.from_options"):
        Config(storages="csr")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match=r"widths='1,16'.*from_options\(d='1,16'\)"):
        Config(kernel="spmm", widths="1,16")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="widths=.True,.: whole numbers only"):
        Config(widths=(True,))
    listed = Config(kernel="spmm", widths=[1, 16])  # type: ignore[arg-type]
    assert listed.widths == (1, 16) and hash(listed) == hash(Config(kernel="spmm",
                                                                    widths=(1, 16)))


def test_a_list_of_paths_is_not_a_matrix() -> None:
    with pytest.raises(OptionError, match="2 matrices given where one is taken"):
        sparsroof.analyze([LAP, str(DATA / "random_1000.mtx")], hw="a100")


@pytest.mark.parametrize("seconds", [0.0, -1e-6, float("nan"), float("inf")])
def test_a_measured_run_made_in_code_needs_a_positive_time(seconds: float) -> None:
    with pytest.raises(OptionError, match="mine: time_s is .*expected a positive number"):
        MeasuredRun("mine", LAP, seconds)


def test_one_result_by_format_width_and_role() -> None:
    a = sparsroof.analyze(sp.random(2000, 2000, density=0.01, format="csr", random_state=0),
                          hw="a100", kernel="spmm", d="1,16", storage="csr,ell")
    r = a.result("ell", d=16, role="class")
    assert (r.traffic.storage, r.traffic.width, r.role) == ("ell", 16, "class")
    assert a.verdict is not None and a.verdict.label == "random"
    assert r.traffic.model == "random"  # the random class's own model
    assert a.result("csr", d=1, model="compulsory") in a.results
    with pytest.raises(OptionError, match="results match storage='ell'; narrow them by d or "
                                          "model or role"):
        a.result("ell")
    with pytest.raises(OptionError, match=r"no result matches storage='bsr4' \(this "
                                          r"analysis has storage: csr, ell\)"):
        a.result("bsr4")


def test_a_matrix_goes_back_to_scipy() -> None:
    a = sp.random(50, 40, density=0.1, format="csr", random_state=1)
    back = sparsroof.Matrix.from_scipy(a).to_scipy()
    assert back.shape == (50, 40) and np.array_equal(back.toarray(), a.toarray())
    pattern = sparsroof.load(LAP, values=False).to_scipy()
    assert pattern.nnz == 20224 and set(np.unique(pattern.data)) == {1.0}
    assert (pattern @ pattern).max() > 1  # ones that add up (int8 ones had overflowed)


def test_draw_takes_any_iterable_and_names_a_bad_size_or_kind() -> None:
    a = sparsroof.analyze(np.eye(64), hw="a100", model="compulsory")
    b = sparsroof.analyze(np.eye(32), hw="a100", model="compulsory")
    fig = sparsroof.draw(x for x in (a, b))
    assert len(fig.axes[0].collections) + len(fig.axes[0].lines) > 2
    for size in ("4x3", (0, 3), (8,), (True, 3), (101, 5)):
        with pytest.raises(sparsroof.FigureError, match=r"give \(width, height\) in inches"):
            sparsroof.draw(a, size=size)  # type: ignore[arg-type]
    with pytest.raises(sparsroof.FigureError, match="a ridgeline is drawn into a file"):
        sparsroof.draw(a, kind="ridgeline")
    with pytest.raises(sparsroof.FigureError, match="draw takes analyses, not int"):
        sparsroof.draw([a, 3])


def test_no_spec_is_no_analysis() -> None:
    with pytest.raises(OptionError, match=r"hw=\[\]: name at least one spec"):
        sparsroof.analyze(np.eye(4), hw=[])


def test_widths_are_whole_numbers_in_any_container() -> None:
    """d takes text, a number, a list, a range or an array; True is not a width (it had
    been read as 1)."""
    for d in ("1,16", [1, 16], range(1, 17, 15), np.array([1, 16])):
        a = sparsroof.analyze(np.eye(8), hw="a100", kernel="spmm", d=d)  # type: ignore[arg-type]
        assert sorted({r.traffic.width for r in a.results}) == [1, 16], d
    with pytest.raises(OptionError, match="d: True is not a whole number"):
        sparsroof.analyze(np.eye(8), hw="a100", kernel="spmm", d=True)


def test_runs_are_judged_on_a_spec_object_as_on_its_name() -> None:
    from sparsroof.compare.judge import judge

    runs = [MeasuredRun("x:1", LAP, 5e-6), MeasuredRun("x:2", LAP, 1e-9)]
    by_name, _ = judge(runs, "a100")
    by_spec, _ = judge(runs, sparsroof.load_spec("a100"))
    assert [j.bound.sol_s for j in by_spec] == [j.bound.sol_s for j in by_name]
    assert [j.violation for j in by_spec] == [False, True]
    with pytest.raises(OptionError, match="hw: one spec"):
        judge(runs, ["a100", "h100-sxm"])  # type: ignore[arg-type]


@pytest.mark.parametrize("call, named", [
    (lambda: sparsroof.analyze(np.eye(10), launches=1.5),
     "launches is 1.5, expected a whole number"),
    (lambda: sparsroof.analyze(np.eye(10), cache_roof="no"),
     "cache_roof is the string 'no', expected true or false"),
    (lambda: sparsroof.analyze(np.eye(10), cache_roof=np.array([1, 4])),
     "cache_roof is ndarray, expected true or false"),
    (lambda: sparsroof.analyze(np.eye(10), timing="sync", calls_per_sync=float("nan")),
     "calls_per_sync is NaN, expected a whole number"),
    (lambda: sparsroof.Config(dtype=["fp64"]), "dtype is a list, expected text"),
    (lambda: sparsroof.analyze(np.eye(10), config=1), "config: a Config"),
    (lambda: sparsroof.analyze(np.eye(10), name=["x"]), "name: a text"),
    (lambda: sparsroof.load(np.eye(3)), "not a path: load reads a file"),
    (lambda: sparsroof.peek(None), "not a path: peek reads a file"),
    (lambda: sparsroof.load(LAP, max_memory=float("inf")),
     "max_memory is infinite, expected a positive number"),
    (lambda: sparsroof.draw(sparsroof.analyze(np.eye(10)), dpi=0),
     "dpi is 0, expected a whole number from 30 to 1200"),
    (lambda: sparsroof.analyze(sp.coo_array((1, 2**40))),
     "too large to measure: its 1 x 1,099,511,627,776 shape, with 0 entries, needs about"),
    (lambda: MeasuredRun("r", LAP, 1e-5, timing="sync", calls_per_sync=0),
     "r: calls_per_sync is 0, expected a whole number"),
    (lambda: MeasuredRun("r", None, 1e-5), "r: matrix is null, expected a path"),
])
def test_the_api_answers_in_its_own_errors(call: object, named: str) -> None:
    """Values of the wrong kind name the parameter in a SparsroofError (they had raised
    TypeError, ValueError, AttributeError, OverflowError or MemoryError)."""
    with pytest.raises(sparsroof.SparsroofError, match=re.escape(named)):
        call()  # type: ignore[operator]


def test_options_as_a_person_writes_them() -> None:
    """Numbers as text, as the command line gives them, and numpy's scalars."""
    c = sparsroof.Config.from_options(launches="3", timing="sync", calls_per_sync="2",
                                      reuse_factor="0.5", cache_roof=np.bool_(False))
    assert (c.launches, c.calls_per_sync, c.reuse_factor, c.cache_roof) == (3, 2, 0.5, False)
    a = sparsroof.analyze(np.eye(50), hw="a100")
    assert a.result("csr", model="optimistic").traffic.model == "compulsory"


def test_a_zero_working_set_leaves_the_bytes_to_the_fastest_level() -> None:
    """footprint=0 had charged no level at all (a bound without a memory term)."""
    s = sparsroof.measure(sp.random(2000, 2000, density=0.05, random_state=0))
    t = sparsroof.traffic(s, kernel="spmm", width=16, storage="csr", model="compulsory",
                          dtype="fp64", index="int32")
    assert t is not None
    none = sparsroof.bound(t, "a100", unit="simt", precision="fp64", launches=0, footprint=0)
    tiny = sparsroof.bound(t, "a100", unit="simt", precision="fp64", launches=0, footprint=1)
    assert none.memory_s == tiny.memory_s == pytest.approx(t.bytes_total / 5.5e12)
    assert none.memory_level == "L2"
    with pytest.raises(OptionError, match="spec: one spec"):
        sparsroof.bound(t, None, unit="simt", precision="fp64")  # type: ignore[arg-type]
