from __future__ import annotations

import ast
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import ArrayLike
from scipy.sparse import coo_array

from sparsroof.matrix.mtx import Matrix

ROOT = Path(__file__).resolve().parent.parent
#: real third-party matrices carried in the repository (tests/corpus/README.md)
CORPUS = ROOT / "tests" / "corpus"
#: the fuller development corpus beside the checkout, where present
SHARED_CORPUS = ROOT.parent / "shared" / "corpus"
#: corpus files listed in SOURCES.md but not carried (no licence stated)
NOT_CARRIED = frozenset({"random_90_768_768.mtx", "random_80_768_768.mtx"})
DATA = ROOT / "data"


def loaded_by_command(args: list[str], watched: Iterable[str], cwd: Path | None = None
                      ) -> tuple[list[str], str, str]:
    """Run ``sparsroof ARGS`` in a fresh interpreter (in ``cwd``, by default this one's) and say
    which of the ``watched`` modules it imported, with its stdout and stderr. The command
    must succeed. How a test holds that a command leaves a heavy library unloaded."""
    code = ("import sys; from sparsroof.cli import main\n"
            "try:\n    main(sys.argv[2:])\nexcept SystemExit as stop:\n"
            "    assert not stop.code, stop.code\n"
            "print('\\nLOADED', [m for m in sys.argv[1].split(',') if m in sys.modules], "
            "file=sys.stderr)")
    # the environment as this interpreter sees it (the tests' own settings), not the one it
    # started with
    out = subprocess.run([sys.executable, "-c", code, ",".join(watched), *args], cwd=cwd,
                         capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert out.returncode == 0 and "\nLOADED " in out.stderr, out.stderr[-3000:]
    loaded = ast.literal_eval(out.stderr.rsplit("\nLOADED ", 1)[1].strip())
    return loaded, out.stdout, out.stderr


def fresh_python(code: str, *args: str | os.PathLike[str], timeout: float = 300,
                 check: bool = False, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``python -c CODE ARGS`` in a fresh interpreter, its output captured as text: how a
    test sees what a new process does that this one has done already (imports, memory
    limits, threads started at import)."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, check=check, **kwargs)


#: the warning filters of a fresh interpreter started without -W or PYTHONWARNINGS
_FRESH_FILTERS = [("default", None, DeprecationWarning, "__main__", 0),
                  ("ignore", None, DeprecationWarning, None, 0),
                  ("ignore", None, PendingDeprecationWarning, None, 0),
                  ("ignore", None, ImportWarning, None, 0),
                  ("ignore", None, ResourceWarning, None, 0)]


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: object = None, line: str | None = None) -> None:
    """A warning on stderr, as a fresh interpreter shows it."""
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def sparsroof(*args: str | os.PathLike[str], cwd: Path | str | None = None,
              env: Mapping[str, str] | None = None, input: str | None = None
              ) -> subprocess.CompletedProcess[str]:
    """Run ``sparsroof ARGS`` in this interpreter, as the installed command runs it in a fresh
    one: its entry point (:func:`sparsroof.cli.main`) with stdin, stdout and stderr of its own,
    in ``cwd``, with ``env`` over this process's environment, the warning filters and help
    width of a fresh interpreter, and its exit status as that interpreter's: an escaped
    exception is a traceback on stderr and status 1. The working folder, the environment
    and pyplot's figures are as they were after it.

    How a test checks what a command parses, prints and writes; a test of the process itself
    (its imports, signals, memory limits, the entry point's script) starts one."""
    import click.formatting
    from click.testing import CliRunner

    from sparsroof.cli import main

    argv = [os.fspath(a) for a in args]
    before, environ = os.getcwd(), dict(os.environ)
    code: int = 0
    with CliRunner().isolation(input=input, env=dict(env or {})) as (out, err, _), \
            warnings.catch_warnings():
        warnings.filters[:] = list(_FRESH_FILTERS)  # type: ignore[index]
        warnings.showwarning = _show_warning  # on stderr, not in pytest's record
        click.formatting.FORCED_WIDTH = None  # the terminal's width, as a real run sees it
        try:
            if cwd is not None:
                os.chdir(cwd)
            main(argv)
        except SystemExit as stop:
            if stop.code is None or isinstance(stop.code, int):
                code = stop.code or 0
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except Exception:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.chdir(before)
            os.environ.clear()
            os.environ.update(environ)
            if "matplotlib.pyplot" in sys.modules:
                sys.modules["matplotlib.pyplot"].close("all")
        stdout = out.getvalue().decode()
        stderr = err.getvalue().decode(errors="backslashreplace")
    return subprocess.CompletedProcess(["sparsroof", *argv], code, stdout, stderr)


def require_native(module: object, name: str) -> None:
    """Skip where no C compiler built ``name`` (``module`` is None: the package runs its numba
    and numpy routes, as a user without a compiler has it); CI sets SPARSROOF_REQUIRE_NATIVE,
    where a missing build is a failure, not a skip."""
    if module is None:
        if os.environ.get("SPARSROOF_REQUIRE_NATIVE"):
            pytest.fail(f"{name} was not built")
        pytest.skip(f"{name} was not built")


def corpus_file(name: str) -> Path:
    """A corpus file: the repository's copy, else the one beside the checkout; a test
    that needs a file neither has skips."""
    for folder in (CORPUS, SHARED_CORPUS):
        if (folder / name).is_file():
            return folder / name
    pytest.skip(f"{name} is not carried in the repository and ../shared/corpus lacks it")


@pytest.fixture(autouse=True, scope="session")
def _structure_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The structure cache of the tests (and of the commands they run) lives in a temporary
    folder, never in the user's own."""
    os.environ["SPARSROOF_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture
def corpus() -> Path:
    """The corpus of real third-party matrices carried in the repository."""
    return CORPUS


def write_mtx(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def make_matrix(rows: int, cols: int, row: ArrayLike, col: ArrayLike,
                values: ArrayLike | None = None, name: str = "t") -> Matrix:
    """A ``rows`` x ``cols`` :class:`Matrix` with entries at (``row[i]``, ``col[i]``),
    built through :meth:`Matrix.from_scipy`: a pattern matrix when ``values`` is None.

    As in :meth:`Matrix.from_scipy`, repeated coordinates become one entry and the
    entries come out in row-major order, with int32 indices where they fit.
    """
    r = np.asarray(row, dtype=np.int64)
    c = np.asarray(col, dtype=np.int64)
    data = np.ones(r.size) if values is None else np.asarray(values)
    a = coo_array((data, (r, c)), shape=(rows, cols))
    return Matrix.from_scipy(a, name=name, pattern=values is None)
