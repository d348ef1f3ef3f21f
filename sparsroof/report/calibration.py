"""What ``calibrate`` says when it is done, and calibrated predictions beside an analysis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..host.calibration import Calibration, Sample
from ..units import si

__all__ = ["NOISY", "predictions_text", "calibration_summary"]

#: passes whose fastest runs differ by more than this are reported as disturbed
NOISY = 0.2


def predictions_text(preds: Sequence[dict[str, Any]]) -> str:
    """The calibrated predictions of each matrix, one line each, under a heading."""
    lines = ["calibrated SpMV time on this host (sparsroof calibrate):"]
    for p in preds:
        cells = ", ".join(f"{f} {si(t, 's')}" for f, t in p["predicted_s"].items())
        lines.append(f"  {p['matrix']}: {cells or 'no calibrated format among those analysed'}")
    return "\n".join(lines)


def calibration_summary(cal: Calibration, samples: Sequence[Sample], rounds: int
                        ) -> list[str]:
    """What a finished calibration learned and how well it fits, one line each."""
    lines = [
        f"the branch predictor learns about {cal.branch_memory:,.0f} mispredicted row exits "
        "of a repeated product",
        f"a working set is served by a cache while it fills at most {100 * cal.fill:.0f} % of "
        f"it; runs held out of the fit are predicted with a mean error of "
        f"{100 * (cal.held_out_error or 0):.1f} %",
    ]
    for name, fit in sorted(cal.fits.items()):
        held = (f", {100 * fit.held_out_median:.1f} % held out of the fit"
                if fit.held_out_median is not None else "")
        lines.append(f"{name}: {fit.samples} runs, median error {100 * fit.median_error:.1f} %"
                     f"{held}, worst {100 * fit.max_error:.1f} %")
    noisy = sum(s.spread > NOISY for s in samples)
    if noisy and rounds > 1:
        lines.append(f"{noisy} of {len(samples)} runs differed by more than {100 * NOISY:.0f} % "
                     "between passes: other work disturbed this host; calibrate again when it "
                     "is quiet, or with more --rounds")
    return lines
