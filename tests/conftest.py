from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
DATA = ROOT / "data"


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real third-party matrices; tests skip where it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS


def write_mtx(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
