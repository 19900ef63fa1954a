"""The style every SVG plot of the site is drawn in, and the frame they share; the same input always
gives the same bytes.

CI renders each plot again in memory and compares its bytes with the committed file, so nothing here
may depend on the clock, the process or the machine's settings: every plot is drawn on its own
``Figure`` (no pyplot, no current figure), under matplotlib's default style plus the fixed settings of
``_RC``, and saved without a date or a creator. Text stays text (``svg.fonttype: none``): the files are
smaller, and the row names can be searched and checked. Sizes are set in inches for a page column
about 800 px wide; a figure grows in height with its number of rows.

Colours are Okabe and Ito's (2008, "Color Universal Design"), told apart under the common colour-vision
deficiencies.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import matplotlib
import matplotlib.style
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

BLUE, GREEN, ORANGE = "#0072B2", "#009E73", "#E69F00"
VERMILION, PURPLE, YELLOW = "#D55E00", "#CC79A7", "#F0E442"
MUTED, INK = "#BBBBBB", "#222222"
WINE = "#882255"  # Tol's "muted" scheme: a fifth warm colour darker than Okabe-Ito's four
# losses, from the nearest miss to the farthest; the last, lost in parsing (before any search), in grey
WARM = (YELLOW, ORANGE, VERMILION, PURPLE, WINE, "#666666")
CALM = (GREEN, "#56B4E9", BLUE)  # what went right: found; correct (cited right or not); refused rightly

WIDTH = 8.4  # inches: 605 pt, which a browser shows as 806 px
ROW = 0.36  # inches per row: room for a name wrapped onto two lines
LABEL_CHARS = 40  # a longer row name is wrapped at a space
TITLE_CHARS = 95  # at 11 pt, what fits across
_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "clear-rag",  # clip-path and marker ids come from this instead of a random uuid
    "svg.fonttype": "none",
    "font.family": ["sans-serif"],  # written as "'DejaVu Sans', sans-serif": a browser without it falls back
    "font.sans-serif": ["DejaVu Sans"],  # shipped with matplotlib: the same metrics on every machine
    "font.size": 9.0,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "text.parse_math": False,  # a "$" in a row name is a dollar sign, not mathtext
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.facecolor": "white",
}


def render(draw: Callable[[], Figure]) -> bytes:
    """The SVG bytes of the figure ``draw`` builds, under the fixed style and with no metadata that
    changes between runs (a date, matplotlib's version)."""
    # "default" first: a matplotlibrc on the machine would otherwise change the bytes.
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        figure = draw()
        FigureCanvasSVG(figure)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


def make_figure(rows: int, title: str, footnote: str, handles: list[Artist], *, foot: float = 0.75) -> Figure:
    """A figure as wide as the page and as tall as its ``rows``: ``title`` and a one-line legend of
    ``handles`` above the panels, ``footnote`` at the bottom left. Only the panels are laid out by
    matplotlib (constrained): its "outside" legend is drawn over a suptitle, so the head is placed here.
    ``foot`` (inches) holds the x axis and the footnote."""
    title = textwrap.fill(title, TITLE_CHARS)
    head = 0.12 + 0.22 * (title.count("\n") + 1) + 0.32  # margin, title lines, legend
    height = head + foot + ROW * max(rows, 1)
    figure = Figure(figsize=(WIDTH, height), layout="constrained")
    band = 0.26  # the footnote's strip, inches
    rect = (0.0, band / height, 1.0, 1.0 - (band + head) / height)
    figure.get_layout_engine().set(rect=rect, w_pad=0.06, wspace=0.04)  # type: ignore[call-arg,union-attr]
    figure.text(0.5, 1 - 0.1 / height, title, ha="center", va="top", fontsize=11, linespacing=1.3)
    figure.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 1 - (head - 0.04) / height),
        ncols=len(handles),
        handlelength=1.4,
        columnspacing=1.4,
        borderaxespad=0,
    )
    figure.text(0.006, 0.06 / height, footnote, fontsize=7.5, color="#555555", ha="left", va="bottom")
    return figure


def _label(name: str) -> str:
    return textwrap.fill(name, LABEL_CHARS, break_long_words=False, break_on_hyphens=False)


def row_axis(axes: Axes, names: list[str]) -> None:
    """Row names on the y axis, the first at the top."""
    axes.set_yticks(range(len(names)), [_label(n) for n in names])
    axes.set_ylim(len(names) - 0.5, -0.5)
    axes.tick_params(axis="y", length=0)
