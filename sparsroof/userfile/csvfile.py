"""CSV tables of a user's: read a row at a time, with a bound on each row.

A row is a mapping of header name to cell (None where the row is short, the extra cells
as a list under the key None where it is long), with the line it ends on, as
``csv.DictReader`` gives it. No row may span more than :data:`MAX_ROW_CHARS` characters
(one line of a million commas would otherwise become a million cells), and the file is
never held whole: memory stays that of one row, whatever the file's size.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from ..units import binary
from .files import MAX_TEXT_BYTES, Fail, binary_kind, open_regular

__all__ = ["MAX_ROW_CHARS", "CsvTable", "iter_csv", "read_csv"]

#: most characters one row of a CSV table may span (its lines together)
MAX_ROW_CHARS = 1 << 20

Row = dict[Any, Any]


class CsvTable:
    """An open CSV file: ``header`` (names stripped of spaces) and, iterated, its rows
    as ``(line, row)``. Text the csv module refuses, text that is not UTF-8 and a row
    past :data:`MAX_ROW_CHARS` raise ``fail`` naming the line. Use it in a ``with``."""

    def __init__(self, path: str | Path, fail: Fail, limit: int | None = None) -> None:
        self.fail = fail
        handle = open_regular(path, fail)
        self._handle = handle
        self._row_chars = 0
        self._lines = 0
        self._reader = csv.reader(self._bounded_lines())
        try:
            size = os.fstat(handle.fileno()).st_size
            if limit is not None and size > limit:
                raise fail(f"is {binary(size)}, more than the {binary(limit)} a file of this "
                           "kind may hold")
            first = self._next()
        except BaseException:
            self.close()
            raise
        # a byte-order mark (spreadsheets write one) is not part of the first name
        self.header: list[str] = [name.strip().lstrip("\ufeff") for name in first or []]

    def _bounded_lines(self) -> Iterator[str]:
        while True:
            raw = self._handle.readline(MAX_ROW_CHARS + 1)
            if not raw:
                return
            self._lines += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                kind = binary_kind(raw) if self._lines == 1 else None
                raise self.fail(f"is {kind}, not text" if kind else
                                f"line {self._lines}: not UTF-8 text (byte "
                                f"0x{raw[err.start]:02X}): a binary file, or text in another "
                                "encoding") from None
            self._row_chars += len(line)
            if self._row_chars > MAX_ROW_CHARS:
                raise self.fail(f"line {self._lines}: a row longer than "
                                f"{binary(MAX_ROW_CHARS)}")
            yield line

    def _next(self) -> list[str] | None:
        self._row_chars = 0
        try:
            return next(self._reader, None)
        except csv.Error as err:
            raise self.fail(f"line {self._lines}: not a CSV table ({err})") from None

    def __iter__(self) -> Iterator[tuple[int, Row]]:
        width = len(self.header)
        while (cells := self._next()) is not None:
            if not cells:
                continue  # a blank line
            row: Row = dict(zip(self.header, cells, strict=False))
            if len(cells) < width:
                row.update((name, None) for name in self.header[len(cells):])
            elif len(cells) > width:
                row[None] = cells[width:]
            yield self._reader.line_num, row

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> CsvTable:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def iter_csv(path: str | Path, fail: Fail) -> CsvTable:
    r"""The CSV table at ``path``, open for reading a row at a time (any size).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text('a, b\n1,2\n3,4,5\n')
    >>> with iter_csv(p, ValueError) as table:
    ...     table.header, list(table)
    (['a', 'b'], [(2, {'a': '1', 'b': '2'}), (3, {'a': '3', 'b': '4', None: ['5']})])
    """
    return CsvTable(path, fail)


def read_csv(path: str | Path, fail: Fail, *, limit: int = MAX_TEXT_BYTES
             ) -> tuple[list[str], list[tuple[int, Row]]]:
    r"""The header of the CSV table at ``path`` and all its rows (a file of at most
    ``limit`` bytes: larger tables are read with :func:`iter_csv`). A short row holds
    None in its missing columns.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text('a, b\n1,"two\nlines"\n3\n')
    >>> read_csv(p, ValueError)
    (['a', 'b'], [(3, {'a': '1', 'b': 'two\nlines'}), (4, {'a': '3', 'b': None})])
    """
    with CsvTable(path, fail, limit) as table:
        return table.header, list(table)
