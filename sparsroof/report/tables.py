"""Tables for people: they fit the terminal, and a number is never cut.

Text columns (names, labels) may wrap; number columns never do, and are never narrower
than their widest cell, so a squeezed table wraps its words instead of printing ``…``
inside a figure. Each table has a default set of columns chosen to fit 100 columns and
shows every column with ``wide``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import cache
from typing import Any

__all__ = ["fitted_table", "pick"]


@cache
def _wide_notes_table() -> Any:
    """rich's Table, but with its title and caption as lines of their own, wrapped at the
    terminal's width, not the table's (a narrow table would fold its notes)."""
    from rich.table import Table
    from rich.text import Text

    class NotesTable(Table):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            title, caption = self.title, self.caption
            self.title = self.caption = None
            try:
                if title:
                    yield Text(str(title), style="table.title")
                yield from super().__rich_console__(console, options)
                if caption:
                    yield Text(str(caption), style="table.caption")
            finally:
                self.title, self.caption = title, caption

    return NotesTable


def pick(headers: Sequence[str], core: Collection[str], wide: bool) -> list[int]:
    """The positions of the columns to show: every one when ``wide``, else those in ``core``.

    >>> pick(["a", "b", "c"], {"a", "c"}, wide=False), pick(["a", "b", "c"], {"a"}, wide=True)
    ([0, 2], [0, 1, 2])
    """
    return [i for i, h in enumerate(headers) if wide or h in core]


def fitted_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *,
                 left: Collection[str] = (), title: str | None = None,
                 caption: str | None = None, keep: Sequence[int] | None = None,
                 sections: Collection[int] = ()) -> Any:
    """A rich Table of the columns at positions ``keep`` (all by default).

    Columns named in ``left`` are text, left-justified and wrapped when space runs out;
    the others are numbers, right-justified, never wrapped and at least as wide as their
    widest cell. A rule is drawn before each row index in ``sections``.
    """
    from rich import box

    keep = list(range(len(headers))) if keep is None else list(keep)
    table = _wide_notes_table()(title=title, caption=caption, box=box.SIMPLE_HEAD,
                                show_edge=False, pad_edge=False, collapse_padding=True)
    for i in keep:
        header = headers[i]
        if header in left:
            table.add_column(header, justify="left", overflow="fold")
        else:
            widest = max([len(header), *(len(row[i]) for row in rows)])
            table.add_column(header, justify="right", no_wrap=True, min_width=widest)
    for n, row in enumerate(rows):
        if n in sections and n:
            table.add_section()
        table.add_row(*(row[i] for i in keep))
    return table
