"""The colours a structure class is drawn in: one look for a class in every figure and on
the HTML page, whatever classes a store holds."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["PALETTE", "class_styles", "fill_of"]

#: Okabe & Ito's colour-blind-safe palette (black kept for the roofs), yellow last:
#: it is the hardest to read on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#F0E442")


def fill_of(index: int, color: str) -> tuple[str, str]:
    """(face, edge) colours of the ``index``-th series drawn in ``color``: past the palette
    the fill changes (filled, hollow, filled with a black edge), so that up to three times
    as many series as colours never share both colour and look.

    >>> fill_of(0, "#0072B2"), fill_of(7, "#0072B2"), fill_of(14, "#0072B2")
    (('#0072B2', 'white'), ('white', '#0072B2'), ('#0072B2', 'black'))
    """
    cycle = (index // len(PALETTE)) % 3
    return ((color, "white"), ("white", color), (color, "black"))[cycle]


def class_styles(labels: Iterable[str]) -> dict[str, tuple[str, str, str]]:
    """(colour, face, edge) of each structure class in ``labels``: the classifier's classes
    in its order, then any other label by name, so that a class keeps its look whatever
    other classes a figure shows.

    >>> s = class_styles(["random", "banded", "mixed"])
    >>> s["banded"], s["mixed"]
    (('#0072B2', '#0072B2', 'white'), ('#009E73', 'white', '#009E73'))
    """
    from ..structure.classify import CLASSES

    wanted = set(labels)
    order = [*CLASSES, *sorted(wanted - set(CLASSES))]
    styles = {}
    for label in wanted:
        i = order.index(label)
        color = PALETTE[i % len(PALETTE)]
        styles[label] = (color, *fill_of(i, color))
    return styles
