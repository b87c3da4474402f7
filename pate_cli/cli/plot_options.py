"""Options and input helpers shared by the ``pate-plot`` kinds: the look of a figure,
its output format and atomic write, per-query tables and summaries read with one-line
errors, ``--params T,sigma1`` sets."""

from __future__ import annotations

import functools
import os

import click

from ..errors import InputError
from ..outputs import figure_style
from .options import Probability, debug_option

# The most pixels a PNG may have (width x dpi times height x dpi): 50 megapixels, which
# holds the default 7 x 4.2 inches at the largest --dpi, 1200 (42 MP), and 40 x 40 inches
# at 176 dpi. Rendering time and memory grow with the pixels: 40 x 40 inches at 1200 dpi
# (2.3 gigapixels) ran for minutes. PDF and SVG are drawn as vectors and take any size.
MAX_PIXELS = 50_000_000


def check_pixels(output: str, width: float, height: float, dpi: float) -> None:
    """A one-line usage error (exit 2) for a PNG above ``MAX_PIXELS``."""
    if os.path.splitext(output)[1].lower() != ".png":
        return
    pixels = round(width * dpi) * round(height * dpi)
    if pixels > MAX_PIXELS:
        raise click.UsageError(
            f"-o {output}: {width:g} x {height:g} inches at {dpi:g} dpi is "
            f"{round(width * dpi):,} x {round(height * dpi):,} = {pixels / 1e6:,.0f} "
            f"megapixels, above the limit of {MAX_PIXELS // 1_000_000} for a PNG (lower "
            "--dpi, --width or --height, or write .svg or .pdf)")


def figure_options(command):
    """-o OUT and the look of the figure, shared by every kind.

    The look options reach the command as one ``style`` argument (a ``plots.Style``).
    A PNG holds at most ``MAX_PIXELS`` pixels (a one-line refusal, exit 2, above).
    """
    @functools.wraps(command)
    def with_style(*args, title, width, height, dpi, logy, legend, **kwargs):
        check_pixels(kwargs["output"], width, height, dpi)
        style = figure_style.Style(width=width, height=height, dpi=float(dpi), title=title,
                            logy=logy, legend=legend)
        return command(*args, style=style, **kwargs)

    decorators = [
        click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
                     help="The figure file: .png, .pdf or .svg."),
        click.option("--title", help="Figure title [default: one per kind]."),
        click.option("--width", type=click.FloatRange(1, 40), default=7.0,
                     show_default=True, help="Width in inches."),
        click.option("--height", type=click.FloatRange(1, 40), default=4.2,
                     show_default=True, help="Height in inches."),
        click.option("--dpi", type=click.IntRange(20, 1200), default=150, show_default=True,
                     help="Resolution (PNG pixels = width x height x dpi^2, at most "
                          f"{MAX_PIXELS // 1_000_000} megapixels)."),
        click.option("--logy", is_flag=True, help="Logarithmic y axis."),
        click.option("--legend", type=click.Choice(figure_style.LEGEND_LOCATIONS),
                     help="Legend location; 'outside' puts it above the plot [default: best "
                          "inside, above the plot for more than 3 entries]."),
        click.option("--delta", type=Probability(),
                     help="delta of the epsilon axis [default: from --summary, else 1e-5]."),
        debug_option,
    ]
    for decorator in reversed(decorators):
        with_style = decorator(with_style)
    return with_style


def figure_format(output: str) -> str:
    from ..outputs import figures as plots
    from ..outputs.writing import check_destinations
    extension = os.path.splitext(output)[1].lower().lstrip(".")
    if extension not in plots.FORMATS:
        raise click.UsageError(f"-o {output}: the extension picks the format: use .png, "
                               ".pdf or .svg")
    try:
        check_destinations([(output, output)])  # before any work: the directory exists...
    except ValueError as error:
        raise InputError(str(error)) from None
    return extension


def save_figure(figure, output: str, fmt: str) -> None:
    from ..outputs import figures as plots
    from ..outputs.writing import write_outputs
    write_outputs({output: plots.figure_bytes(figure, fmt)})


def per_query_table(path: str, columns, queries: int | None = None, *,
                    summary: dict | None = None, summary_path: str | None = None) -> object:
    """A per-query table, checked to be ``summary``'s run when one is given (before
    ``-n`` keeps its first rows: the whole table is the run)."""
    from ..inputs.tables import PER_QUERY, numeric_column, read_table, require_table
    from ..outputs.run_match import check_same_run
    frame = read_table(path, expected=PER_QUERY)
    require_table(frame, path, kind="per-query", columns=columns)
    if summary is not None:
        check_same_run(summary, frame, summary_path=str(summary_path), table_path=path)
    if queries is not None:
        frame = frame.iloc[:queries]
    for column in columns:
        numeric_column(frame, path, column)
    return frame


def rows_option(command):
    return click.option("-n", "--queries", type=click.IntRange(min=1),
                        help="Plot only the first N rows of each table.")(command)


def read_summaries(paths, inputs) -> list:
    from ..inputs.tables import read_summary
    if paths and len(paths) != len(inputs):
        raise click.UsageError(f"give one --summary per input ({len(inputs)}), or none")
    return [read_summary(path) for path in paths] if paths else [None] * len(inputs)


def run_labels(labels, inputs, summaries) -> list[str]:
    from ..outputs import captions
    if labels and len(labels) != len(inputs):
        raise click.UsageError(f"give one --label per input ({len(inputs)}), or none")
    if labels:
        return list(labels)
    names = [captions.MECHANISM_NAMES.get(s["mechanism"], s["mechanism"]) if s
             else os.path.basename(path) for path, s in zip(inputs, summaries, strict=True)]
    if len(set(names)) < len(names):  # two runs of one mechanism: tell them apart by file
        names = [os.path.basename(path) for path in inputs]
    return names


def figure_delta(option, summaries) -> float:
    found = {float(s["delta"]) for s in summaries if s}
    if option is not None:
        return option
    if len(found) > 1:
        raise InputError("the summaries have different delta values "
                         f"({', '.join(f'{d:g}' for d in sorted(found))}); pick one "
                         "with --delta")
    return found.pop() if found else 1e-5


class ParamSet(click.ParamType):
    """``T,sigma1`` for --params."""

    name = "T,sigma1"

    def convert(self, value, param, ctx):
        import numpy as np
        if isinstance(value, tuple):
            return value
        parts = str(value).split(",")
        try:
            threshold, sigma_threshold = (float(part) for part in parts)
        except ValueError:
            self.fail(f"{value!r} is not T,sigma1 (two numbers, e.g. 200,150)", param, ctx)
        if not (np.isfinite(threshold) and np.isfinite(sigma_threshold)
                and sigma_threshold > 0):
            self.fail(f"{value!r}: T must be finite and sigma1 positive", param, ctx)
        return threshold, sigma_threshold
