"""A spec parsed once is read back from the cache folder: the same spec, PyYAML not even
imported; a file changed, written a moment ago, or an entry damaged is parsed afresh."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sparsroof.caching import parsed
from sparsroof.errors import SpecError
from sparsroof.hardware import library
from sparsroof.hardware.library import load_spec

from ..conftest import fresh_python

BUNDLED = Path(library.__file__).resolve().parent.parent / "hwspecs" / "a100-80gb.yaml"
LONG_AGO = 1_700_000_000_000_000_000  # 2023, in nanoseconds


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The origins of the specs parsed from YAML, with a cache folder of the test's own
    that trusts a file however recently it changed (its change time cannot be set back:
    the test that says a fresh file is not kept restores the limit)."""
    monkeypatch.setenv("SPARSROOF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parsed, "RACY_NS", 0)
    seen: list[str] = []
    parse = library._read_yaml

    def counted(text: str, origin: str) -> object:
        seen.append(origin)
        return parse(text, origin)

    monkeypatch.setattr(library, "_read_yaml", counted)
    return seen


def _spec_file(tmp_path: Path, text: str | None = None, version: int = 0) -> Path:
    """A spec file written long ago (``version`` seconds after)."""
    path = tmp_path / "mine.yaml"
    path.write_text(text if text is not None else BUNDLED.read_text())
    when = LONG_AGO + version * 1_000_000_000
    os.utime(path, ns=(when, when))
    return path


def test_a_spec_is_parsed_once_and_again_when_it_changes(tmp_path: Path,
                                                         parses: list[str]) -> None:
    path = _spec_file(tmp_path)
    first, again = load_spec(path), load_spec(path)
    assert first == again and len(parses) == 1
    # a changed file (its modification time and size change with it) is parsed afresh
    _spec_file(tmp_path, BUNDLED.read_text().replace("name: a100-80gb", "name: mine"), 1)
    assert load_spec(path).name == "mine" and len(parses) == 2


def test_a_file_written_a_moment_ago_is_not_kept(tmp_path: Path, parses: list[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsed, "RACY_NS", 2_000_000_000)
    path = tmp_path / "fresh.yaml"
    shutil.copyfile(BUNDLED, path)  # its times are now: a second write could keep them
    load_spec(path)
    load_spec(path)
    assert len(parses) == 2


def test_a_damaged_entry_or_an_unwritable_folder_is_a_miss(
        tmp_path: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    path = _spec_file(tmp_path)
    want = load_spec(path)
    for entry in (tmp_path / "cache" / "parsed").iterdir():
        entry.write_text('{"key": ')
    assert load_spec(path) == want and len(parses) == 2
    blocked = tmp_path / "a file"
    blocked.write_text("")
    monkeypatch.setenv("SPARSROOF_CACHE_DIR", str(blocked))  # no folder can be made there
    assert load_spec(path) == want and load_spec(path) == want and len(parses) == 4


def test_what_json_cannot_hold_exactly_is_parsed_every_time(tmp_path: Path,
                                                            parses: list[str]) -> None:
    # a date is no JSON value: the (invalid) spec is parsed, and refused, every time
    path = _spec_file(tmp_path, BUNDLED.read_text() + "released: 2020-05-14\n")
    for _ in range(2):
        with pytest.raises(SpecError, match="released"):
            load_spec(path)
    assert len(parses) == 2


def test_a_kept_spec_is_read_without_pyyaml(tmp_path: Path) -> None:
    path = _spec_file(tmp_path)
    code = ("import sys\n"
            "from sparsroof.caching import parsed\n"
            "parsed.RACY_NS = 0  # the file was written a moment ago\n"
            "from sparsroof.hardware.library import load_spec\n"
            f"print(load_spec({str(path)!r}).name, 'yaml' in sys.modules)\n")
    env = dict(os.environ) | {"SPARSROOF_CACHE_DIR": str(tmp_path / "cache")}
    runs = [fresh_python(code, check=True, env=env).stdout.split() for _ in range(2)]
    assert runs == [["a100-80gb", "True"], ["a100-80gb", "False"]]


def test_a_file_keeps_one_entry_however_often_it_changes(tmp_path: Path,
                                                         parses: list[str]) -> None:
    path = _spec_file(tmp_path)
    for cores in range(3):
        _spec_file(tmp_path, BUNDLED.read_text().replace("name: a100-80gb",
                                                         f"name: mine-{cores}"), cores + 1)
        assert load_spec(path).name == f"mine-{cores}"
    assert len(parses) == 3 and len(list((tmp_path / "cache" / "parsed").iterdir())) == 1


def test_no_cache_and_a_changed_parser_parse_afresh(tmp_path: Path, parses: list[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = _spec_file(tmp_path)
    load_spec(path)
    with parsed.bypassed():  # a command's --no-cache
        load_spec(path)
    assert len(parses) == 2 and len(list((tmp_path / "cache" / "parsed").iterdir())) == 1
    load_spec(path)
    assert len(parses) == 2  # kept before the bypass, read back after it
    # an edit of the code that parses (here, a module standing for it) parses afresh
    reader = tmp_path / "reader.py"
    reader.write_text("")
    os.utime(reader, ns=(LONG_AGO, LONG_AGO))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(library, "_PARSER", (*library._PARSER, "reader"))
    load_spec(path)
    load_spec(path)
    os.utime(reader, ns=(LONG_AGO + 1, LONG_AGO + 1))
    load_spec(path)
    assert len(parses) == 4


def test_analyze_no_cache_keeps_no_spec(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from sparsroof.cli import cli

    from ..conftest import DATA

    monkeypatch.setattr(parsed, "RACY_NS", 0)
    env = {"SPARSROOF_CACHE_DIR": str(tmp_path / "cache")}
    args = ["analyze", str(DATA / "lap2d_64.mtx"), "--hw", str(_spec_file(tmp_path)), "-O",
            "json"]
    done = CliRunner().invoke(cli, [*args, "--no-cache"], env=env)
    assert done.exit_code == 0 and not (tmp_path / "cache" / "parsed").exists()
    done = CliRunner().invoke(cli, args, env=env)
    assert done.exit_code == 0 and len(list((tmp_path / "cache" / "parsed").iterdir())) == 1
