"""The look of every ``pate-plot`` figure: palette (Okabe-Ito, colour-blind safe), size and
title (``Style``), axis labels with units, legend and caption layout, and PNG, PDF or SVG
bytes without timestamps (same inputs, same bytes)."""

from __future__ import annotations

import io
import math
import os
import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import OptionError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Okabe & Ito (2008), ordered for contrast on white; yellow (#F0E442) is left out.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
GREY = "#7F7F7F"
FORMATS = ("png", "pdf", "svg")
_CAPTION_SIZE = 7.5
# The most pixels a PNG may have: 50 MP holds 7 x 4.2 inches at --dpi 1200 (42 MP); 40 x 40
# inches at 1200 dpi (2.3 GP) runs for minutes. PDF and SVG take any size.
MAX_PIXELS = 50_000_000
_METADATA = {"png": {"Software": None}, "svg": {"Date": None},
             "pdf": {"CreationDate": None, "Producer": None}}


@dataclass(frozen=True)
class Style:
    """Size (inches), resolution, title and y scale shared by every kind of figure."""

    width: float = 7.0
    height: float = 4.2
    dpi: float = 150.0
    title: str | None = None
    logy: bool = False
    legend: str | None = None  # a matplotlib location, "outside" (above the plot), or None


LEGEND_LOCATIONS = ("best", "upper left", "upper right", "lower left", "lower right",
                    "center left", "center right", "upper center", "lower center", "outside")


def check_pixels(output: str, width: float, height: float, dpi: float) -> None:
    """``OptionError`` (one line, exit 2) for a PNG ``output`` above ``MAX_PIXELS``."""
    if os.path.splitext(output)[1].lower() != ".png":
        return
    pixels = round(width * dpi) * round(height * dpi)
    if pixels > MAX_PIXELS:
        # as many decimals as show the count above the limit (6 give every pixel)
        decimals = next(d for d in range(7) if round(pixels / 1e6, d) > MAX_PIXELS / 1e6)
        raise OptionError(
            f"-o {output}: {width:g} x {height:g} inches at {dpi:g} dpi is "
            f"{round(width * dpi):,} x {round(height * dpi):,} = {pixels / 1e6:,.{decimals}f} "
            f"megapixels, above the limit of {MAX_PIXELS // 1_000_000} for a PNG (lower "
            "--dpi, --width or --height, or write .svg or .pdf)")

def math_text_problem(text: str) -> str | None:
    """Why matplotlib cannot draw ``text`` (a title, legend label or caption): its ``$...$``
    math text does not parse, as a short phrase (``Unknown symbol: \\badcmd``); else None.
    Text with an odd number of unescaped ``$`` is drawn literally."""
    if "$" not in text:
        return None
    from matplotlib import cbook
    from matplotlib.mathtext import MathTextParser
    if not cbook.is_math_text(text):
        return None
    try:
        MathTextParser("path").parse(text, dpi=72)
    except ValueError as error:
        last = str(error).strip().splitlines()[-1] if str(error).strip() else ""
        reason = re.sub(r"^\w+: ", "", last).split(", found")[0].split("  (at char")[0]
        return reason if 0 < len(reason) <= 60 else "a syntax error"
    return None


def literal_text(text: str) -> str:
    """``text`` drawn as it is: each ``$`` escaped, so a file name is not math text."""
    return text.replace("$", "\\$")


def epsilon_label(delta: float, *, what: str = "cumulative") -> str:
    """Axis label with units: ``cumulative epsilon at delta = 1e-5``."""
    return f"{what} $\\varepsilon$ at $\\delta$ = {delta_text(delta)}".strip()


def delta_text(delta: float) -> str:
    """``1e-05`` -> ``1e-5``; ``2.5e-06`` -> ``2.5e-6``."""
    mantissa, _, exponent = f"{delta:.3g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def figure_bytes(figure: Figure, fmt: str) -> bytes:
    """Render ``figure`` as ``png``, ``pdf`` or ``svg`` bytes, without timestamps."""
    import matplotlib
    if fmt not in FORMATS:
        raise ValueError(f"output format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "pate-plot", "svg.fonttype": "path"}):
        figure.savefig(buffer, format=fmt, dpi=figure.get_dpi(), metadata=_METADATA[fmt])
    return buffer.getvalue()


def new_figure(style: Style):
    from matplotlib.figure import Figure
    figure = Figure(figsize=(style.width, style.height), dpi=style.dpi, layout="constrained")
    axes = figure.add_subplot()
    axes.grid(True, alpha=0.3, linewidth=0.6)
    axes.spines[["top", "right"]].set_visible(False)
    if style.logy:
        axes.set_yscale("log")
        plain_log_labels(axes.yaxis)
    return figure, axes


def plain_log_labels(axis) -> None:
    """Log-axis labels as plain numbers (0.5, 2, 30), minor ones at 2, 3 and 5 times 10^k."""
    from matplotlib.ticker import FuncFormatter
    def major(value, _):
        return f"{value:g}"

    def minor(value, _):
        if value <= 0:
            return ""
        leading = round(value / 10 ** math.floor(math.log10(value) + 1e-9))
        return f"{value:g}" if leading in (2, 3, 5) else ""

    axis.set_major_formatter(FuncFormatter(major))
    axis.set_minor_formatter(FuncFormatter(minor))


def _outside_legend(figure: Figure, handles, labels, title: str) -> None:
    """The legend above the plot in as many columns as fit the figure's width (up to three
    entries in one row, else two columns), one column where long labels would not."""
    columns = len(handles) if len(handles) <= 3 else 2
    while True:
        legend = figure.legend(handles, labels, fontsize=8, frameon=False, ncols=columns,
                               loc="outside upper center", title=title, title_fontsize=11)
        if columns == 1 or legend.get_window_extent().width <= figure.bbox.width:
            return
        legend.remove()
        columns -= 1


def finish_figure(figure: Figure, axes, style: Style, *, title: str, caption: str,
            extra_axes=None, legend_loc: str = "best") -> None:
    """Title, legend (both axes' entries), caption line(s) under the plot."""
    title = style.title if style.title is not None else title
    handles, labels = axes.get_legend_handles_labels()
    if extra_axes is not None:
        more_handles, more_labels = extra_axes.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
    if len(handles) > 3:  # inside, a long legend would hide lines
        legend_loc = "outside"
    longest = max(30, int(style.width * 12))  # characters a label keeps on one line
    labels = [textwrap.fill(label, longest, break_on_hyphens=False)
              if len(label) > longest and "$" not in label else label for label in labels]
    if style.legend is not None:
        legend_loc = style.legend
    if legend_loc == "outside" and handles:  # above the plot (the title heads it)
        _outside_legend(figure, handles, labels, title)
    else:
        axes.set_title(title, fontsize=11)
        if handles:
            (extra_axes or axes).legend(handles, labels, fontsize=8, frameon=True,
                                        framealpha=0.9, edgecolor="0.8", loc=legend_loc)
    if caption:
        columns = max(40, int(style.width * 72 / (_CAPTION_SIZE * 0.55)))
        lines = textwrap.wrap(caption, width=columns, break_on_hyphens=False)  # --options whole
        # names from files and summaries: math text only where each line's parses
        parse_math = not any(math_text_problem(line) for line in lines)
        figure.text(0.01, 0.01, "\n".join(lines), fontsize=_CAPTION_SIZE, color="0.3",
                    ha="left", va="bottom", gid="caption", parse_math=parse_math)
        height = (len(lines) * _CAPTION_SIZE * 1.3 + 6) / (style.height * 72)
        figure.get_layout_engine().set(rect=(0, min(height, 0.4), 1, 1 - min(height, 0.4)))
