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
