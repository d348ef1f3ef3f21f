"""A small matrix tree in the SuiteSparse layout, built from the corpus files."""

from __future__ import annotations

import gzip
import shutil
import tarfile
from pathlib import Path

#: matrix names the default discovery finds, with whether analysing them succeeds
GOOD = ("west0479", "494_bus", "Erdos971", "layers.0.blocks.0.attn.proj_swin_tiny_unstructured_50",
        "karate", "lund_a")
BAD = ("bad_header", "wrong", "junk", "NoMain")
AUXILIARY = ("Erdos971_nodename",)


def _archive(path: Path, problem: str, members: dict[str, Path]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, source in members.items():
            tar.add(source, arcname=f"{problem}/{name}")


def build(corpus: Path, root: Path) -> Path:
    """Write the tree under ``root`` and return it.

    HB/west0479.tar.gz         west0479/west0479.mtx + _b and _coord auxiliaries
    HB/494_bus.mtx.gz          gzip
    Pajek/Erdos971/            unpacked problem with an auxiliary _nodename file
    DLMC/*.smtx                DLMC format
    plain/karate.mtx, lund_a.mtx, notes.txt (not a matrix)
    Broken/                    bad header, 0-based index, garbage archive, archive
                               lacking its Name/Name.mtx
    """
    (root / "HB").mkdir(parents=True)
    _archive(root / "HB" / "west0479.tar.gz", "west0479", {
        "west0479_b.mtx": corpus / "050_nonzeros.mtx",
        "west0479.mtx": corpus / "west0479.mtx",
        "west0479_coord.mtx": corpus / "karate.mtx"})
    with gzip.open(root / "HB" / "494_bus.mtx.gz", "wb") as out:
        out.write((corpus / "494_bus.mtx").read_bytes())
    erdos = root / "Pajek" / "Erdos971"
    erdos.mkdir(parents=True)
    shutil.copy(corpus / "Erdos971.mtx", erdos)
    shutil.copy(corpus / "polbooks.mtx", erdos / "Erdos971_nodename.mtx")
    (root / "DLMC").mkdir()
    shutil.copy(corpus / f"{GOOD[3]}.smtx", root / "DLMC")
    (root / "plain").mkdir()
    for name in ("karate", "lund_a"):
        shutil.copy(corpus / f"{name}.mtx", root / "plain")
    (root / "plain" / "notes.txt").write_text("not a matrix\n")
    broken = root / "Broken"
    broken.mkdir()
    for name in ("bad_header", "wrong"):
        shutil.copy(corpus / f"{name}.mtx", broken)
    (broken / "junk.tar.gz").write_bytes(b"this is not a tar archive\n" * 20)
    _archive(broken / "NoMain.tar.gz", "NoMain", {"NoMain_b.mtx": corpus / "karate.mtx"})
    return root
