"""The matrices of a budget check: paths and glob patterns, expanded with bounded work.

Python's ``glob`` follows links to directories, so a link that points back up the tree
makes ``**`` walk the same folders again and again (exponentially many paths), and
``/**/*.mtx`` walks the whole file system. Here:

- links to directories met by a wildcard are not followed (a folder the pattern names
  literally is, as the user wrote it);
- a pattern with ``**`` must start below the budget's folder when it is relative, and may
  not start at the root of the file system when it is absolute;
- a walk stops with an error past :data:`MAX_FOLDERS` folders or :data:`MAX_MATCHES`
  files;
- a file matched twice (two patterns, or a link and its target) is kept once, where it
  was first matched.

As in ``glob``, a wildcard does not match a name starting with "." unless the pattern's
part does.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..userfile import shown

__all__ = ["MAX_FOLDERS", "MAX_MATCHES", "expand"]

#: most folders one pattern may search
MAX_FOLDERS = 100_000
#: most files one pattern may match
MAX_MATCHES = 100_000


class _Walk:
    """Counts the folders a pattern searches, to stop a runaway walk."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.folders = 0

    def entries(self, folder: str) -> list[os.DirEntry[str]]:
        self.folders += 1
        if self.folders > MAX_FOLDERS:
            raise ValueError(f"{shown(self.pattern)} searches more than {MAX_FOLDERS:,} folders: "
                             "name a narrower folder")
        try:
            with os.scandir(folder) as it:
                return sorted(it, key=lambda e: e.name)
        except OSError:
            return []  # unreadable or gone: as glob, nothing matches there

    def below(self, folder: str) -> Iterator[str]:
        """``folder`` and every folder under it, links to folders not followed."""
        stack = [folder]
        while stack:
            current = stack.pop()
            yield current
            subfolders = [e.path for e in self.entries(current)
                          if not e.name.startswith(".") and _is_folder(e)]
            stack.extend(reversed(subfolders))


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _visible(name: str, part: str) -> bool:
    return part.startswith(".") or not name.startswith(".")


def _step(walk: _Walk, folders: list[str], part: str, last: bool) -> tuple[list[str], list[str]]:
    """The folders and (at the last part) the files that ``part`` matches under
    ``folders``."""
    nxt: list[str] = []
    files: list[str] = []
    for folder in folders:
        if part == "**":
            for sub in walk.below(folder):
                if not last:
                    nxt.append(sub)
                    continue
                files.extend(e.path for e in walk.entries(sub)
                             if not e.name.startswith(".") and _is_file(e))
        elif glob.has_magic(part):
            for e in walk.entries(folder):
                if not (fnmatch.fnmatch(e.name, part) and _visible(e.name, part)):
                    continue
                if last and _is_file(e):
                    files.append(e.path)
                elif not last and _is_folder(e):
                    nxt.append(e.path)
        else:
            path = os.path.join(folder, part)
            if last and os.path.isfile(path):
                files.append(path)
            elif not last and os.path.isdir(path):
                nxt.append(path)
    return nxt, files


def _start(full: str, base: Path, pattern: str) -> tuple[str, list[str]]:
    """The folder a pattern's walk starts in (its parts before the first wildcard) and
    the parts left; a recursive walk out of bounds is refused."""
    parts = Path(full).parts
    split = next(i for i, p in enumerate(parts) if glob.has_magic(p))
    start = os.path.join(*parts[:split]) if split else "."
    if "**" in parts:
        if os.path.isabs(pattern):
            if os.path.dirname(start) == start:
                raise ValueError(f"{shown(pattern)} searches the whole file system: start the "
                                 "pattern in a folder, such as /data/**/*.mtx")
        else:
            inside = os.path.normpath(base.resolve())
            if os.path.commonpath([inside, os.path.normpath(Path(start).resolve())]) != inside:
                raise ValueError(f"{shown(pattern)} searches outside the budget's folder {base}: "
                                 "a relative '**' pattern must stay inside it (write an "
                                 "absolute path to search elsewhere)")
    return start, list(parts[split:])


def _matches(pattern: str, base: Path) -> list[str]:
    full = os.path.normpath(base / pattern)
    start, parts = _start(full, base, pattern)
    walk = _Walk(pattern)
    folders: list[str] = [start]
    files: list[str] = []
    for i, part in enumerate(parts):
        folders, files = _step(walk, folders, part, i == len(parts) - 1)
        if len(files) > MAX_MATCHES or len(folders) > MAX_FOLDERS:
            raise ValueError(f"{shown(pattern)} matches more than {MAX_MATCHES:,} paths: name a "
                             "narrower folder")
    return sorted(files)


def expand(patterns: Sequence[str], base: Path) -> tuple[str, ...]:
    """The files of ``patterns`` (paths and globs, relative to ``base``, the budget's
    folder), in order, each once by its real path. A plain path is kept as written (a
    missing file is reported when it is loaded); a glob that matches nothing, or one out
    of the bounds above, raises ValueError.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for name in ("a.mtx", "b.mtx", "sub/c.mtx"):
    ...     (root / name).parent.mkdir(exist_ok=True); _ = (root / name).write_text("")
    >>> (root / "sub" / "up").symlink_to(root)  # a loop: never followed
    >>> [Path(p).relative_to(root).as_posix() for p in expand(["**/*.mtx", "a.mtx"], root)]
    ['a.mtx', 'b.mtx', 'sub/c.mtx']
    """
    found: dict[str, str] = {}
    for pattern in patterns:
        if not glob.has_magic(pattern):
            full = os.path.normpath(base / pattern)
            found.setdefault(os.path.realpath(full), full)
            continue
        hits = _matches(pattern, base)
        if not hits:
            raise ValueError(f"{shown(pattern)} matches no file in {base}")
        for hit in hits:
            found.setdefault(os.path.realpath(hit), hit)
    return tuple(found.values())
