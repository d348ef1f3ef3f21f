"""The spy figure drawn straight to pixels with Pillow: PNG files and the report's thumbnails.

:func:`sparsroof.plot.spy.spy_figure` draws with matplotlib, whose import alone takes
about half a CPU-second, as long as loading a 10M-entry file; a density image, two axes
of ticks and a colour bar need none of it. :func:`spy_image` draws the same figure (the
same cells, colour map and logarithmic scale, tick places, labels, overlays and title,
from the helpers of :mod:`sparsroof.plot.spy`) into a Pillow image, the library matplotlib
itself writes its PNGs with; SVG and PDF figures stay matplotlib's. The text is set in
DejaVu Sans, matplotlib's own font, read from matplotlib's data folder without importing
it (Pillow's built-in font where that file is missing).

The colour map is viridis (by Nathaniel Smith and Stéfan van der Walt, in the public
domain), its 256 colours as matplotlib turns them into bytes; a count c of a scale
topping at T takes colour ⌊256 · log c / log T⌋ (the last at most), as matplotlib's
``LogNorm(1, T)`` then the map give it.
"""

from __future__ import annotations

import importlib.util
import io
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..matrix.mtx import Matrix
from .spy import (
    GUIDE_COLOUR,
    Density,
    axis_label,
    band_edge,
    band_note,
    bar_label,
    caption,
    density,
    few_cells,
    grid_note,
    grid_step,
    marks_note,
    squareish,
)
from .style import check_pixels, write_png, writing

if TYPE_CHECKING:
    from PIL import Image as PILImage
    from PIL import ImageDraw, ImageFont

__all__ = ["viridis", "colours", "spy_image", "save_spy", "thumbnail_png", "ticks",
           "clip_segment"]

_VIRIDIS = (
    '44015444025544035745055845065a45085b46095c460b5e460c5f460e61470f62471163471265471466'
    '47156747166947186a48196b481a6c481c6e481d6f481e70482071482172482273482374472575472676'
    '472777472878472a79472b7a472c7b462d7c462f7c46307d46317e45327f45347f453580453681443781'
    '443982433a83433b83433c84423d84423e854240854141864142864043874044873f45873f47883e4888'
    '3e49893d4a893d4b893d4c893c4d8a3c4e8a3b508a3b518a3a528b3a538b39548b39558b38568b38578c'
    '37588c37598c365a8c365b8c355c8c355d8c345e8d345f8d33608d33618d32628d32638d31648d31658d'
    '31668d30678d30688d2f698d2f6a8d2e6b8e2e6c8e2e6d8e2d6e8e2d6f8e2c708e2c718e2c728e2b738e'
    '2b748e2a758e2a768e2a778e29788e29798e287a8e287a8e287b8e277c8e277d8e277e8e267f8e26808e'
    '26818e25828e25838d24848d24858d24868d23878d23888d23898d22898d228a8d228b8d218c8d218d8c'
    '218e8c208f8c20908c20918c1f928c1f938b1f948b1f958b1f968b1e978a1e988a1e998a1e998a1e9a89'
    '1e9b891e9c891e9d881e9e881e9f881ea0871fa1871fa2861fa38620a48520a58521a68521a78422a784'
    '23a88323a98224aa8225ab8126ac8127ad8028ae7f29af7f2ab07e2bb17d2cb17d2eb27c2fb37b30b47a'
    '32b57a33b67935b77836b87738b97639b9763bba753dbb743ebc7340bd7242be7144be7045bf6f47c06e'
    '49c16d4bc26c4dc26b4fc36951c46853c56755c66657c66559c7645bc8625ec96160c96062ca5f64cb5d'
    '67cc5c69cc5b6bcd596dce5870ce5672cf5574d05477d05279d1517cd24f7ed24e81d34c83d34b86d449'
    '88d5478bd5468dd64490d64392d74195d73f97d83e9ad83c9dd93a9fd938a2da37a5da35a7db33aadb32'
    'addc30afdc2eb2dd2cb5dd2bb7dd29bade27bdde26bfdf24c2df22c5df21c7e01fcae01ecde01dcfe11c'
    'd2e11bd4e11ad7e219dae218dce218dfe318e1e318e4e318e7e419e9e419ece41aeee51bf1e51cf3e51e'
    'f6e61ff8e621fae622fde724'
)


@cache
def viridis() -> np.ndarray:
    """The 256 colours of viridis, rows of (red, green, blue) bytes."""
    return np.frombuffer(bytes.fromhex(_VIRIDIS), np.uint8).reshape(256, 3)


def colours(counts: np.ndarray, top: int) -> np.ndarray:
    """Each cell's colour (rows x columns x 3 bytes) on a log scale from 1 to ``top``;
    empty cells white.

    >>> colours(np.array([[0, 1, 10]]), 10).tolist()
    [[[255, 255, 255], [68, 1, 84], [253, 231, 36]]]
    """
    rgb = _mapped(np.log10(np.maximum(counts, 1)) / math.log10(top))
    rgb[counts == 0] = 255
    return rgb


def _mapped(scale: np.ndarray) -> np.ndarray:
    """The colours of places 0 to 1 on the scale: colour ⌊256 · x⌋, the last at most."""
    return viridis()[np.minimum((scale * 256).astype(np.intp), 255)]


def ticks(high: float, length_pt: float, label_pt: float) -> list[float]:
    """Tick places on an axis from 0 to ``high`` of ``length_pt`` points, the way
    matplotlib's default locator puts them: at most one interval per ``label_pt``
    points (and at most 9), each the smallest of 1, 2, 2.5, 5 and 10 times a power of
    ten that is at least ``high`` over that many intervals, or the largest that leaves
    two ticks on the axis.

    >>> ticks(1_000_000, 330, 30)
    [0.0, 200000.0, 400000.0, 600000.0, 800000.0, 1000000.0]
    >>> ticks(64, 300, 20)
    [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    """
    intervals = max(1, min(9, int(length_pt // label_pt)))
    raw = high / intervals
    if raw <= 0:
        return [0.0]
    power = 10.0 ** math.floor(math.log10(raw))
    steps = [m * power * scale for scale in (0.1, 1, 10) for m in (1, 2, 2.5, 5)]
    at = next(k for k, step in enumerate(steps) if step >= raw * (1 - 1e-9))
    # a smaller step where this one would leave a single tick on the axis
    while at > 0 and steps[at] > high * (1 + 1e-9):
        at -= 1
    step = steps[at]
    return [k * step for k in range(int(high / step * (1 + 1e-9)) + 1)]


def _bar_ticks(top: int) -> list[tuple[float, bool, bool]]:
    """The colour bar's ticks from 1 to ``top``: (count, major, labelled). Powers of ten
    are major and labelled; between them, matplotlib's rule for a log axis' minor labels:
    none where the bar reaches 10, 2, 3, 4 and 6 over 0.4 of a decade, all of them below."""
    decades = math.log10(top)
    shown = set() if top >= 10 else {2, 3, 4, 6} if decades > 0.4 else set(range(2, 10))
    found = []
    for power in range(int(decades) + 1):
        for digit in range(1, 10):
            value = digit * 10**power
            if value <= top:
                found.append((float(value), digit == 1, digit == 1 or digit in shown))
    return found


@cache
def _font_file() -> str | None:
    """matplotlib's DejaVu Sans, found without importing matplotlib."""
    spec = importlib.util.find_spec("matplotlib")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder, "mpl-data", "fonts", "ttf", "DejaVuSans.ttf")
        if path.is_file():
            return str(path)
    return None


@cache
def _font(pixels: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    path = _font_file()
    if path is not None:
        return ImageFont.truetype(path, pixels)
    try:
        return ImageFont.load_default(size=pixels)
    except TypeError:  # Pillow before 10.1: one size
        return ImageFont.load_default()


@dataclass
class _Pen:
    """Drawing on ``image`` with lengths in points at ``dpi``."""

    image: PILImage.Image
    draw: ImageDraw.ImageDraw
    dpi: float

    def px(self, points: float) -> float:
        return points * self.dpi / 72

    def width(self, points: float) -> int:
        return max(1, round(self.px(points)))

    def font(self, points: float) -> Any:
        return _font(max(1, round(self.px(points))))

    def size(self, text: str, points: float) -> tuple[int, int]:
        """Width and height of one line of ``text``: the font's ascender to descender, as
        matplotlib lays out a label."""
        font = self.font(points)
        box = self.draw.textbbox((0, 0), text, font=font, anchor="la")
        ascent, descent = font.getmetrics() if hasattr(font, "getmetrics") else (box[3], 0)
        return round(box[2] - box[0]), int(ascent + descent)

    def text(self, xy: tuple[float, float], text: str, points: float, anchor: str) -> None:
        self.draw.text(xy, text, fill="black", font=self.font(points), anchor=anchor)

    def upright(self, xy: tuple[float, float], text: str, points: float) -> None:
        """``text`` read from bottom to top, centred on ``xy``."""
        from PIL import Image, ImageDraw

        width, height = self.size(text, points)
        label = Image.new("L", (width + 2, height + 2), 0)
        ImageDraw.Draw(label).text((1, 1), text, fill=255, font=self.font(points),
                                   anchor="la")
        label = label.rotate(90, expand=True)
        corner = (round(xy[0] - label.width / 2), round(xy[1] - label.height / 2))
        self.image.paste((0, 0, 0), (*corner, corner[0] + label.width,
                                     corner[1] + label.height), label)


#: sizes of matplotlib's defaults, in points: text, title, tick length, tick pad,
#: label pad, line width
_TEXT, _TITLE, _TICK, _TICK_PAD, _LABEL_PAD, _LINE = 10.0, 9.0, 3.5, 3.5, 4.0, 0.8
#: the room a tick label takes along an axis, in font sizes (across x, along y)
_ROOM_X, _ROOM_Y = 3.0, 2.0


def spy_image(matrix: Matrix, *, bins: int = 512, block: int | None = None,
              band: int | None = None, size: tuple[float, float] = (6.5, 6.0),
              dpi: int = 150) -> PILImage.Image:
    """The figure of :func:`sparsroof.plot.spy.spy_figure`, as an RGB image of ``size``
    inches at ``dpi``, cropped to what is drawn and a margin of a tenth of an inch."""
    from PIL import Image, ImageDraw

    check_pixels(size, dpi)
    d = density(matrix, bins)
    marks = few_cells(d)
    step = grid_step(matrix, block) if block else 0
    notes = ([marks_note(marks[0].size)] if marks[0].size else []) + (
        [grid_note(step, block)] if block else []) + (
        [band_note(band)] if band is not None else [])
    # the figure is laid out inside its size less the crop's margin, on a canvas an inch
    # larger a side for what a long title or label puts outside it (cropped after)
    pad = round(dpi / 10)
    width, height = round(size[0] * dpi) - 2 * pad, round(size[1] * dpi) - 2 * pad
    title = caption(matrix, notes).split("\n")
    dot = Image.new("RGB", (1, 1))
    scratch = _Pen(dot, ImageDraw.Draw(dot), dpi)
    # a title wider than the figure stands out of it, whole: the canvas makes room
    margin = dpi + pad
    # a title wider than the figure stands out of it, whole, by up to an inch a side (the
    # canvas makes room); a longer one gives up the middle of its line
    title = [_fitted(scratch, t, _TITLE, width + 2 * dpi) for t in title]
    side = margin + max(max(scratch.size(t, _TITLE)[0] for t in title) - width, 0) // 2
    image = Image.new("RGB", (width + 2 * side, height + 2 * margin), "white")
    pen = _Pen(image, ImageDraw.Draw(image), dpi)
    top = max(int(d.counts.max()), 2)
    bar = _bar_ticks(top)
    text_h = pen.size("0", _TEXT)[1]
    line_h = pen.size("0", _TITLE)[1] * 1.2
    tick_out = pen.px(_TICK + _TICK_PAD)

    # the room the decorations take, then the axes' box in what is left
    top_room = len(title) * line_h + pen.px(10) + 2 * text_h + pen.px(_LABEL_PAD) + tick_out
    left_guess = ticks(matrix.rows, height / dpi * 72, _TEXT * _ROOM_Y)
    left_room = (text_h + pen.px(_LABEL_PAD) + tick_out
                 + max(pen.size(axis_label(v), _TEXT)[0] for v in left_guess))
    bar_room = (0.03 * width + 0.8 * height / 20 + tick_out + pen.px(_LABEL_PAD) + text_h
                + max(pen.size(f"{v:g}", _TEXT)[0] for v, _, shown in bar if shown))
    x0, y0 = side + left_room, margin + top_room
    box_w = max(width - left_room - bar_room, 8.0)
    box_h = max(height - top_room - text_h / 2, 8.0)
    if squareish(matrix):
        cols, rows = max(matrix.cols, 1), max(matrix.rows, 1)
        box_w, box_h = min(box_w, box_h * cols / rows), min(box_h, box_w * rows / cols)
    x0, y0, box_w, box_h = round(x0), round(y0), round(box_w), round(box_h)

    image.paste(Image.fromarray(colours(_sampled(d.counts, box_w, box_h), top)), (x0, y0))
    _overlays(image, (x0, y0, box_w, box_h), matrix, d, marks, step, band, top, pen)
    line = pen.width(_LINE)
    pen.draw.rectangle((x0 - line // 2 - 1, y0 - line // 2 - 1, x0 + box_w + line // 2,
                        y0 + box_h + line // 2), outline="black", width=line)
    _axes_ticks(pen, (x0, y0, box_w, box_h), matrix)
    _colour_bar(pen, (x0, y0, box_w, box_h), 0.03 * width, top, bar, d)
    # the title over the axes' centre, kept on the canvas
    centre = x0 + box_w / 2
    widest = max(pen.size(t, _TITLE)[0] for t in title)
    centre = min(max(centre, widest / 2 + 1), image.width - widest / 2 - 1)
    first = y0 - tick_out - 2 * text_h - pen.px(_LABEL_PAD) - pen.px(10)
    for k, text in enumerate(title):
        pen.text((centre, first - (len(title) - 1 - k) * line_h), text, _TITLE, "md")
    return _cropped(image, pad)


def _fitted(pen: _Pen, text: str, points: float, most: float) -> str:
    """``text``, or where it is wider than ``most`` pixels the same with the middle of its
    name (what stands before the first ": ", else the whole line) given up for an
    ellipsis, keeping as many characters as fit.

    >>> from PIL import Image, ImageDraw
    >>> dot = Image.new("RGB", (1, 1))
    >>> pen = _Pen(dot, ImageDraw.Draw(dot), 72)
    >>> _fitted(pen, "abc", 9, 100), _fitted(pen, "m" * 60 + ": 3 x 3", 9, 100)
    ('abc', 'mmmm…mmm: 3 x 3')
    """
    if pen.size(text, points)[0] <= most:
        return text
    name, colon, rest = text.partition(": ")
    if not colon or pen.size(_elided(name, 0) + colon + rest, points)[0] > most:
        name, colon, rest = text, "", ""
    lo, hi = 0, len(name)  # the most characters of the name kept that fit
    while lo < hi:
        keep = (lo + hi + 1) // 2
        if pen.size(_elided(name, keep) + colon + rest, points)[0] <= most:
            lo = keep
        else:
            hi = keep - 1
    return _elided(name, lo) + colon + rest


def _elided(text: str, keep: int) -> str:
    """``text`` with all but ``keep`` of its characters, from its middle, given up for an
    ellipsis."""
    head = (keep + 1) // 2
    return text[:head] + "…" + text[len(text) - (keep - head):]


def _sampled(counts: np.ndarray, wide: int, high: int) -> np.ndarray:
    """The cell under the centre of each of ``wide`` x ``high`` pixels (nearest sampling,
    as Pillow resizes): the pixels' counts, coloured after, so that a fine grid of cells
    is never turned into colours whole."""
    from PIL import Image

    cells = Image.fromarray(np.minimum(counts, 2**31 - 1).astype(np.int32))  # mode "I"
    return np.asarray(cells.resize((wide, high), Image.Resampling.NEAREST))


def _axes_ticks(pen: _Pen, box: tuple[int, int, int, int], matrix: Matrix) -> None:
    """Columns along the top, rows down the left: ticks outward, labels, axis names."""
    x0, y0, box_w, box_h = box
    tick, pad, line = pen.px(_TICK), pen.px(_TICK_PAD), pen.width(_LINE)
    text_h = pen.size("0", _TEXT)[1]
    for value in ticks(matrix.cols, box_w / pen.dpi * 72, _TEXT * _ROOM_X):
        x = x0 + value / max(matrix.cols, 1) * box_w
        pen.draw.line((x, y0, x, y0 - tick), fill="black", width=line)
        pen.text((x, y0 - tick - pad), axis_label(value), _TEXT, "md")
    pen.text((x0 + box_w / 2, y0 - tick - pad - text_h - pen.px(_LABEL_PAD)), "column",
             _TEXT, "md")
    widest = 0
    for value in ticks(matrix.rows, box_h / pen.dpi * 72, _TEXT * _ROOM_Y):
        y = y0 + value / max(matrix.rows, 1) * box_h
        pen.draw.line((x0, y, x0 - tick, y), fill="black", width=line)
        pen.text((x0 - tick - pad, y), axis_label(value), _TEXT, "rm")
        widest = max(widest, pen.size(axis_label(value), _TEXT)[0])
    pen.upright((x0 - tick - pad - widest - pen.px(_LABEL_PAD) - text_h / 2,
                 y0 + box_h / 2), "row", _TEXT)


def _colour_bar(pen: _Pen, box: tuple[int, int, int, int], gap: float, top: int,
                bar: list[tuple[float, bool, bool]], d: Density) -> None:
    """The colour bar right of the axes, four fifths of their height and a twentieth of
    that wide, with its ticks and label."""
    from PIL import Image

    x0, y0, box_w, box_h = box
    high = max(round(0.8 * box_h), 2)
    # a twentieth of its height, at most a twentieth of the axes' width (a tall figure)
    wide = max(round(min(high, box_w) / 20), 2)
    left, upper = round(x0 + box_w + gap), round(y0 + (box_h - high) / 2)
    # row r from the top shows the colour of the scale at 1 − (r + ½) / high
    scale = 1 - (np.arange(high) + 0.5) / high
    strip = _mapped(scale)
    pen.image.paste(Image.fromarray(np.repeat(strip[:, None, :], wide, axis=1)),
                    (left, upper))
    line = pen.width(_LINE)
    pen.draw.rectangle((left - line // 2 - 1, upper - line // 2 - 1,
                        left + wide + line // 2, upper + high + line // 2),
                       outline="black", width=line)
    right = left + wide + line // 2
    widest = 0
    for value, major, shown in bar:
        y = upper + high * (1 - math.log10(value) / math.log10(top))
        length = pen.px(_TICK if major else 2.0)
        pen.draw.line((right, y, right + length, y), fill="black",
                      width=pen.width(_LINE if major else 0.6))
        if shown:
            pen.text((right + pen.px(_TICK + _TICK_PAD), y), f"{value:g}", _TEXT, "lm")
            widest = max(widest, pen.size(f"{value:g}", _TEXT)[0])
    text_h = pen.size("0", _TEXT)[1]
    edge = right + pen.px(_TICK + _TICK_PAD) + widest + pen.px(_LABEL_PAD) + text_h / 2
    pen.upright((edge, upper + high / 2), bar_label(d), _TEXT)


def _overlays(image: PILImage.Image, box: tuple[int, int, int, int], matrix: Matrix,
              d: Density, marks: tuple[np.ndarray, np.ndarray], step: int,
              band: int | None, top: int, pen: _Pen) -> None:
    """The grid, the band's guides and the few cells' markers, drawn twice as fine on a
    layer of the axes' size, then averaged down (smooth edges) and laid over the image."""
    from PIL import Image, ImageDraw

    if not step and band is None and not marks[0].size:
        return
    x0, y0, box_w, box_h = box
    fine = 2 if pen.dpi < 300 else 1  # finer than 300 DPI, the pixels are fine enough
    layer = Image.new("RGBA", (box_w * fine, box_h * fine), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    sx, sy = box_w * fine / max(matrix.cols, 1), box_h * fine / max(matrix.rows, 1)
    guide = tuple(int(GUIDE_COLOUR[k:k + 2], 16) for k in (1, 3, 5))
    if step:
        width = max(1, round(pen.px(0.5) * fine))
        faint = (*guide, round(0.45 * 255))
        for x in range(step, matrix.cols, step):
            draw.line((x * sx, 0, x * sx, layer.height), fill=faint, width=width)
        for y in range(step, matrix.rows, step):
            draw.line((0, y * sy, layer.width, y * sy), fill=faint, width=width)
    if band is not None:
        edge = band_edge(band, max(d.cell_rows, d.cell_cols))
        n = max(matrix.rows, matrix.cols)
        width = max(1, round(pen.px(0.9) * fine))
        on, off = pen.px(4 * 0.9) * fine, pen.px(2 * 0.9) * fine
        for sign in (1, -1):  # the lines j = i ± edge, dashed where they cross the layer
            ax, ay, bx, by = 0.0, -sign * edge * sy, n * sx, (n - sign * edge) * sy
            length = math.hypot(bx - ax, by - ay)
            seen = clip_segment((ax, ay, bx, by), (-width, -width, layer.width + width,
                                                    layer.height + width))
            if seen is None or seen[0] >= seen[1]:
                continue
            period = on + off  # the dashes keep their places along the whole line
            first = math.floor(seen[0] * length / period) * period
            for start in np.arange(first, seen[1] * length, period):
                a, b = start / length, min(start + on, length) / length
                draw.line((ax + a * (bx - ax), ay + a * (by - ay), ax + b * (bx - ax),
                           ay + b * (by - ay)), fill=(*guide, 255), width=width)
    if marks[0].size:
        half = pen.px(math.sqrt(18)) * fine / 2
        rgb = colours(d.counts[marks], top)
        for r, c, colour in zip(*marks, rgb, strict=True):
            x, y = (c + 0.5) * d.cell_cols * sx, (r + 0.5) * d.cell_rows * sy
            draw.rectangle((x - half, y - half, x + half, y + half), fill=(*colour, 255),
                           outline=(0, 0, 0, 255), width=max(1, round(pen.px(0.4) * fine)))
    layer = layer.reduce(fine)
    base = image.crop((x0, y0, x0 + box_w, y0 + box_h)).convert("RGBA")
    image.paste(Image.alpha_composite(base, layer).convert("RGB"), (x0, y0))


def clip_segment(line: tuple[float, float, float, float],
                 box: tuple[float, float, float, float]) -> tuple[float, float] | None:
    """The stretch (t0, t1) of the segment ``line`` (x0, y0, x1, y1), parametrised 0 to 1,
    that lies in ``box`` (x0, y0, x1, y1); None where none does (Liang and Barsky's
    clipping; a segment touching the box at one point gives t0 == t1).

    >>> clip_segment((-10, 5, 30, 5), (0, 0, 10, 10))
    (0.25, 0.5)
    >>> clip_segment((-10, 50, 30, 50), (0, 0, 10, 10)) is None
    True
    """
    x0, y0, x1, y1 = line
    t0, t1 = 0.0, 1.0
    for step, room in ((x0 - x1, x0 - box[0]), (x1 - x0, box[2] - x0),
                       (y0 - y1, y0 - box[1]), (y1 - y0, box[3] - y0)):
        if abs(step) < 1e-12:
            if room < 0:
                return None
            continue
        t = room / step
        if step < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    return t0, t1


def _cropped(image: PILImage.Image, pad: int) -> PILImage.Image:
    """``image`` cut to what differs from white, with ``pad`` pixels around."""
    ink = np.asarray(image).min(axis=2) < 255
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not rows.size:
        return image
    return image.crop((max(cols[0] - pad, 0), max(rows[0] - pad, 0),
                       min(cols[-1] + pad + 1, image.width),
                       min(rows[-1] + pad + 1, image.height)))


def save_spy(image: PILImage.Image, path: str | Path, dpi: int) -> Path:
    """Write a :func:`spy_image` as the PNG ``path``."""
    path = Path(path)
    with writing(path) as out:
        write_png(out, np.asarray(image), dpi, {"Software": "sparsroof"})
    return path


def thumbnail_png(matrix: Matrix, pixels: int) -> bytes:
    """A ``pixels`` x ``pixels`` PNG of the matrix's density, without axes: the longer
    side fills it, the shorter is centred on white."""
    from PIL import Image

    d = density(matrix, bins=pixels)
    longest = max(matrix.rows, matrix.cols, 1)
    wide = max(1, round(pixels * max(matrix.cols, 1) / longest))
    high = max(1, round(pixels * max(matrix.rows, 1) / longest))
    cells = colours(_sampled(d.counts, wide, high), max(int(d.counts.max()), 2))
    picture = Image.new("RGB", (pixels, pixels), "white")
    picture.paste(Image.fromarray(cells), ((pixels - wide) // 2, (pixels - high) // 2))
    buffer = io.BytesIO()
    write_png(buffer, np.asarray(picture), 100, {"Software": "sparsroof"})
    return buffer.getvalue()
