"""``pate-audit``: a measured lower bound on one query's epsilon beside the claimed upper
bound (cli:pate-audit, math:audit)."""

from __future__ import annotations

import contextlib
import sys

import click

from ..errors import OverBudget
from .choices import AUDITED
from .errors import reported_warnings, run_command, warn_table_output
from .options import (
    CONTEXT_SETTINGS,
    INTEGER_OR_AUTO,
    Probability,
    completion_line,
    debug_option,
    group,
    long_table_specs,
    noise_specs,
    table_or_json_specs,
    version_option,
)

EPILOG = """\b
Examples:
  pate-audit votes.npy -m gnmax --sigma 40
  pate-audit votes.npy -m confident -T 200 --sigma-threshold 150 --sigma 40 -f json
  pate-audit votes.npy -m gnmax --sigma 40 --aggregator mine.py:aggregate
  pate-audit votes.npy -m gnmax --sigma 40 --query 7
  pate-audit votes.npy -m gnmax --sigma 40 --compose 10 --draws 100000

\b
The lower bound is a measurement (Clopper-Pearson, at --confidence, from --draws draws
per side), never a guarantee. Exit status: 0 consistent, 3 violated (the measured lower
bound exceeds the claim), 2 bad input or options or an aggregator that cannot be called
as stated, 130 Ctrl-C, 143 SIGTERM, 1 unexpected.
""" + completion_line("pate-audit") + "\n"


def _claim_specs(option) -> list:
    return [
        option("-m", "--mechanism", type=click.Choice(list(AUDITED), case_sensitive=False),
               default="gnmax", show_default=True, metavar="NAME",
               help="The claim: " + ", ".join(f"{name} (default)" if name == "gnmax"
                                              else name for name in AUDITED) + "."),
        *noise_specs(option),
    ]


def _audit_specs(option) -> list:
    return [
        option("--aggregator", metavar="FILE.py:FUNCTION",
               help="Audit f(votes, rng) -> labels from this file [default: pate_cli's]."),
        option("--draws", type=click.IntRange(min=2), default=1_000_000, show_default=True,
               metavar="N", help="Draws per side of the pair (half choose the event)."),
        option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
               default=0.95, show_default=True, help="Confidence of the lower bound."),
        option("--delta", type=Probability(), default=1e-5, show_default=True,
               help="Delta of both bounds."),
        option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
               metavar="N", help="Seed of the draws."),
        option("--margin", type=INTEGER_OR_AUTO, default="1", show_default=True,
               metavar="D|auto",
               help="The pair's lead of class 0 over class 1 (1: near tie; auto: the lead "
                    "a pilot on other draws measures most at)."),
        option("--query", type=click.IntRange(min=0), metavar="I",
               help="Audit row I's data-dependent claim (its worst neighbour)."),
        option("--compose", "queries", type=click.IntRange(min=1), default=1,
               show_default=True,
               metavar="K", help="K identical queries per trial, the claim composed over K."),
    ]


@click.command(context_settings=CONTEXT_SETTINGS, epilog=EPILOG)
@click.argument("votes", metavar="VOTES")
@group("Input", long_table_specs,
       "pate-audit tokens.csv --classes 32000 --columns query=position,class=token,count=n")
@group("Claim", _claim_specs, "pate-audit votes.npy -m gnmax --sigma 40")
@group("Audit", _audit_specs, "pate-audit votes.npy --aggregator mine.py:f --draws 200000")
@group("Outputs", table_or_json_specs, "pate-audit votes.npy -f json -o audit.json")
@debug_option
@version_option
def command(votes, mechanism, aggregator, fmt, output, debug, **options):
    """Measure a lower bound on one query's epsilon and set it beside the claimed one.

    VOTES: a vote file as for pate-analyze; its classes and teachers shape the pair of
    neighbouring histograms (or, with --query, its row I is the pair's first histogram).
    """
    from ..analysis.audit import audit  # here: -h imports no numerics (fast start)
    from ..inputs.aggregator import aggregator_file
    from ..inputs.shards import input_files
    from ..outputs.audit import audit_summary, bounds_text, render_audit
    from ..outputs.writing import check_destinations, write_outputs

    if output is not None:  # before any work; never over an input
        source = None if aggregator is None else aggregator_file(aggregator)
        check_destinations([(f"-o {output}", output)],
                           inputs=input_files([("", votes), ("--aggregator", source)]))
    # a user's aggregator that prints writes to stderr: stdout holds the summary alone
    with reported_warnings(), contextlib.redirect_stdout(sys.stderr):
        result = audit(votes, mechanism, aggregator=aggregator, **options)
    text = render_audit(audit_summary(result), fmt)
    if output is not None:
        write_outputs({output: text.encode()})
    else:
        click.echo(text, nl=False)
    warn_table_output(output, fmt)
    if result.verdict == "violated":
        lower, upper = bounds_text(result.epsilon_lower, result.epsilon_upper)
        raise OverBudget(f"the measured lower bound {lower} "
                         f"exceeds the claimed epsilon {upper} of "
                         f"{result.mechanism.name}: the aggregator does not meet its claim")


def main(args=None) -> None:
    """Console entry point (``pate-audit``)."""
    raise SystemExit(run_command(command, args, prog_name="pate-audit"))


if __name__ == "__main__":
    main()
