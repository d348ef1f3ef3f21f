from __future__ import annotations

import os
from pathlib import Path

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
