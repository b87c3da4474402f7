"""``pate-analyze``: what a PATE run over saved votes costs in privacy."""

from __future__ import annotations

import warnings

import click

from ..analysis import analyze_votes
from ..mechanisms import MECHANISMS, build_mechanism
from ..report import (
    FORMATS,
    per_query_bytes,
    per_query_frame,
    render,
    summary_dict,
    write_outputs,
)
from ..votes import load_predictions, load_votes
from .errors import OverBudget, run_command
from .options import (
    CONTEXT_SETTINGS,
    POSITIVE,
    accounting_options,
    debug_option,
    input_options,
)

EPILOG = """\b
Examples:
  pate-analyze votes.npy
  pate-analyze votes.csv -m gnmax --sigma 40 --delta 1e-5 --format json | jq .epsilon
  pate-analyze votes.npy -m lnmax --laplace-scale 20 --accounting expected --per-query q.csv
  pate-analyze votes.npy -T 200 --sigma-threshold 150 --sigma 40 --budget 2.0 --labels y.npy
  cat votes.csv | pate-analyze - --max-epsilon 3 || echo "over budget"

\b
Exit status: 0 ok, 2 bad input or options, 3 epsilon above --max-epsilon, 1 unexpected.
"""


@click.command(context_settings=CONTEXT_SETTINGS, epilog=EPILOG)
@input_options
@click.option("-m", "--mechanism", type=click.Choice(list(MECHANISMS)), default="confident",
              show_default=True, help="Aggregator to analyse.")
@click.option("--sigma", type=POSITIVE, help="Answer-step Gaussian std sigma2 [default: 0.16 M].")
@click.option("-T", "--threshold", type=float, help="Selection threshold T [default: 0.8 M].")
@click.option("--sigma-threshold", type=POSITIVE,
              help="Selection Gaussian std sigma1 [default: 0.6 M].")
@click.option("--laplace-scale", type=POSITIVE,
              help="LNMax Laplace scale lambda [default: 0.08 M].")
@accounting_options
@click.option("--budget", type=POSITIVE,
              help="Budget run: refuse answers that would push epsilon above EPS "
                   "(selection is still charged).")
@click.option("--max-epsilon", type=POSITIVE,
              help="Exit with status 3 if the final epsilon exceeds EPS.")
@click.option("-f", "--format", "fmt", type=click.Choice(list(FORMATS)), default="table",
              show_default=True, help="Summary format on standard output.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the summary to this file (atomically) instead of standard output.")
@click.option("--per-query", type=click.Path(dir_okay=False),
              help="Write the per-query table (.csv, .jsonl/.json lines, .parquet).")
@debug_option
def analyze(votes, predictions, classes, labels, teachers, queries, mechanism, sigma,
            threshold, sigma_threshold, laplace_scale, accounting, delta, orders, order,
            conversion, seed, budget, max_epsilon, fmt, output, per_query, debug):
    """Privacy cost of answering PATE queries from saved teacher votes.

    VOTES is a (queries x classes) vote histogram: .npy (memory-mapped), .npz (array
    'votes', optional 'labels'), .csv/.tsv (optional header), or - for standard input.
    Prints the total epsilon at --delta, the number of answered queries, and, with
    --labels, the accuracy of the labels output.
    """
    if (votes is None) == (predictions is None):
        raise click.UsageError("give exactly one of VOTES or --predictions FILE")
    if classes is not None and predictions is None:
        raise click.UsageError("--classes only applies to --predictions")
    if predictions is not None:
        vote_set = load_predictions(predictions, classes=classes, labels=labels)
    else:
        vote_set = load_votes(votes, teachers=teachers, labels=labels)
    if teachers is not None:
        vote_set = type(vote_set)(votes=vote_set.votes, teachers=teachers, path=vote_set.path,
                                  sha256=vote_set.sha256, labels=vote_set.labels)
    if queries is not None and queries > vote_set.queries:
        raise click.UsageError(f"--queries {queries} is larger than the {vote_set.queries} "
                               f"queries in {vote_set.path}")
    chosen = build_mechanism(mechanism, teachers=vote_set.teachers, sigma=sigma,
                             threshold=threshold, sigma_threshold=sigma_threshold,
                             laplace_scale=laplace_scale)
    grid = [order] if order is not None else orders
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = analyze_votes(vote_set.votes, chosen, teachers=vote_set.teachers,
                               accounting=accounting, delta=delta, orders=grid,
                               conversion=conversion, seed=seed, queries=queries,
                               budget=budget, labels=vote_set.labels, source=vote_set)
    text = render(summary_dict(result), fmt)
    files = {}
    if per_query is not None:
        files[per_query] = per_query_bytes(per_query_frame(result), per_query)
    if output is not None:
        files[output] = text.encode()
    write_outputs(files)
    if output is None:
        click.echo(text, nl=False)
    for note in result.warnings:
        click.echo(f"Warning: {note}", err=True)
    if max_epsilon is not None and result.epsilon > max_epsilon:
        raise OverBudget(f"epsilon {result.epsilon:.4f} exceeds --max-epsilon {max_epsilon:g}")


def main(args=None) -> int:
    """Console-script entry point."""
    raise SystemExit(run_command(analyze, args, prog_name="pate-analyze"))
