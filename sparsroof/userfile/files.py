"""Opening a user's file (regular files only, within a size limit) and reading its text
or JSON; writing one whole or not at all."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from ..units import binary

__all__ = ["MAX_NESTING", "MAX_TEXT_BYTES", "MAX_CONFIG_BYTES", "check_shape", "open_regular",
           "read_text", "read_json", "read_json_items", "replaced", "write_text_whole",
           "binary_kind"]

#: deepest nesting of brackets or indentation a user's file may have; the YAML and JSON
#: parsers recurse per level, and a deep enough file overflows their stack
MAX_NESTING = 100
#: largest JSON or text file read whole (saved results, runs, calibrations): parsed JSON
#: takes several times its text in memory. Larger tables are CSV, read a row at a time.
MAX_TEXT_BYTES = 64 << 20
#: largest spec, budget or manifest: hand-written files of a few kB (building the YAML
#: of a megabyte of values takes seconds)
MAX_CONFIG_BYTES = 1 << 20

_INDENT = 4 * MAX_NESTING
_LONG_NUMBER = re.compile(r"\d{1001}")
_DEEP_INDENT = re.compile(rf"^[ \t]{{{_INDENT + 1}}}", re.MULTILINE)

Fail = Callable[[str], Exception]


def _bracket_depth(text: str) -> int:
    import numpy as np

    brackets = np.frombuffer(re.sub(r"[^][{}]+", "", text).encode("ascii"), np.uint8)
    if not brackets.size:
        return 0
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def check_shape(text: str, fail: Fail) -> None:
    """Refuse text no spec, budget or results file has: nesting past
    :data:`MAX_NESTING` levels (brackets, or indentation past 400 columns) and numbers of
    more than 1,000 digits (Python refuses to convert them).

    >>> check_shape("a: [[1]]", ValueError)
    >>> check_shape("[" * 101 + "]" * 101, ValueError)
    Traceback (most recent call last):
    ...
    ValueError: nested more than 100 levels deep
    """
    if text.count("[") + text.count("{") > MAX_NESTING \
            and _bracket_depth(text) > MAX_NESTING:
        raise fail(f"nested more than {MAX_NESTING} levels deep")
    if _DEEP_INDENT.search(text):
        raise fail(f"nested more than {MAX_NESTING} levels deep (a line is indented past "
                   f"{_INDENT} columns)")
    if _LONG_NUMBER.search(text):
        raise fail("holds a number of more than 1,000 digits")


def _kind(mode: int) -> str | None:
    """What a file that is not a regular one is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    what = ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
    return f"is not a regular file ({what}): save its content to a file first"


def open_regular(path: str | Path, fail: Fail) -> BinaryIO:
    """``path`` opened for reading in binary, refusing anything but a regular file without
    waiting on it: a named pipe with no writer would block ``open``, and a device such as
    /dev/zero never ends.

    >>> open_regular("/dev/zero", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: is not a regular file (a device): save its content to a file first
    """
    try:
        problem = _kind(os.stat(path).st_mode)
    except FileNotFoundError:
        raise fail("no such file") from None
    except OSError as err:
        raise fail(f"cannot read: {err.strerror or err}") from None
    except ValueError:  # a NUL byte in the name
        raise fail("cannot read: the file name holds a NUL byte") from None
    if problem:
        raise fail(problem)
    try:
        # non-blocking: a pipe put in the file's place since the stat must not hang open()
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise fail(f"cannot read: {err.strerror or err}") from None
    try:
        problem = _kind(os.fstat(fd).st_mode)
        if problem:
            raise fail(problem)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _read_bytes(path: str | Path, fail: Fail, limit: int) -> bytes:
    with open_regular(path, fail) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise fail(f"is {binary(size)}, more than the {binary(limit)} a file of "
                       "this kind may hold")
        try:
            data = handle.read(limit + 1)
        except OSError as err:
            raise fail(f"cannot read: {err.strerror or err}") from None
    if len(data) > limit:  # it grew while being read
        raise fail(f"is more than the {binary(limit)} a file of this kind may hold")
    return data


def read_text(path: str | Path, fail: Fail, *, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of ``path``; a missing, unreadable, non-regular or binary file, one
    of more than ``limit`` bytes, or one that :func:`check_shape` refuses raises
    ``fail(problem)``, so each caller keeps its own error class (and exit code).

    >>> read_text("/no/such/file.yaml", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: no such file
    """
    data = _read_bytes(path, fail, limit)
    kind = binary_kind(data)
    if kind:
        raise fail(f"is {kind}, not text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise fail(f"line {line}: not UTF-8 text (byte 0x{data[err.start]:02X}): a binary "
                   "file, or text in another encoding") from None
    check_shape(text, fail)
    return text


#: the first bytes of files a user may give by mistake where text is read
_MAGIC = ((b"\x89PNG", "a PNG image"), (b"%PDF", "a PDF document"),
          (b"\x1f\x8b", "gzip-compressed"), (b"PK\x03\x04", "a zip archive"),
          (b"\x7fELF", "a program (ELF)"), (b"SQLite format 3\0", "an SQLite database"),
          (b"\xff\xd8\xff", "a JPEG image"), (b"BZh", "bzip2-compressed"),
          (b"\xfd7zXZ\0", "xz-compressed"), (b"(\xb5/\xfd", "zstd-compressed"),
          (b"\xff\xfe", "UTF-16 text"), (b"\xfe\xff", "UTF-16 text"))


def binary_kind(data: bytes) -> str | None:
    """What a file is, by its first bytes, where it is a kind that is never the text asked
    for (an image, an archive, a database); else None.

    >>> binary_kind(b"\\x89PNG\\r\\n"), binary_kind(b"name: a100")
    ('a PNG image', None)
    """
    return next((what for magic, what in _MAGIC if data.startswith(magic)), None)


def read_json(path: str | Path, fail: Fail, *, limit: int = MAX_TEXT_BYTES) -> Any:
    """The parsed JSON of ``path``, read as :func:`read_text` reads it; text that is not
    JSON raises ``fail`` naming the line.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = p.write_text('{"a": 1,}')
    >>> read_json(p, ValueError)
    Traceback (most recent call last):
    ...
    ValueError: line 1: not valid JSON: Expecting property name enclosed in double quotes
    """
    import json

    text = read_text(path, fail, limit=limit)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise fail(f"line {err.lineno}: not valid JSON: {err.msg}") from None


#: JSON's whitespace between the items of a list
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def read_json_items(path: str | Path, fail: Fail, *, limit: int = MAX_TEXT_BYTES
                    ) -> tuple[Any, Iterator[Any] | None]:
    """``(document, None)`` for a JSON file whose top level is not a list, else
    ``(None, items)``: the list's items parsed one at a time as they are taken, so that a
    large list of runs is never held as parsed objects all at once (the text is). Read
    and checked as :func:`read_json` reads it; an item that is not JSON raises ``fail``
    naming its line when it is reached.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = p.write_text('[{"a": 1}, 2 ,[3]]')
    >>> doc, items = read_json_items(p, ValueError)
    >>> doc, list(items)
    (None, [{'a': 1}, 2, [3]])
    >>> _ = p.write_text('[1, 2')
    >>> list(read_json_items(p, ValueError)[1])
    Traceback (most recent call last):
    ...
    ValueError: line 1: not valid JSON: the list does not end
    """
    import json

    text = read_text(path, fail, limit=limit)
    start = _JSON_SPACE.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("[", start):
        try:
            return json.loads(text), None
        except json.JSONDecodeError as err:
            raise fail(f"line {err.lineno}: not valid JSON: {err.msg}") from None
    return None, _json_list(text, start + 1, fail)


def _json_list(text: str, at: int, fail: Fail) -> Iterator[Any]:
    import json

    decoder = json.JSONDecoder()

    def bad(where: int, why: str) -> Exception:
        return fail(f"line {text.count(chr(10), 0, where) + 1}: not valid JSON: {why}")

    at = _JSON_SPACE.match(text, at).end()  # type: ignore[union-attr]
    if text.startswith("]", at):
        at += 1
    else:
        while True:
            try:
                item, at = decoder.raw_decode(text, at)
            except json.JSONDecodeError as err:
                raise bad(err.pos, err.msg) from None
            yield item
            at = _JSON_SPACE.match(text, at).end()  # type: ignore[union-attr]
            if text.startswith(",", at):
                at = _JSON_SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
                continue
            if text.startswith("]", at):
                at += 1
                break
            raise bad(at, "the list does not end" if at >= len(text)
                      else "expected ',' or ']' between items")
    if _JSON_SPACE.match(text, at).end() != len(text):  # type: ignore[union-attr]
        raise bad(at, "extra data after the list")


@contextmanager
def replaced(path: str | Path) -> Iterator[Path]:
    """A file to write in place of ``path``: a new file beside it, put in its place only
    once it was written whole, so that a full disk, a failed write or an interrupt leaves
    what was at ``path`` as it was (and no part-written file). The new file gets the
    permissions of the file it replaces, or those a file created there would get. A path
    that exists and is not a regular file (a pipe, a terminal, ``/dev/null``) is written
    as it is; a link, the file it points to.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "a.txt"
    >>> _ = out.write_text("kept")
    >>> try:
    ...     with replaced(out) as new:
    ...         _ = new.write_text("half")
    ...         raise OSError(28, "No space left on device")
    ... except OSError:
    ...     pass
    >>> out.read_text(), sorted(p.name for p in out.parent.iterdir())
    ('kept', ['a.txt'])
    """
    import tempfile

    target = Path(path)
    if target.exists() and not target.is_file():
        yield target
        return
    if target.is_symlink():  # the file it points to is replaced, not the link
        target = target.resolve()
    fd, partial = tempfile.mkstemp(dir=target.parent, prefix=".sparsroof-", suffix=".part")
    os.close(fd)
    try:
        if target.exists():  # the file it replaces keeps its permissions
            os.chmod(partial, stat.S_IMODE(target.stat().st_mode))
        else:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(partial, 0o666 & ~mask)
        yield Path(partial)
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def write_text_whole(path: str | Path, text: str, fail: Fail) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (:func:`replaced`); an error
    of the file system raises ``fail("cannot write: REASON")``, the problem alone, as the
    readers' ``fail`` gets it."""
    try:
        with replaced(path) as new:
            new.write_text(text, encoding="utf-8")
    except OSError as err:
        raise fail(f"cannot write: {err.strerror or err}") from None
