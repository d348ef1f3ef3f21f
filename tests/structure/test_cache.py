"""The structure cache: a hit gives the same results without loading the file, a changed
file or changed code misses, a bad entry or cache folder is ignored, --no-cache bypasses
it, and the size limit evicts the least recently used entries."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import sparsroof
from sparsroof.cli import cli
from sparsroof.errors import SparsroofError
from sparsroof.matrix import mtx
from sparsroof.matrix.mtx import load
from sparsroof.structure import cache
from sparsroof.structure.codec import decode_structure, encode_structure
from sparsroof.structure.counts import native
from sparsroof.structure.features import measure

from ..conftest import DATA, loaded_by_command, require_native

LAP = DATA / "lap2d_64.mtx"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("SPARSROOF_CACHE_DIR", str(folder))
    return folder


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def _entries(folder: Path) -> list[Path]:
    return sorted((folder / "structure").glob("*.json"))


def _held(folder: Path) -> int:
    """Bytes of the structure cache's entries and notes (what its size limit counts; the
    cache folder also keeps parsed specs)."""
    return sum(p.stat().st_size for sub in ("structure", "files")
               for p in (folder / sub).glob("*.json"))


def _age_notes(folder: Path) -> None:
    """Make every note look as if the file had been hashed long after its last change."""
    for note in (folder / "files").glob("*.json"):
        doc = json.loads(note.read_text())
        doc["hashed_ns"] = max(doc["stamp"][3:]) + cache.RACY_NS
        note.write_text(json.dumps(doc))


def _no_load(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: object) -> None:
        raise AssertionError(f"{path} was loaded")

    monkeypatch.setattr(mtx, "load", refuse)


@pytest.mark.parametrize("args", [
    ("analyze", "--hw", "h100", "--storage", "all", "--model", "all", "-O", "json"),
    ("analyze", "--model", "compulsory,random", "-O", "json"),
    ("classify", "-O", "json"),
    ("formats", "--hw", "a100", "-O", "json"),
])
def test_a_hit_gives_the_same_document(args: tuple[str, ...], own_cache: Path) -> None:
    command, *rest = args
    fresh = _invoke(command, str(LAP), "--no-cache", *rest)
    # --no-cache neither reads nor writes the structure cache (numba, where it compiles a
    # kernel for the first time in this process, keeps it in the folder's numba/)
    assert not (own_cache / "structure").exists() and not (own_cache / "files").exists()
    first = _invoke(command, str(LAP), *rest)
    assert len(_entries(own_cache)) == 1
    second = _invoke(command, str(LAP), *rest)
    assert fresh == first == second


def test_a_hit_does_not_load_the_file(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = sparsroof.analyze(LAP, "a100")
    _age_notes(own_cache)
    _no_load(monkeypatch)
    monkeypatch.setattr(cache, "_hash_file", lambda path: pytest.fail("hashed again"))
    again = sparsroof.analyze(LAP, "h100-sxm")
    assert again.structure.to_dict() == first.structure.to_dict()
    assert again.matrix == first.matrix and again.verdict == first.verdict
    assert sparsroof.classify(LAP) == first.verdict


#: libraries a re-analysis from the cache does without (numpy alone costs more to import
#: than the rest of such a run)
_UNNEEDED = ("numpy", "scipy", "numba", "matplotlib", "fast_matrix_market",
             "sparsroof.matrix.mtx", "sparsroof.structure.counts")


@pytest.mark.parametrize("output", [(), ("-O", "json"), ("--storage", "csr,coo", "-O", "csv")])
def test_a_hit_imports_no_numerical_library(output: tuple[str, ...], own_cache: Path) -> None:
    first = _invoke("analyze", str(LAP), "--hw", "a100", *output)
    _age_notes(own_cache)
    loaded, again, _ = loaded_by_command(["analyze", str(LAP), "--hw", "a100", *output],
                                         _UNNEEDED)
    assert loaded == []
    assert again == first


def test_a_recent_note_is_checked_by_the_content(own_cache: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    sparsroof.analyze(LAP)  # the note is new: within RACY_NS of the file's last change?
    note = next((own_cache / "files").glob("*.json"))
    doc = json.loads(note.read_text())
    doc["hashed_ns"] = max(doc["stamp"][3:])  # hashed in the same instant as the change
    note.write_text(json.dumps(doc))
    hashed: list[str] = []
    real = cache._hash_file
    monkeypatch.setattr(cache, "_hash_file", lambda path: hashed.append(path) or real(path))
    _no_load(monkeypatch)
    sparsroof.analyze(LAP)
    assert hashed == [os.path.abspath(LAP)]


def test_a_changed_file_misses(tmp_path: Path, own_cache: Path) -> None:
    path = tmp_path / "m.mtx"
    banner = "%%MatrixMarket matrix coordinate real general\n4 4 2\n"
    path.write_text(banner + "1 1 1.0\n2 2 1.0\n")
    before = os.stat(path)
    first = sparsroof.analyze(path)
    _age_notes(own_cache)
    # same size, same mtime: only the content (and the ctime) differ
    path.write_text(banner + "1 4 1.0\n2 2 1.0\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = sparsroof.analyze(path)
    assert first.structure.bandwidth == 0 and second.structure.bandwidth == 3
    assert second.structure.to_dict() == sparsroof.analyze(path, cache=False).structure.to_dict()
    assert len(_entries(own_cache)) == 2


def test_a_copy_hits_by_content(tmp_path: Path, own_cache: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    sparsroof.analyze(LAP)
    copy = tmp_path / "copy.mtx"
    shutil.copyfile(LAP, copy)
    _no_load(monkeypatch)
    a = sparsroof.analyze(copy)
    assert (a.matrix.name, a.matrix.path) == ("copy", str(copy))


def test_what_was_measured_is_part_of_the_key(own_cache: Path) -> None:
    counts_only = sparsroof.analyze(LAP, model="compulsory,random")
    full = sparsroof.analyze(LAP)
    assert counts_only.verdict is None and counts_only.structure.n_diagonals == 0
    assert full.verdict is not None and full.structure.n_diagonals == 5
    assert [p.name.rsplit("-", 1)[1] for p in _entries(own_cache)] == ["counts.json",
                                                                       "pattern.json"]


def test_other_code_misses(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sparsroof.analyze(LAP)
    monkeypatch.setattr(cache, "_code", lambda: "0123456789abcdef")
    sparsroof.analyze(LAP)
    assert len(_entries(own_cache)) == 2


@pytest.mark.parametrize("damage", [
    lambda text: text[: len(text) // 2],  # cut short
    lambda text: "not json",
    lambda text: text.replace('"rows":', '"rows":"many","x":'),  # a field of the wrong type
    lambda text: text.replace('"schema":1', '"schema":99'),
])
def test_a_damaged_entry_is_a_miss(damage, own_cache: Path) -> None:  # type: ignore[no-untyped-def]
    expected = _invoke("analyze", str(LAP), "-O", "json")
    (entry,) = _entries(own_cache)
    entry.write_text(damage(entry.read_text()))
    assert _invoke("analyze", str(LAP), "-O", "json") == expected
    assert json.loads(entry.read_text())["schema"] == 1  # measured again and rewritten


def test_an_entry_under_another_key_is_not_served(own_cache: Path) -> None:
    sparsroof.analyze(LAP)
    sparsroof.analyze(DATA / "random_1000.mtx")
    lap, rnd = _entries(own_cache)
    lap.write_bytes(rnd.read_bytes())  # the random matrix's entry under the Laplacian's name
    assert sparsroof.analyze(LAP).structure.stored_entries == 20224


def test_no_cache_does_not_read_the_cache(own_cache: Path) -> None:
    sparsroof.analyze(LAP)
    (entry,) = _entries(own_cache)
    doc = json.loads(entry.read_text())
    doc["structure"]["stored_entries"] = 1  # a wrong entry under the right key
    entry.write_text(json.dumps(doc))
    assert sparsroof.analyze(LAP).structure.stored_entries == 1  # the cache is trusted
    assert sparsroof.analyze(LAP, cache=False).structure.stored_entries == 20224
    out = json.loads(_invoke("classify", str(LAP), "--no-cache", "-O", "json"))
    assert out["matrices"][0]["features"]["stored_entries"] == 20224


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "a file"
    blocked.write_text("")
    monkeypatch.setenv("SPARSROOF_CACHE_DIR", str(blocked))
    expected = _invoke("analyze", str(LAP), "-O", "json", "--no-cache")
    assert _invoke("analyze", str(LAP), "-O", "json") == expected


def test_the_size_limit_evicts_the_least_recently_used(tmp_path: Path, own_cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    paths = []
    for k in range(4):
        paths.append(tmp_path / f"m{k}.mtx")
        banner, rest = (DATA / "random_1000.mtx").read_text().split("\n", 1)
        paths[-1].write_text(f"{banner}\n% copy {k}\n{rest}")  # another content each
    sparsroof.analyze(paths[0])
    one = _held(own_cache)
    monkeypatch.setenv("SPARSROOF_CACHE_SIZE", str(int(2.5 * one)))
    sparsroof.analyze(paths[1])
    sparsroof.analyze(paths[0])  # used again: now the most recent
    sparsroof.analyze(paths[2])
    kept = {json.loads(p.read_text())["key"]["content"] for p in _entries(own_cache)}
    assert len(kept) == 2
    assert _held(own_cache) <= 2.5 * one
    assert cache.fingerprint(paths[1])[0] not in kept  # type: ignore[index]


def test_the_default_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SPARSROOF_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "sparsroof"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / ".cache" / "sparsroof"


def _same(a: object, b: object) -> bool:
    """Equal values of the same types, arrays by content."""
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return (isinstance(b, dict) and list(a) == list(b)
                and all(_same(a[k], b[k]) and type(k) is type(kb)
                        for k, kb in zip(a, b, strict=True)))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


def test_structures_survive_the_round_trip(corpus: Path) -> None:
    for path in [*sorted(DATA.glob("*.mtx")), *sorted(corpus.iterdir())]:
        try:
            m = load(path)
        except SparsroofError:
            continue  # SOURCES.md, and the malformed files of the corpus
        for pattern in (True, False):
            s = measure(m, pattern=pattern)
            back = decode_structure(json.loads(json.dumps(encode_structure(s))))
            for f in fields(s):
                assert _same(getattr(s, f.name), getattr(back, f.name)), (path, f.name)


def test_hash64_is_xxh64() -> None:
    k = native()
    require_native(k, "sparsroof.structure._native")
    assert k is not None
    # the reference vectors of XXH64 with seed 0
    assert k.hash64(b"") == 0xEF46DB3751D8E999
    assert k.hash64(b"a") == 0xD24EC4F1A98C6E5B
    assert k.hash64(b"abc") == 0x44BC2CF5AD770999
    assert k.hash64(b"Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1
    data = bytes(range(256)) * 5
    assert len({k.hash64(data[:n]) for n in range(len(data))}) == len(data)


def test_compiled_kernels_are_cached_outside_the_installed_package(tmp_path: Path) -> None:
    """numba's cache files go to the cache folder: written beside the installed sources,
    they outlive an uninstall and the folder left behind hides a later in-place install."""

    package = Path(sparsroof.__file__).parent
    before = set(package.rglob("*.nbi"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["SPARSROOF_CACHE_DIR"] = str(tmp_path)
    code = ("import numpy as np, scipy.sparse as sp\n"
            "from sparsroof.host.ell_kernels import padded, spmv\n"
            "a = sp.random(30, 30, density=0.2, format='csr', random_state=1)\n"
            "spmv(padded(a, 'hyb'), np.ones(30))()\n")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    assert set(package.rglob("*.nbi")) == before
    assert list((tmp_path / "numba").rglob("*.nbi"))
