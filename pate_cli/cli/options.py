"""Click options shared by the commands, defined once and stacked as decorators."""

from __future__ import annotations

import math

import click

from ..accounting.conversion import CONVERSIONS
from ..orders import parse_orders, validate_orders


class PositiveFloat(click.ParamType):
    """A finite number > 0."""

    name = "number>0"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            number = value
        else:
            try:
                number = float(value)
            except ValueError:
                self.fail(f"{value!r} is not a number", param, ctx)
        if not (math.isfinite(number) and number > 0):
            self.fail(f"must be positive, got {value}", param, ctx)
        return number


class Probability(click.ParamType):
    """A number strictly between 0 and 1 (delta)."""

    name = "(0,1)"

    def convert(self, value, param, ctx):
        try:
            number = float(value)
        except ValueError:
            self.fail(f"{value!r} is not a number", param, ctx)
        if not 0.0 < number < 1.0:
            self.fail(f"must lie in (0, 1), got {value}", param, ctx)
        return number


class OrderGrid(click.ParamType):
    """``--orders``: a comma list or ``start:stop:step``."""

    name = "orders"

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        try:
            return parse_orders(value)
        except ValueError as error:
            self.fail(str(error).replace("--orders ", ""), param, ctx)


class Order(click.ParamType):
    """``--order``: one Rényi order > 1."""

    name = "order"

    def convert(self, value, param, ctx):
        try:
            return float(validate_orders([float(value)])[0])
        except ValueError as error:
            self.fail(str(error), param, ctx)


POSITIVE = PositiveFloat()


def input_options(command):
    """VOTES and the other input files."""
    decorators = [
        click.argument("votes", required=False, metavar="[VOTES]"),
        click.option("--predictions", type=click.Path(dir_okay=False),
                     help="Per-teacher predictions (queries x teachers class ids, -1 = no "
                          "vote) instead of a vote histogram."),
        click.option("--classes", type=click.IntRange(min=2),
                     help="Number of classes for --predictions (default: largest id + 1)."),
        click.option("--labels", type=click.Path(dir_okay=False),
                     help="True labels (.npy or one-column .csv) for label accuracy."),
        click.option("--teachers", type=POSITIVE,
                     help="Number of teachers M when rows do not sum to it "
                          "(weighted or partial votes)."),
        click.option("--queries", "-n", type=click.IntRange(min=1),
                     help="Analyse only the first N queries."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def accounting_options(command):
    """How costs are charged and converted."""
    decorators = [
        click.option("--accounting", type=click.Choice(["replay", "expected",
                                                        "data-independent"]),
                     default="replay", show_default=True,
                     help="replay: charge what the seeded run did; expected: the 2018 "
                          "paper's analysis (answer cost times pr_answered); "
                          "data-independent: worst-case costs for the replay's decisions."),
        click.option("--delta", type=Probability(), default=1e-5, show_default=True,
                     help="Target delta."),
        click.option("--orders", type=OrderGrid(),
                     help="Rényi orders: comma list or start:stop:step "
                          "[default: the 2018 paper's 298-order grid]."),
        click.option("--order", type=Order(),
                     help="Use this single order (overrides --orders)."),
        click.option("--conversion", type=click.Choice(list(CONVERSIONS)), default="classic",
                     show_default=True,
                     help="RDP to (epsilon, delta): classic (Mironov 2017, as the papers "
                          "report) or improved (Canonne-Kamath-Steinke 2020; never larger)."),
        click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Seed of the replay's noise."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def debug_option(command):
    return click.option("--debug", is_flag=True, hidden=False,
                        help="Show tracebacks of unexpected errors.")(command)


CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
