"""Text set at an angle: the direction each glyph runs in, and the frame in which a run reads upright.

A glyph's text matrix ``(a, b, c, d, e, f)`` (pdfplumber's ``char["matrix"]``) carries its baseline's
direction: ``(a, b)`` points along it, so its angle is ``atan2(b, a)``, counter-clockwise from the
page's x axis. pdfminer's ``upright`` flag only says whether the matrix is free of rotation by 90
degrees: text turned upside down (180) or slanted (a 45-degree watermark) is "upright" to it, and text
turned a quarter round is sorted top to bottom although it reads bottom to top, which is how an
arXiv margin stamp came out as "a r X i v : 4002 . 3v60940" (issue 31).

Rule: glyphs are grouped by angle, rounded to a whole degree and snapped to the nearest quarter
turn within ``SNAP`` degrees, angles within ``SPREAD`` degrees of each other together; each group
is moved into its own frame (the page rotated so that the group's baseline runs left to right,
lines top to bottom), where the ordinary word and line rules read it. The frame of the group
holding most glyphs is the page's body; the other groups are set apart (``geometry.Aside``).
Nothing here imports pdfplumber: glyphs are the plain dicts it reports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SNAP = 2  # degrees: an angle this close to a quarter turn is that quarter turn
SPREAD = 10  # degrees: glyphs at angles this close are read as one group (a scan's skewed lines)


def glyph_angle(matrix: Sequence[float] | None) -> int:
    """The direction a glyph's baseline runs in, in whole degrees in ``(-180, 180]``; 0 for none."""
    if not matrix or len(matrix) < 2 or (matrix[0] == 0 and matrix[1] == 0):
        return 0
    angle = round(math.degrees(math.atan2(matrix[1], matrix[0])))
    quarter = round(angle / 90) * 90
    if abs(angle - quarter) <= SNAP:
        angle = quarter
    return 180 if angle == -180 else angle


@dataclass(frozen=True, slots=True)
class Frame:
    """The page turned by ``-angle``: coordinates in which text at ``angle`` reads left to right.

    Points are pdfplumber's (x right, top down); ``width`` and ``height`` are the turned page's.
    """

    angle: int
    cos: float
    sin: float
    dx: float
    dt: float
    width: float
    height: float
    page_height: float

    def point(self, x: float, top: float) -> tuple[float, float]:
        """A page point in this frame: rotate by ``-angle`` about the origin (with y up), then shift
        so the turned page starts at 0."""
        y = self.page_height - top
        return x * self.cos + y * self.sin - self.dx, x * self.sin - y * self.cos - self.dt

    def box(self, x0: float, top: float, x1: float, bottom: float) -> tuple[float, float, float, float]:
        """The smallest upright box in this frame holding a page box's four corners."""
        xs, ts = zip(*(self.point(x, t) for x in (x0, x1) for t in (top, bottom)), strict=True)
        return min(xs), min(ts), max(xs), max(ts)

    def on_page(self, fx: float, ftop: float) -> tuple[float, float]:
        """The page point at ``(fx, ftop)`` of this frame: ``point`` undone (its rotation, a reflection
        once y is turned down, is its own inverse)."""
        u, v = fx + self.dx, ftop + self.dt
        return u * self.cos + v * self.sin, self.page_height - (u * self.sin - v * self.cos)

    def page_box(self, x0: float, top: float, x1: float, bottom: float) -> tuple[float, float, float, float]:
        """The smallest upright page box holding a box of this frame."""
        xs, ts = zip(*(self.on_page(x, t) for x in (x0, x1) for t in (top, bottom)), strict=True)
        return min(xs), min(ts), max(xs), max(ts)


def frame(angle: int, width: float, height: float) -> Frame:
    """The frame for text at ``angle`` on a page of ``width`` x ``height`` points."""
    radians = math.radians(angle)
    cos, sin = round(math.cos(radians), 12), round(math.sin(radians), 12)
    turned = Frame(angle, cos, sin, 0.0, 0.0, 0.0, 0.0, height)
    xs, ts = zip(*(turned.point(x, t) for x in (0.0, width) for t in (0.0, height)), strict=True)
    return Frame(angle, cos, sin, min(xs), min(ts), max(xs) - min(xs), max(ts) - min(ts), height)


def glyph_in_frame(glyph: Mapping[str, Any], turned: Frame) -> dict[str, Any]:
    """A glyph's dict with its box (and size) in ``turned``, marked upright.

    At a quarter turn the page box's corners are the glyph's own. At other angles the page box of a
    slanted glyph is larger than the glyph, so the box is rebuilt about its centre from the glyph's
    advance (``adv`` scaled by the matrix) and the height that, turned, fills the page box.
    """
    if turned.angle == 0:
        return dict(glyph)
    x0, top, x1, bottom = (float(glyph[key]) for key in ("x0", "top", "x1", "bottom"))
    if turned.angle % 90 == 0:
        fx0, ftop, fx1, fbottom = turned.box(x0, top, x1, bottom)
    else:
        matrix = glyph.get("matrix") or (1.0, 0.0)
        along = float(glyph.get("adv") or 0.0) * math.hypot(matrix[0], matrix[1])
        cos, sin = abs(turned.cos), abs(turned.sin)
        # the page box of a glyph turned by the angle is along*cos + across*sin wide and
        # along*sin + across*cos high: solved for ``across`` through the larger of cos and sin
        across = (bottom - top - along * sin) / cos if cos >= sin else (x1 - x0 - along * cos) / sin
        across = max(across, 0.1)
        cx, ct = turned.point((x0 + x1) / 2, (top + bottom) / 2)
        fx0, ftop, fx1, fbottom = cx - along / 2, ct - across / 2, cx + along / 2, ct + across / 2
    return {
        **glyph,
        "x0": fx0,
        "x1": fx1,
        "top": ftop,
        "bottom": fbottom,
        "doctop": ftop,
        "size": fbottom - ftop,
        "upright": True,
    }


def by_angle(glyphs: Sequence[Mapping[str, Any]]) -> dict[int, list[Mapping[str, Any]]]:
    """Glyphs grouped by the angle their baselines run at, angles within ``SPREAD`` degrees of one
    another as one group under the angle most of its visible glyphs run at, the largest group first.

    A scan's text layer (OCR) sets each line at its own small skew, 1 degree here, 4 there: read
    as groups of their own, all but one would be set apart from the body, so near angles go
    together; a watermark at 45 degrees or a stamp at 90 stays apart.
    """
    exact: dict[int, list[Mapping[str, Any]]] = {}
    for glyph in glyphs:
        exact.setdefault(glyph_angle(glyph.get("matrix")), []).append(glyph)
    counts = {angle: _visible(found) for angle, found in exact.items()}
    groups: dict[int, list[Mapping[str, Any]]] = {}
    for angle in sorted(exact, key=lambda a: (-counts[a], a != 0, a)):
        near = next((kept for kept in groups if abs(relative_angle(angle, kept)) <= SPREAD), None)
        groups.setdefault(angle if near is None else near, []).extend(exact[angle])
    return groups


def _visible(glyphs: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for glyph in glyphs if not str(glyph.get("text", "")).isspace())


def relative_angle(angle: int, base: int) -> int:
    """``angle`` measured from ``base``, in ``(-180, 180]``."""
    turned = (angle - base) % 360
    return turned - 360 if turned > 180 else turned


def body_angle(groups: Mapping[int, Sequence[Mapping[str, Any]]]) -> int:
    """The angle most of the page's visible glyphs run at (0 on a tie or an empty page)."""
    counts = {angle: _visible(found) for angle, found in groups.items()}
    return max(counts, key=lambda angle: (counts[angle], angle == 0), default=0)
