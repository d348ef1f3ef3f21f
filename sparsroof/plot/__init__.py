"""Figures of sparsroof results: roofline, time-based roofline, ridgeline, sparsity
roofline and spy plots.

The only part of sparsroof that uses matplotlib, and only inside functions: importing
this package does not import matplotlib. Every ``*_figure`` function returns a
``matplotlib.figure.Figure`` built with the object API (no pyplot state); :func:`save`
writes it as PNG, SVG or PDF by the file's suffix.
"""

from __future__ import annotations

from .points import RoofPoint, read_results, roof_points
from .roof import roofline_figure
from .style import FigureError, figure_format, parse_size, save

__all__ = [
    "FigureError",
    "RoofPoint",
    "figure_format",
    "parse_size",
    "read_results",
    "roof_points",
    "roofline_figure",
    "save",
]
