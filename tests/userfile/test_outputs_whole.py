"""A file a command writes is written whole or not at all: a full disk (here, a file size
limit the operating system enforces mid-write) leaves an earlier file of that name as it
was, and leaves no part-written file beside it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import DATA, ROOT

resource = pytest.importorskip("resource")  # the limit below is a POSIX one

#: bytes a child may write to one file: less than each output below, more than stderr
LIMIT = 16 << 10


#: sets the limit in the child, then becomes ``python -m sparsroof ARGS`` (a preexec_fn
#: would run Python between fork and exec of this threaded test process)
_LIMITED = ("import os, resource, sys\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({LIMIT}, {LIMIT}))\n"
            "os.execv(sys.executable, [sys.executable, '-m', 'sparsroof', *sys.argv[1:]])\n")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``sparsroof ARGS`` in a process that may not write more than :data:`LIMIT` bytes to a
    file (CPython ignores SIGXFSZ, so the write that crosses it fails with EFBIG)."""
    env = {"SPARSROOF_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path / "home"), "PYTHONDONTWRITEBYTECODE": "1"}  # no bytecode cut short
    return subprocess.run([sys.executable, "-c", _LIMITED, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name, args", [
    ("m.mtx", ("generate", "banded", "--n", "20000", "--halfwidth", "3", "-o")),
    ("roof.png", ("analyze", str(DATA / "lap2d_64.mtx"), "--no-cache", "--plot")),
    ("spy.png", ("spy", str(DATA / "lap2d_64.mtx"), "-o")),
    ("roof.pdf", ("analyze", str(DATA / "lap2d_64.mtx"), "--no-cache", "--plot")),
])
def test_a_write_cut_short_leaves_the_earlier_file(tmp_path: Path, name: str,
                                                   args: tuple[str, ...]) -> None:
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / name
    target.write_text("an earlier result, kept\n")
    out = _run(tmp_path, *args, str(target))
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
    assert f"{target}: cannot write: File too large" in out.stderr, out.stderr
    assert target.read_text() == "an earlier result, kept\n"
    assert [p.name for p in target.parent.iterdir()] == [name]


def test_a_page_cut_short_leaves_the_earlier_one(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    done = subprocess.run([sys.executable, "-m", "sparsroof", "batch", str(DATA), "--store",
                           str(store)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    target = tmp_path / "page.html"
    target.write_text("kept\n")
    out = _run(tmp_path, "report", str(store), "--html", str(target))
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
    assert "cannot write: File too large" in out.stderr and target.read_text() == "kept\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_a_link_keeps_pointing_at_the_file_it_names(tmp_path: Path) -> None:
    """Written through a symbolic link, the file it points to is replaced and the link
    stays a link (a rename onto the link would have replaced the link itself)."""
    from sparsroof.userfile import write_text_whole

    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    real.write_text("old\n")
    link.symlink_to(real)
    write_text_whole(link, "new\n", ValueError)
    assert link.is_symlink() and real.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real.csv"]


def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    from sparsroof.userfile import write_text_whole

    kept = tmp_path / "private.json"
    kept.write_text("{}\n")
    kept.chmod(0o600)
    write_text_whole(kept, '{"a": 1}\n', ValueError)
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.read_text() == '{"a": 1}\n'
