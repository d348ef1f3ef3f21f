"""Tables for people: they fit the terminal, and a number is never cut.

Text columns (names, labels) may wrap at spaces, never inside a word, a label into two
lines at most (free text, such as a source, as far as it must); number columns never
wrap, and are never narrower than their widest cell, so a squeezed table wraps its words
instead of printing ``…`` inside a figure or a name. A table too wide for the terminal, even
so, folds into column groups rather than overflowing; a column marked spare is left out
instead (and the caption says so) where that alone spares the fold. Each table has a
default set of columns and shows every column with ``wide``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import cache
from typing import Any

__all__ = ["FittedTable", "Prose", "fitted_table", "pick", "without_widow"]


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
                    yield Text(without_widow(str(title), options.max_width),
                               style="table.title")
                yield from super().__rich_console__(console, options)
                if caption:
                    yield Text(without_widow(str(caption), options.max_width),
                               style="table.caption")
            finally:
                self.title, self.caption = title, caption

    return NotesTable


def without_widow(text: str, width: int) -> str:
    """``text`` wrapped at spaces to ``width``, each paragraph's last line holding more than
    one word where a slightly narrower wrap gives it two (a lone word under a block of
    notes reads as a stray); unchanged where it fits on one line.

    >>> print(without_widow("a note that ends in a word", 22))
    a note that ends in
    a word
    >>> without_widow("short", 80)
    'short'
    """
    import textwrap

    lines = []
    for paragraph in text.split("\n"):
        wrapped = textwrap.wrap(paragraph, width, break_long_words=False,
                                break_on_hyphens=False) or [""]
        narrower = width
        while (len(wrapped) > 1 and len(wrapped[-1].split()) == 1
               and narrower > max(width * 3 // 4, 1)):
            narrower -= 1
            retry = textwrap.wrap(paragraph, narrower, break_long_words=False,
                                  break_on_hyphens=False)
            if len(retry) == len(wrapped):
                wrapped = retry
        lines += wrapped
    return "\n".join(lines)


class Prose:
    """A line of prose for a rich console, wrapped when printed at the console's width
    by :func:`without_widow` (no stray last word, no trailing space)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        yield Text(without_widow(self.text, options.max_width))


def pick(headers: Sequence[str], core: Collection[str], wide: bool) -> list[int]:
    """The positions of the columns to show: every one when ``wide``, else those in ``core``.

    >>> pick(["a", "b", "c"], {"a", "c"}, wide=False), pick(["a", "b", "c"], {"a"}, wide=True)
    ([0, 2], [0, 1, 2])
    """
    return [i for i, h in enumerate(headers) if wide or h in core]


#: the space between two columns of these tables (a divider and the collapsed padding)
_GAP = 2
#: the longest word of free text (sources, notes: a file name, a commit, an address) that
#: is kept whole; the table folds into column groups rather than break it. Only a longer
#: word folds, since no terminal of 80 columns beside a key column could hold it.
_PROSE_WORD = 60
#: the most lines a cell of a label column (not free text) wraps into before the table
#: folds into column groups instead
_LABEL_LINES = 2
#: short identifying columns a table repeats in every column group, beside its text keys
_KEY_NUMBERS = ("d", "x", "n", "row", "P", "sparsity")
#: the longest word of a label (a matrix's or a check's name) kept on one line; a longer
#: one may break over two lines, so that one long name does not fold a table into parts
#: that repeat it beside a column or two each
_WHOLE_WORD = 30


def _label_word(word: str) -> int:
    """The width a label's word needs: whole up to :data:`_WHOLE_WORD` characters, else
    half of it (two lines).

    >>> _label_word("bcsstk13"), _label_word("x" * 31), _label_word("x" * 58)
    (8, 16, 29)
    """
    n = len(word)
    return n if n <= _WHOLE_WORD else -(-n // _LABEL_LINES)


def _stack(header: str, width: int) -> str:
    r"""A header's words on as few lines of at most ``width`` as they go.

    >>> _stack("B+C sparse", 5), _stack("measured", 3)
    ('B+C\nsparse', 'measured')
    """
    lines: list[str] = []
    for word in header.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _wrapped(line: str, width: int) -> int:
    """How many lines ``line`` takes wrapped at spaces within ``width``, a word longer than
    ``width`` starting a line of its own and cut every ``width`` characters (as the
    console folds it).

    >>> _wrapped("a bb ccc", 4), _wrapped("a " + "x" * 9, 4), _wrapped("", 3)
    (2, 4, 1)
    """
    count, used = 1, -1
    for word in line.split():
        n = len(word)
        if used >= 0 and used + 1 + n <= width:
            used += 1 + n
            continue
        taken = max(1, -(-n // width))  # the lines the word fills
        count += taken - (1 if used < 0 else 0)
        used = n - (taken - 1) * width
    return count


def _in_lines(lines: Sequence[str], least: int, natural: int, most: int = _LABEL_LINES
              ) -> int:
    """The narrowest width from ``least`` up in which every line of a label column wraps
    into at most ``most`` lines.

    >>> _in_lines(["simt fp64 / L2*"], 4, 15), _in_lines(["compulsory (optimistic)"], 12, 23)
    (9, 12)
    """
    width = least
    while width < natural and any(_wrapped(line, width) > most for line in lines):
        width += 1
    return width


def _undefined(caption: str | None, names: Sequence[str]) -> str | None:
    """``caption`` without the definitions (``"NAME = ..."``, between semicolons or
    sentences) of the columns ``names``, which the table leaves out.

    >>> _undefined("AI = FLOPs per byte; % peak = share of peak; --wide: all", ["% peak"])
    'AI = FLOPs per byte; --wide: all'
    >>> _undefined("specs: a100.  margin = headroom (negative fails)", ["margin"])
    'specs: a100.'
    """
    if not caption:
        return caption
    lines = []
    for line in caption.split("\n"):
        parts = re.split(r"(; |(?<=\.)  )", line) + [""]
        kept = [(text, gap) for text, gap in zip(parts[::2], parts[1::2], strict=True)
                if not any(text.startswith(f"{n} = ") for n in names)]
        if kept:
            lines.append("".join(text + gap for text, gap in kept[:-1]) + kept[-1][0])
    return "\n".join(lines)


class FittedTable:
    """A table that fits the console it is printed in, decided when it is printed.

    Numbers never wrap; text wraps at spaces, and a label's word of over
    :data:`_WHOLE_WORD` characters (a file's name) in two even halves. When the natural
    layout is too wide, text columns narrow (the widest first) down to their longest word;
    then number headers stack their words; and when even that is too wide, the columns fold
    into groups, each a table of its own repeating the key columns (the leading text
    columns and short ids such as ``d``), so nothing is cut and no line overflows.
    """

    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[str]], *,
                 left: Collection[str], title: str | None, caption: str | None,
                 keep: Sequence[int], sections: Collection[int],
                 prose: Collection[str] = (), spare: Collection[str] = (),
                 keys: Collection[str] | None = None) -> None:
        self.headers, self.rows, self.left = list(headers), [list(r) for r in rows], left
        self.named = keys
        self.spare = [i for i in keep if headers[i] in spare]
        self.title, self.caption = title, caption
        self.keep, self.sections, self.prose = list(keep), set(sections), set(prose)
        self.natural: dict[int, int] = {}
        self.least: dict[int, int] = {}  # labels in two lines, numbers whole
        self.stacked: dict[int, int] = {}  # as least, number headers stacked
        self.word: dict[int, int] = {}  # a label at its longest word (a fallback)
        self.lines: dict[int, int] = {}  # a label in two lines a cell
        for i in self.keep:
            header, cells = self.headers[i], [r[i] for r in self.rows]
            lines = [line for c in cells for line in c.splitlines()] or [""]
            widest = max(len(line) for line in lines)
            self.natural[i] = max(len(header), widest)
            longest_word = max(len(w) for w in header.split()) if header.strip() else 0
            if header in left:
                words = [len(w) if header in prose else _label_word(w)
                         for line in lines for w in line.split()]
                self.least[i] = max([1, longest_word, *words])
                if header in prose:  # free text: only a word past any line may fold
                    self.least[i] = min(self.least[i], _PROSE_WORD)
                self.word[i] = self.least[i]
                if header not in prose:  # a label: two lines a cell, a row easy to read
                    self.least[i] = _in_lines(lines, self.least[i], self.natural[i])
                self.stacked[i] = self.lines[i] = self.least[i]
            else:
                self.least[i] = self.natural[i]
                self.stacked[i] = max(widest, longest_word, 1)

    def _keys(self, keep: Sequence[int]) -> list[int]:
        if self.named is not None:
            return [i for i in keep if self.headers[i] in self.named]
        keys = []
        for i in keep:
            if self.headers[i] not in self.left and self.headers[i] not in _KEY_NUMBERS:
                break
            keys.append(i)
        return keys[: max(1, len(keep) - 1)]

    def _fold_keys(self, keep: Sequence[int], width: int) -> list[int]:
        """The key columns every part of the table folded to ``width`` repeats: where
        they are wide (long names), only as many of the first as take at most two thirds
        of the width and leave room for the widest other column."""
        keys = self._keys(keep)
        rest = [i for i in keep if i not in keys]
        while len(keys) > 1 and rest and (
                3 * self._span(self.stacked, keys) > 2 * width or
                self._span(self.stacked, keys) + _GAP + max(self.stacked[i] for i in rest)
                > width):
            rest.insert(0, keys.pop())
        return keys

    @staticmethod
    def _span(widths: dict[int, int], columns: Sequence[int]) -> int:
        return sum(widths[i] for i in columns) + _GAP * (len(columns) - 1)

    def groups(self, width: int, keep: Sequence[int] | None = None) -> list[list[int]]:
        """The columns ``keep`` (by default the kept ones) in groups that fit ``width``
        (one group when all fit).

        >>> t = FittedTable(["name", "a", "b"], [["x y", "1234", "5678"]], left={"name"},
        ...                 title=None, caption=None, keep=[0, 1, 2], sections=())
        >>> t.groups(80), t.groups(10)
        ([[0, 1, 2]], [[0, 1], [0, 2]])
        """
        keep = self.keep if keep is None else keep
        if self._span(self.stacked, keep) <= width:
            return [list(keep)]
        keys = self._fold_keys(keep, width)
        rest = [i for i in keep if i not in keys]
        count = 0  # the fewest groups, filled in order (no fewer can hold the columns)
        group: list[int] = []
        for i in rest:
            if group and self._span(self.stacked, [*keys, *group, i]) <= width:
                group.append(i)
            else:
                count, group = count + 1, [i]
        return [[*keys, *g] for g in self._balanced(keys, rest, count, width)]

    def _balanced(self, keys: list[int], rest: list[int], count: int, width: int
                  ) -> list[list[int]]:
        """``rest`` cut in order into ``count`` groups that each fit ``width`` beside
        ``keys``, the widest group as narrow as it can be: no part of a folded table is
        left with one column the others had no room for."""
        Cost = tuple[int, int, int, tuple[int, ...]]
        never: Cost = (width + 10**9, 0, 0, ())

        @cache
        def best(start: int, parts: int) -> Cost:
            """(the widest group's span, the groups of one column, the sum of the spans'
            squares, the cuts) of rest[start:] in ``parts`` groups, the least of them in
            that order."""
            if parts == 1:
                span = self._span(self.stacked, [*keys, *rest[start:]])
                if span > width and start < len(rest) - 1:
                    return never
                return span, int(start == len(rest) - 1), span * span, ()
            found = never
            for end in range(start + 1, len(rest) - parts + 2):
                span = self._span(self.stacked, [*keys, *rest[start:end]])
                if span > width and end > start + 1:
                    break
                widest, alone, squares, cuts = best(end, parts - 1)
                found = min(found, (max(span, widest), alone + int(end == start + 1),
                                    squares + span * span, (end, *cuts)))
            return found

        edges = (0, *best(0, count)[3], len(rest))
        return [rest[a:b] for a, b in zip(edges, edges[1:], strict=False) if a < b]

    def layout(self, columns: Sequence[int], width: int
               ) -> tuple[dict[int, int] | None, bool]:
        """(the width of each column, None for the natural layout; whether number headers
        stack) for ``columns`` within ``width``."""
        if self._span(self.natural, columns) <= width:
            return None, False
        stack = self._span(self.least, columns) > width
        floor = self.stacked if stack else self.least
        widths = {i: (self.natural[i] if self.headers[i] in self.left else floor[i])
                  for i in columns}
        text = [i for i in columns if self.headers[i] in self.left]
        while self._span(widths, columns) > width:
            wider = [i for i in text if widths[i] > floor[i]]
            if not wider:  # even at their longest words: text folds inside a word (its
                # characters all kept), never a number
                wider = [i for i in text if widths[i] > 1]
                if not wider:
                    break
            # free text gives way first, then the widest column
            widest = max(wider, key=lambda i: (self.headers[i] in self.prose, widths[i]))
            widths[widest] -= 1
        for i in text:  # a label that wraps takes the narrowest width at which no cell
            # takes more lines: its lines even (a long name cut in halves, not before its
            # last letters)
            if widths[i] < self.natural[i] and self.headers[i] not in self.prose:
                lines = [self.headers[i]] + [line for r in self.rows
                                             for line in r[i].splitlines()]
                now = [_wrapped(line, widths[i]) for line in lines]
                narrow = min(self.word[i], widths[i])
                while narrow < widths[i] and any(
                        _wrapped(line, narrow) > n for line, n in zip(lines, now, strict=True)):
                    narrow += 1
                widths[i] = narrow
        return widths, stack

    def _table(self, columns: Sequence[int], width: int, title: str | None,
               caption: str | None) -> Any:
        from rich import box

        widths, stack = self.layout(columns, width)
        table = _wide_notes_table()(title=title, caption=caption, box=box.SIMPLE_HEAD,
                                    show_edge=False, pad_edge=False, collapse_padding=True)
        for i in columns:
            header = self.headers[i]
            fixed = widths[i] if widths else None
            if header in self.left:
                table.add_column(header, justify="left", overflow="fold", width=fixed)
            else:
                shown = _stack(header, self.stacked[i]) if stack else header
                table.add_column(shown, justify="right", no_wrap=True, width=fixed,
                                 min_width=self.stacked[i] if stack else self.least[i])
        for n, row in enumerate(self.rows):
            if n in self.sections and n:
                table.add_section()
            table.add_row(*(row[i] for i in columns))
        return table

    def spared(self, width: int) -> list[int]:
        """The spare columns to leave out at ``width``: all of them where that keeps the
        table in one group and it would fold otherwise, else none.

        >>> t = FittedTable(["name", "a", "b"], [["x y", "1234", "5678"]], left={"name"},
        ...                 title=None, caption=None, keep=[0, 1, 2], sections=(),
        ...                 spare={"b"})
        >>> t.spared(80), t.spared(10), t.spared(4)
        ([], [2], [])
        """
        if not self.spare or len(self.groups(width)) == 1:
            return []
        rest = [i for i in self.keep if i not in self.spare]
        return self.spare if self._span(self.stacked, rest) <= width else []

    def _words_at(self, width: int) -> None:
        """Let labels narrow to their longest word (rows of three lines and more) where at
        two lines a cell some part would not fit ``width`` even alone: the key columns
        and one more, or a long label, would then be cut."""
        for i in self.word:  # two lines a cell first, whatever an earlier width chose
            self.least[i] = self.stacked[i] = self.lines[i]
        if max(self._span(self.stacked, g) for g in self.groups(width)) > width:
            for i, w in self.word.items():
                self.least[i] = self.stacked[i] = w

    def __rich_console__(self, console: Any, options: Any) -> Any:
        width = options.max_width
        self._words_at(width)
        spared = self.spared(width)
        keep = [i for i in self.keep if i not in spared]
        caption = self.caption
        if spared:
            left_out = ", ".join(self.headers[i] for i in spared)
            caption = _undefined(caption, [self.headers[i] for i in spared])
            caption = ((caption + "\n") if caption else "") + (
                f"left out to fit {width} columns: {left_out} (a wider terminal shows it)")
        groups = self.groups(width, keep)
        keys = self._fold_keys(keep, width)
        for k, columns in enumerate(groups):
            title = self.title if k == 0 else None
            if len(groups) > 1:
                title = ((title + "\n") if title else "") + (
                    f"columns {k + 1} of {len(groups)}: "
                    f"{', '.join(self.headers[i] for i in columns if i not in keys)}")
            yield self._table(columns, width, title,
                              caption if k == len(groups) - 1 else None)


def fitted_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *,
                 left: Collection[str] = (), title: str | None = None,
                 caption: str | None = None, keep: Sequence[int] | None = None,
                 sections: Collection[int] = (), prose: Collection[str] = (),
                 spare: Collection[str] = (), keys: Collection[str] | None = None) -> Any:
    """A table of the columns at positions ``keep`` (all by default) that fits the console
    it is printed in (:class:`FittedTable`).

    Columns named in ``left`` are text, left-justified and wrapped at spaces when space
    runs out; the others are numbers, right-justified, never wrapped and at least as wide
    as their widest cell. A rule is drawn before each row index in ``sections``. Columns
    named in ``prose`` are free text (sources, notes) whose long words may fold. Columns
    named in ``spare`` are left out, with a line in the caption, where that alone keeps
    the table from folding. Columns named in ``keys`` are the ones that say what a row is,
    repeated in every part of a folded table (by default the leading text columns).
    """
    keep = list(range(len(headers))) if keep is None else list(keep)
    return FittedTable(headers, rows, left=left, title=title, caption=caption, keep=keep,
                       sections=sections, prose=prose, spare=spare, keys=keys)
