"""Folded tables: parts balanced, notes without a stray last word."""

from __future__ import annotations

from sparsroof.report.tables import FittedTable, without_widow


def test_a_folded_table_leaves_no_column_alone() -> None:
    """Four columns of 8 beside a key of 4 in 32 columns: filled in order the parts
    would be three columns and one; balanced they are two and two."""
    headers = ["key", "aaaaaaaa", "bbbbbbbb", "cccccccc", "dddddddd"]
    t = FittedTable(headers, [["k", "1", "2", "3", "4"]], left={"key"}, title=None,
                    caption=None, keep=[0, 1, 2, 3, 4], sections=())
    assert t.groups(34) == [[0, 1, 2], [0, 3, 4]]
    assert t.groups(100) == [[0, 1, 2, 3, 4]]
    # a part is never wider than the width it was cut for
    for width in range(14, 60):
        for group in t.groups(width):
            assert t._span(t.stacked, group) <= width or len(group) == 2


def test_notes_end_with_more_than_one_word() -> None:
    note = "AI = FLOPs per byte; % peak = share of the compute roof's peak; --wide: every column"
    for width in range(30, 90):
        lines = without_widow(note, width).splitlines()
        assert all(len(line) <= width for line in lines)
        assert " ".join(" ".join(lines).split()) == note
        if len(lines) > 1:
            assert len(lines[-1].split()) > 1, (width, lines)


def test_folds_are_the_narrowest_and_leave_no_column_alone_where_they_can() -> None:
    """Against every way to cut the columns into as many parts: the widest part is the
    narrowest any cut gives, and a column stands alone only where every such cut leaves
    one alone."""
    from itertools import combinations

    import numpy as np

    rng = np.random.default_rng(5)
    for _ in range(300):
        widths = rng.integers(3, 20, rng.integers(3, 9)).tolist()
        headers = ["key"] + [chr(97 + i) * w for i, w in enumerate(widths)]
        t = FittedTable(headers, [["k"] + ["1"] * len(widths)], left={"key"}, title=None,
                        caption=None, keep=list(range(len(headers))), sections=())
        width = int(rng.integers(25, 60))
        got = [g[1:] for g in t.groups(width)]
        if len(got) == 1:
            continue
        rest = list(range(1, len(headers)))
        cuts = []
        for inner in combinations(range(1, len(rest)), len(got) - 1):
            edges = (0, *inner, len(rest))
            parts = [rest[a:b] for a, b in zip(edges, edges[1:], strict=False)]
            spans = [t._span(t.stacked, [0, *p]) for p in parts]
            if all(s <= width or len(p) == 1 for s, p in zip(spans, parts, strict=True)):
                cuts.append((max(spans), sum(len(p) == 1 for p in parts)))
        widest = min(c[0] for c in cuts)
        assert max(t._span(t.stacked, [0, *g]) for g in got) == widest
        fewest_alone = min(c[1] for c in cuts if c[0] == widest)
        assert sum(len(g) == 1 for g in got) == fewest_alone, (widths, width, got)


def test_a_long_name_takes_two_even_lines_rather_than_fold_the_table() -> None:
    """A name of 58 characters beside four short columns in 80: cut in two halves it
    leaves room for them all; a name of 30 characters or fewer stays whole."""
    from rich.console import Console

    long = "layers.0.blocks.0.attn.proj_swin_tiny_unstructured_50.smtx"[:58]
    headers = ["matrix", "rows x cols", "entries", "class"]
    rows = [[long, "96 x 96", "4,608", "unstructured-pruned"],
            ["bcsstk13", "2,003 x 2,003", "83,883", "banded"]]
    t = FittedTable(headers, rows, left={"matrix", "class"}, title=None, caption=None,
                    keep=[0, 1, 2, 3], sections=())
    assert t.groups(80) == [[0, 1, 2, 3]]
    console = Console(width=80, record=True, color_system=None)
    console.print(t)
    words = console.export_text().split()
    halves = [w for w in words if len(w) > 9 and (long.startswith(w) or long.endswith(w))]
    assert "".join(halves) == long and abs(len(halves[0]) - len(halves[1])) <= 1
    short = FittedTable(headers, [["x" * 30, "1 x 1", "1", "banded"]], left={"matrix"},
                        title=None, caption=None, keep=[0, 1, 2, 3], sections=())
    assert short.least[0] == 30


def test_the_named_keys_are_repeated_whatever_their_place() -> None:
    """A table told which columns say what a row is repeats those in every part, not the
    leading text columns (here, a class that follows from the matrix)."""
    headers = ["matrix", "class", "spec", "aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"]
    row = ["m", "banded", "a100", "1", "2", "3"]
    t = FittedTable(headers, [row], left={"matrix", "class", "spec"}, title=None,
                    caption=None, keep=range(6), sections=(), keys=("matrix", "spec"))
    groups = t.groups(40)
    assert len(groups) > 1 and all(g[:2] == [0, 2] for g in groups), groups


def test_models_left_out_alike_are_said_in_one_line() -> None:
    """Every model but the compulsory one is left out of the dense format for one reason:
    one line names them all, not a line each."""
    from sparsroof.analysis import Config, analyze
    from sparsroof.matrix.mtx import load
    from sparsroof.model.traffic import MODELS
    from sparsroof.report.analysis import not_computed

    from ..conftest import DATA

    a = analyze(load(DATA / "lap2d_64.mtx"), "a100",
                Config(storages=("csr", "dense"), models=tuple(MODELS)), cache=False)
    lines = [line for line in not_computed(a) if "(dense)" in line]
    assert len(lines) == 1 and lines[0].startswith("not computed: random, banded"), lines
    assert "models (dense): a dense A multiplies every row of B" in lines[0]


def test_a_narrowed_label_takes_no_more_lines_than_it_must() -> None:
    """Narrowed to fit, a label column takes the narrowest width at which no cell takes
    more lines: "banded (class)" stays on one line beside "compulsory (optimistic)" on
    two."""
    t = FittedTable(["model", "n"], [["banded (class)", "1"], ["compulsory (optimistic)", "2"]],
                    left={"model"}, title=None, caption=None, keep=[0, 1], sections=())
    widths, _ = t.layout([0, 1], 19)
    assert widths is not None and widths[0] == 14
