from __future__ import annotations

from pathlib import Path

import pytest

from sparsroof.errors import SpecError
from sparsroof.hwspec import bundled_names, load_spec


@pytest.mark.parametrize("name", bundled_names())
def test_bundled_specs_load(name: str) -> None:
    spec = load_spec(name)
    assert spec.memory and spec.peaks
    assert all(q.source for q in spec.peaks.values())


def test_user_yaml_by_path_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "mine.yaml"
    good.write_text(
        "name: mine\ndevice: test box\nkind: cpu\n"
        "peaks: {simt: {fp64: {value: 1 TFLOP/s, source: made up for a test}}}\n"
        "memory: [{name: DRAM, bandwidth: {value: 100 GB/s, source: made up}}]\n"
    )
    spec = load_spec(str(good))
    assert spec.dram.bandwidth.value == 100e9
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("100 GB/s", "100 GB"))
    with pytest.raises(SpecError, match=r"bad.yaml: memory.DRAM.bandwidth: '100 GB' is not a"):
        load_spec(str(bad))
    with pytest.raises(SpecError, match="no such file"):
        load_spec(str(tmp_path / "missing.yaml"))
