"""Answers kept for the commands that are a function of their inputs: the same command on
unchanged inputs prints what it printed before, without loading a library or a file.

``sparsroof analyze``, ``classify`` and ``formats`` run from a shell (not from Python with
an argument list) keep their output, stdout and stderr in the order they were written,
when they succeed. The key is everything the output depends on:

* the command line and the working folder;
* every argument (and every comma-separated piece of one) that names an existing path:
  its device, inode, size, modification and change times; one that names nothing is keyed
  as absent, so a spec file made later under a bundled spec's name is seen;
* the environment that can change the output: ``SPARSROOF_*``, the terminal's size and
  colour settings, the locale, and whether stdout and stderr are terminals (and its size);
* the code: the interpreter, the size and modification time of every file of the package
  (its bundled specs included), and the installed distributions on ``sys.path``;
* the machine (``os.uname``): a home folder shared by several machines shares the cache.

A command is not kept when it writes a file (``--plot``), times something
(``--reorder``, ``formats --run``), reads stdin or a folder, is asked not to cache
(``--no-cache``) or fails; nor when an input changed within :data:`RACY_NS` (a second
write within the file system's timestamp granularity could leave its times unchanged).
Every write to a file changes its change time, which no program can set back. Answers
live in the cache folder (:func:`~sparsroof.caching.folder.cache_dir`), at most :data:`KEEP` of
them, the least recently used going first; one that cannot be read is a miss, never an
error, and so is a cache folder that cannot be written.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from .._version import __version__
from .folder import RACY_NS, write_whole

__all__ = ["KEEP", "RACY_NS", "answer_key", "replay", "recorded"]

#: the commands whose answers are kept: their output is a function of the files, options
#: and environment in the key (``check`` and ``compare`` read files named inside others)
COMMANDS = frozenset({"analyze", "classify", "formats"})
#: options after which a command is not kept (it writes a file, times, or must not cache)
_NOT_KEPT = ("--plot", "--reorder", "--run", "--no-cache", "-h", "--help")
#: environment variables beside ``SPARSROOF_*`` that can change what a command prints
_ENVIRONMENT = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM",
                "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES",
                "PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LC_ALL", "LC_CTYPE", "HOME",
                "XDG_CACHE_HOME")
#: answers kept at most
KEEP = 512
#: the largest answer kept (characters)
_LARGEST = 4 << 20
_FOLDER = "answers"


def _stat(path: str) -> list[int] | None | bool:
    """A path's identity; None when it names nothing; False when it cannot be keyed (a
    folder, or a file changed too recently)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not os.path.isfile(path) or time.time_ns() - st.st_ctime_ns < RACY_NS:
        return False
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _paths(args: list[str]) -> Iterator[str]:
    """Every argument, the value of ``--option=value`` and each comma-separated piece, as
    given and without the blanks around it (as ``--hw`` reads its names)."""
    for arg in args:
        value = arg.partition("=")[2] if arg.startswith("--") else arg
        for piece in (value, *(value.split(",") if "," in value else ())):
            yield piece
            if piece.strip() != piece:
                yield piece.strip()


def _code() -> list[Any]:
    """The package's files (size and time) and the installed distributions."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = []
    for folder, dirs, names in os.walk(package, followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        inside = folder[len(package):]
        for name in names:
            st = os.lstat(folder + os.sep + name)  # an editor's lock link may point nowhere
            files.append((inside + os.sep + name, st.st_size, st.st_mtime_ns))
    dists = []
    for entry in sys.path:
        with contextlib.suppress(OSError):
            dists += [n for n in os.listdir(entry or ".")
                      if n.endswith((".dist-info", ".egg-info"))]
    return [__version__, sys.version, sys.executable, package, sorted(files), sorted(dists)]


def _terminal() -> list[Any]:
    """Whether stdout and stderr are terminals, the terminal's size, their encodings and
    the interpreter's flags (UTF-8 mode, for one, changes what can be printed)."""
    out, err = sys.stdout.isatty(), sys.stderr.isatty()
    size = None
    if out:
        with contextlib.suppress(OSError, ValueError):
            size = list(os.get_terminal_size(sys.stdout.fileno()))
    streams = [(getattr(f, "encoding", None), getattr(f, "errors", None))
               for f in (sys.stdout, sys.stderr)]
    return [out, err, size, streams, list(sys.flags)]


def answer_key(args: list[str]) -> str | None:
    """The key of the command ``args`` (without the program's name), or None when its answer
    is not kept (see the module's text)."""
    if not args or args[0] not in COMMANDS or "-" in args:
        return None
    if any(a == opt or a.startswith(opt + "=") for a in args for opt in _NOT_KEPT):
        return None
    if sys.stdout is None or sys.stderr is None:  # started with a stream closed
        return None
    try:
        return _key(args)
    except (OSError, ValueError):  # a working folder deleted, a file gone while walked
        return None


def _key(args: list[str]) -> str | None:
    inputs = {}
    for path in _paths(args[1:]):
        seen = _stat(path)
        if seen is False:
            return None
        inputs[path] = seen
    import hashlib  # here, not above: a command that is not kept pays for neither
    import json

    environment = {k: v for k, v in os.environ.items()
                   if k.startswith("SPARSROOF_") or k in _ENVIRONMENT}
    # the machine too: a home folder shared by several (a cluster's) shares the cache, and
    # what a command says of "this host" differs between them
    key = [args, os.getcwd(), inputs, environment, _terminal(), _code(), list(os.uname())]
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def _folder() -> str:
    from .folder import cache_dir

    return os.path.join(cache_dir(), _FOLDER)


def _entry(key: str) -> str:
    return os.path.join(_folder(), key + ".json")


def replay(key: str) -> bool:
    """Print the kept answer of ``key`` as it was written; False when there is none."""
    import json

    path = _entry(key)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        chunks = [(int(stream), str(text)) for stream, text in doc["chunks"]]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    streams = {1: sys.stdout, 2: sys.stderr}
    for number, text in chunks:
        stream = streams.get(number % 10, sys.stdout)
        if number > 10:  # bytes written past the text layer
            stream.flush()
            stream.buffer.write(text.encode("utf-8", "surrogateescape"))
        else:
            stream.write(text)
        stream.flush()
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used
    return True


class _Recorder:
    """Stands for stdout or stderr: writes through, and keeps what was written (bytes written
    to its ``buffer`` too, as stream ``number + 10``)."""

    def __init__(self, stream: Any, number: int, chunks: list[list[Any]]) -> None:
        self._stream, self._number, self._chunks = stream, number, chunks

    def write(self, data: Any) -> Any:
        try:  # first: a write the stream refuses is not kept
            written = self._stream.write(data)
        except TypeError:  # bytes offered to a text stream (click asks so), or the reverse
            raise
        except BaseException:  # a closed pipe, a full disk: what was kept is not the output
            self._chunks.append([0, ""])
            raise
        text = data if isinstance(data, str) else bytes(data).decode("utf-8",
                                                                       "surrogateescape")
        self._chunks.append([self._number, text])
        return written

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    @property
    def buffer(self) -> _Recorder:
        return _Recorder(self._stream.buffer, self._number + 10, self._chunks)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _store(key: str, chunks: list[list[Any]]) -> None:
    if sum(len(text) for _, text in chunks) > _LARGEST:
        return
    import json

    if write_whole(_entry(key), json.dumps({"chunks": chunks}), suffix=".part"):
        _evict(_folder())


def _evict(folder: str) -> None:
    """Keep the :data:`KEEP` most recently used answers; remove what a killed run left
    half written (an hour old)."""
    now = time.time()
    kept = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        with contextlib.suppress(OSError):
            if name.endswith(".json"):
                kept.append((os.stat(path).st_mtime_ns, path))
            elif name.endswith(".part") and now - os.stat(path).st_mtime > 3600:
                os.remove(path)
    kept.sort()
    for _, old in kept[:max(0, len(kept) - KEEP)]:
        with contextlib.suppress(OSError):
            os.remove(old)


def recorded(key: str, run: Callable[[], int]) -> int:
    """``run()``'s exit status; its output is kept under ``key`` when it succeeds."""
    chunks: list[list[Any]] = []
    out, err = sys.stdout, sys.stderr
    sys.stdout = _Recorder(out, 1, chunks)
    sys.stderr = _Recorder(err, 2, chunks)
    try:
        code = run()
    finally:
        sys.stdout, sys.stderr = out, err
    if code == 0 and all(number for number, _ in chunks):  # stream 0: a write that failed
        _store(key, chunks)
    return code
