"""Using a saved calibration: a spec whose cache levels are bounded by the roofs the
calibration measured, and calibrated SpMV times for analysed matrices."""

from __future__ import annotations

from typing import Any

from ..analysis import Analysis
from ..errors import CalibrationError
from ..hardware.spec import HwSpec
from ..matrix.mtx import Matrix
from .calibration import Calibration
from .calibration import load as load_calibration
from .memory_roofs import effective_roofs, monotone_roofs, with_roofs

__all__ = ["load_calibrated", "prediction"]


def load_calibrated(spec: HwSpec, calibration_file: str | None
                    ) -> tuple[HwSpec, Calibration | None]:
    """``spec`` with the cache roofs measured by the calibration in ``calibration_file``,
    and the calibration (``spec`` unchanged and None without a file). Refused when the
    calibration's roofs beside ``spec``'s fall down the hierarchy (a calibration made
    with another spec)."""
    if not calibration_file:
        return spec, None
    cal = load_calibration(calibration_file)
    source = f"measured by sparsroof calibrate ({calibration_file})"
    spec = with_roofs(spec, cal.roofs, source)
    _, falling = monotone_roofs(effective_roofs(spec), [lvl.name for lvl in spec.memory])
    if falling:
        raise CalibrationError(calibration_file, f"impossible roofs with {spec.name}: "
                               f"{'; '.join(falling)}; calibrate with this spec")
    return spec, cal


def prediction(cal: Calibration, calibration_file: str, matrix: Matrix, a: Analysis
               ) -> dict[str, Any]:
    """Calibrated SpMV seconds of ``matrix`` in each calibrated format analysed in ``a``."""
    storages = dict.fromkeys(r.traffic.storage for r in a.results)
    return {"matrix": a.matrix.name, "calibration": calibration_file,
            "predicted_s": cal.predict_matrix(matrix, a.structure, storages)}
