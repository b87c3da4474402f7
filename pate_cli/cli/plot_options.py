"""Options shared by the ``pate-plot`` kinds: a figure's look and output file (checked by
``outputs.figure_style``), ``-n`` rows, ``--label`` per input, ``--params T,sigma1`` sets."""

from __future__ import annotations

import functools
import math

import click

from ..outputs import figure_style
from .options import Probability, debug_option, stack

DELTA_HELP = ("delta of the epsilon axis, for tables that do not record one [default: "
              "1e-5]. A figure's delta is the one its data were computed at: where --summary "
              "gives it, --delta must agree with it.")


def figure_options(command=None, *, delta: bool | str = True):
    """-o OUT and the figure's look, reaching the command as one ``style`` (a ``plots.Style``);
    a PNG holds at most ``MAX_PIXELS`` pixels (else exit 2). ``--delta``'s help is
    ``DELTA_HELP``, or ``delta`` when a text; ``delta=False`` leaves the option out (axes
    that hold at every delta)."""
    if command is None:
        return functools.partial(figure_options, delta=delta)

    @functools.wraps(command)
    def with_style(*args, title, width, height, dpi, logy, legend, **kwargs):
        figure_style.check_pixels(kwargs["output"], width, height, dpi)
        style = figure_style.Style(width=width, height=height, dpi=float(dpi), title=title,
                            logy=logy, legend=legend)
        return command(*args, style=style, **kwargs)

    decorators = [
        click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
                     help="The figure file: .png, .pdf or .svg."),
        click.option("--title", type=FigureText(),
                     help="Figure title [default: one per kind]; $...$ is matplotlib math "
                          "text, \\$ a dollar sign."),
        click.option("--width", type=Inches(1, 40), default=7.0,
                     show_default=True, help="Width in inches."),
        click.option("--height", type=Inches(1, 40), default=4.2,
                     show_default=True, help="Height in inches."),
        click.option("--dpi", type=click.IntRange(20, 1200), default=150, show_default=True,
                     help="Resolution (PNG pixels = width x height x dpi^2, at most "
                          f"{figure_style.MAX_PIXELS // 1_000_000} megapixels)."),
        click.option("--logy", is_flag=True, help="Logarithmic y axis."),
        click.option("--legend", type=click.Choice(figure_style.LEGEND_LOCATIONS),
                     help="Legend location; 'outside' puts it above the plot [default: best "
                          "inside, above the plot for more than 3 entries]."),
        *([click.option("--delta", type=Probability(),
                        help=delta if isinstance(delta, str) else DELTA_HELP)]
          if delta else []),
        debug_option,
    ]
    return stack(decorators)(with_style)


class Inches(click.FloatRange):
    """A size in inches within the range; NaN, which no range check refuses, is refused here,
    naming the option."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number of inches", param, ctx)
        return number


class FigureText(click.ParamType):
    """A title or legend label whose ``$...$`` math text matplotlib can draw
    (``figure_style.math_text_problem``); else refused naming the option (exit 2), before any
    file is written."""

    name = "text"

    def convert(self, value, param, ctx):
        problem = figure_style.math_text_problem(str(value))
        if problem is not None:
            self.fail(f"'{value}' has $...$ math text matplotlib cannot draw ({problem}); "
                      "write \\$ for a dollar sign", param, ctx)
        return value


def rows_option(command):
    return click.option("-n", "--queries", type=click.IntRange(min=1),
                        help="Plot only the first N rows of each table.")(command)


def labels_option(command):
    """``--label`` per input (history, partition)."""
    return click.option("--label", "labels", multiple=True, type=FigureText(),
                        help="Legend label per input, in order [default: mechanism or file "
                             "name]; $...$ is matplotlib math text, \\$ a dollar "
                             "sign.")(command)


class ParamSet(click.ParamType):
    """``T,sigma1`` for --params."""

    name = "T,sigma1"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        parts = str(value).split(",")
        try:
            threshold, sigma_threshold = (float(part) for part in parts)
        except ValueError:
            self.fail(f"{value!r} is not T,sigma1 (two numbers, e.g. 200,150)", param, ctx)
        if not (math.isfinite(threshold) and math.isfinite(sigma_threshold)
                and sigma_threshold > 0):
            self.fail(f"{value!r}: T must be finite and sigma1 positive", param, ctx)
        return threshold, sigma_threshold
