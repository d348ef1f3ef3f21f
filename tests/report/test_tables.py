"""Tables fit a 100-column terminal: no line past column 100, never an ellipsis, and the
analysis table word for word against a golden copy (colour off)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from sparsroof.analysis import Config, analyze
from sparsroof.hardware.library import bundled_names, load_spec
from sparsroof.matrix.mtx import load
from sparsroof.report.analysis import CORE_COLUMNS, to_table
from sparsroof.report.hardware import list_table

from ..conftest import DATA

GOLDEN = Path(__file__).parents[1] / "golden"


def render(table: Any, width: int = 100) -> str:
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=width, no_color=True, highlight=False,
            force_terminal=False).print(table)
    return out.getvalue()


def fits(text: str, width: int = 100) -> None:
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width


def test_the_default_analysis_table_matches_its_golden_copy() -> None:
    a = analyze(load(DATA / "lap2d_64.mtx"), load_spec("a100"), Config())
    text = render(to_table(a))
    fits(text)
    assert text == (GOLDEN / "analyze_lap2d_64_a100.txt").read_text()


def test_every_default_column_is_shown_for_every_format_and_model() -> None:
    a = analyze(load(DATA / "random_1000.mtx"), load_spec("a100"),
                Config.from_options(kernel="spmm", d="1,64", storage="all", model="all"))
    text = render(to_table(a))
    fits(text)
    header = next(line for line in text.splitlines() if "SoL" in line)
    assert header.split() == " ".join(c for c in CORE_COLUMNS if c != "hw").split()
    wide = render(to_table(a, wide=True), width=250)
    assert "x dense" in wide and "roof" in wide and "…" not in wide


def test_several_specs_compare_in_one_table() -> None:
    m = load(DATA / "lap2d_64.mtx")
    group = [analyze(m, load_spec(name), Config()) for name in ("a100", "h100-sxm", "mi300x")]
    text = render(to_table(group))
    fits(text)
    rows = [line.split()[0] for line in text.splitlines()
            if line.split() and line.split()[0] in ("a100-80gb", "h100-sxm", "mi300x")]
    assert rows.count("a100-80gb") == rows.count("mi300x") == len(group[0].results)


@pytest.mark.parametrize("wide", [False, True])
def test_hw_list_fits_and_wide_adds_the_device(wide: bool) -> None:
    specs = [load_spec(n) for n in bundled_names()]
    text = render(list_table(specs, wide), width=250 if wide else 100)
    if not wide:
        fits(text)
    assert ("NVIDIA" in text) == wide
    assert all(s.name in text for s in specs)


def test_the_rank_table_fits_and_says_what_its_model_holds() -> None:
    """The per-rank table is a fitted table; its note says that the Ridgeline terms carry
    the device's caches and launch floor, so that its P = 1 row is the single-device row
    above it (launch-bound here, as that one is)."""
    from sparsroof.report.analysis import to_ranks_table

    a = analyze(load(DATA / "lap2d_64.mtx"), load_spec("a100"), Config.from_options(ranks="1,2"))
    text = render(to_ranks_table(a))
    fits(text)
    assert [line.split()[:2] for line in text.splitlines() if line[:1].isdigit()] == [
        ["1", "1"], ["1", "2"]]
    assert "P = 1 is the single-device CSR bound" in " ".join(text.split())
    assert "and its launch floor" in " ".join(text.split())
    single = render(to_table(a))
    assert "launch" in single  # the device bound above it is launch-bound
    assert a.distributed[0].bound == "launch"


def test_a_footnote_explains_only_columns_that_are_shown() -> None:
    specs = [load_spec(n) for n in ("a100", "h100-sxm")]
    assert "sparse = " not in render(list_table(specs), width=250)
    assert "sparse = " in render(list_table(specs, wide=True), width=250)


def test_classify_gives_each_reason_a_line_under_the_table() -> None:
    """A reason is a sentence: in a column it folded to a dozen lines of a few words."""
    from sparsroof.report.classify import classify_table as _table
    from sparsroof.structure.classify import classify
    from sparsroof.structure.features import measure

    results = []
    for name in ("lap2d_64", "random_1000"):
        s = measure(load(DATA / f"{name}.mtx"))
        results.append((name, name, s, classify(s)))
    text = render(_table(results))
    fits(text)
    lines = text.splitlines()
    assert "why lap2d_64: banded: every entry on 5 diagonals, 99% full" in lines
    rows = [line for line in lines if line.startswith(("lap2d_64", "random_1000"))]
    assert len(rows) == 2 and "bandwidth=64" in rows[0] and "density=" in rows[1]


@pytest.mark.parametrize("timing", ["graph", "cold"])
def test_the_roof_marks_a_working_set_the_caches_hold_in_part(timing: str) -> None:
    """The dense product of the Laplacian moves 134 MB; the A100's 40 MiB L2 holds part of
    it, so main memory binds but is charged less than the bytes ('+'), while the CSR rows
    fit the L2 ('*'). Timed cold, no cache is credited: neither mark."""
    a = analyze(load(DATA / "lap2d_64.mtx"), load_spec("a100"),
                Config.from_options(storage="csr,dense", model="compulsory", timing=timing))
    roofs = {r.traffic.storage: r for r in a.results}
    dense = roofs["dense"].bound
    assert dense.memory_level == "HBM2e"
    assert (dense.memory_s * dense.bandwidth < roofs["dense"].traffic.bytes_total) == \
        (timing != "cold")
    lines = render(to_table(a, wide=True), width=250).splitlines()
    dense_line = next(line for line in lines if line.split()[1:2] == ["dense"])
    csr_line = next(line for line in lines if line.split()[1:2] == ["csr"])
    if timing == "cold":
        assert "HBM2e+" not in dense_line and "*" not in csr_line
    else:
        assert "/ HBM2e+" in dense_line and "/ L2*" in csr_line


def test_a_long_label_wraps_into_more_lines_rather_than_cut_a_number() -> None:
    """A label may take two lines a cell; where even so a part of the folded table would
    not fit (a long name among the key columns), the labels wrap at every word instead,
    and no number or name is cut."""
    from sparsroof.report.tables import fitted_table

    name = "spmv latency budget of the production pressure solver on the big cluster nodes"
    traits = " ".join(f"word{k:02d}" for k in range(30))
    table = fitted_table(["matrix", "n", "traits", "x"], [[name, "12345", traits, "9.99"]],
                         left=("matrix", "traits"))
    text = render(table, width=80)
    fits(text, 80)
    words = text.split()
    assert {"12345", "9.99", "word09", "word29", "pressure"} <= set(words), text
    # the same table, wide enough, keeps each label in two lines at most
    assert render(table, width=400).count("\n") <= 4


@pytest.mark.parametrize("width", [80, 100])
def test_wide_key_columns_repeat_only_as_far_as_the_parts_have_room(width: int) -> None:
    """A store's table keyed by a long matrix name, its class, spec, kernel, width,
    format and model: repeating every key in each part would leave no room for a number,
    so the parts repeat the first keys only, and every figure is printed whole."""
    from sparsroof.report.tables import fitted_table

    headers = ["matrix", "class", "spec", "kernel", "d", "format", "model", "AI F/B",
               "attainable", "of peak", "bound"]
    names = ["body_encoder_layer_2_ffn_conv1_fully_connected", "Groebner_id2003_aug"]
    rows = [[n, "unstructured-pruned", "a100-80gb", "spmv", "1", "csr", "cache-aware",
             "0.0988", f"{k + 1}61 GFLOP/s", "1.66%", "launch"] for k, n in enumerate(names)]
    table = fitted_table(headers, rows, left=("matrix", "class", "spec", "kernel", "format",
                                              "model", "bound"))
    text = render(table, width)
    fits(text, width)
    assert {"0.0988", "161", "261", "1.66%", "unstructured-pruned", "cache-aware"} \
        <= set(text.split()), text
    words = text.split()
    for name in names:  # whole, or a name over 30 characters in two even halves
        assert name in words or any(a + b == name and abs(len(a) - len(b)) <= 1
                                    for a in words for b in words), (name, text)
    parts = text.count("columns ")
    assert 2 <= parts <= 4
    first = names[0][:(len(names[0]) + 1) // 2]  # whole or in halves: its first half
    assert text.count(first) == parts  # the matrix, the first key, in every part
