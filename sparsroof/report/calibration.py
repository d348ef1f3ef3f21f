"""What ``calibrate`` says when it is done, and calibrated predictions beside an analysis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..host.calibration import NOISE_TOLERANCE, SORTED_EXCESS, Calibration, Sample
from ..units import si

__all__ = ["predictions_text", "calibration_summary", "calibration_flags"]


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
    for name, (window, latency) in sorted(cal.stall.items()):
        excess = (" (beyond the same rows sorted by length)" if name in SORTED_EXCESS
                  else "")
        lines.append(f"{name}: stall of its additions into y{excess}, simulated with "
                     f"{window:,} in flight, {latency:g} issue slots apart in one row")
    for name, fit in sorted(cal.fits.items()):
        held = (f", {100 * fit.held_out_median:.1f} % held out of the fit"
                if fit.held_out_median is not None else "")
        lines.append(f"{name}: {fit.samples} runs, median error {100 * fit.median_error:.1f} %"
                     f"{held}, worst {100 * fit.max_error:.1f} %")
    disturbed = sum(s.spread > NOISE_TOLERANCE for s in samples)
    if disturbed and rounds > 1:
        lines.append(f"{disturbed} of {len(samples)} runs differed by more than "
                     f"{100 * NOISE_TOLERANCE:.0f} % between passes")
    return lines + calibration_flags(cal)


def calibration_flags(cal: Calibration) -> list[str]:
    """Why ``cal`` is flagged, one warning line each (none when it is not)."""
    lines = [f"FLAGGED: roof raised: {note} (a busy host; bounds from this roof are those "
             "of the slower level)" for note in cal.repaired]
    if cal.noisy:
        lines.append("FLAGGED: noisy: the same runs took different times from one pass to "
                     "the next (other work, or a virtual machine's neighbours); calibrate "
                     "again when the host is quiet, or with more --rounds")
    return lines
