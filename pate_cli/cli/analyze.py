"""``pate-analyze``: what a PATE run over saved votes costs in privacy."""

from __future__ import annotations

import warnings
from dataclasses import replace

import click
import numpy as np
import pandas as pd

from ..analysis import analyze_votes
from ..analysis.individualized import VARIANTS, analyze_individualized, derive_parameters
from ..analysis.rounds import Round, analyze_rounds
from ..analysis.sanitization import history_rows, report_dict, sanitize_analysis
from ..analysis.serialize import per_query_frame, summary_dict
from ..errors import InputError
from ..inputs import (
    load_groups,
    load_predictions,
    load_query_indices,
    load_rdp_curve,
    load_rounds,
    load_student,
    load_teacher_groups,
    load_votes,
)
from ..mechanisms import MECHANISMS, build_mechanism
from ..orders import default_orders
from ..outputs.files import per_query_bytes, write_outputs
from ..outputs.summary import FORMATS, render
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
  pate-analyze votes.npy -m interactive --student probs.npy --confidence 0.9
  pate-analyze votes.npy -m svt --target-epsilon 2 --svt-cutoff 50
  pate-analyze votes.npy --rounds rounds.csv --add-rdp gan_rdp.csv
  pate-analyze votes.npy -n 640 --accounting expected --smooth-sensitivity
  pate-analyze --predictions p.npy --individualized weighting --groups g.csv --teacher-groups t.csv

\b
SVT-PATE's guarantee is data-independent: --accounting changes only what the replay
reports (the unstable queries it met), never its epsilon.

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
@click.option("--student", type=click.Path(dir_okay=False),
              help="Interactive: the student's (queries x classes) probabilities "
                   "(.npy, .csv, or .npz array 'student').")
@click.option("--confidence", type=click.FloatRange(0, 1), default=0.9, show_default=True,
              help="Interactive: reinforce the student's label when its top probability "
                   "exceeds this (gamma).")
@click.option("--svt-scale", type=POSITIVE,
              help="SVT: Laplace scale lambda [default: 0.01 M, unless --target-epsilon].")
@click.option("--svt-cutoff", type=click.IntRange(min=1), default=100, show_default=True,
              help="SVT: the most unstable queries met before halting (c).")
@click.option("--svt-threshold", type=float,
              help="SVT: threshold w [default: the smallest with delta2 <= delta/2].")
@click.option("--target-epsilon", type=POSITIVE,
              help="SVT: solve for the scale that gives this epsilon.")
@click.option("--query-indices", type=click.Path(dir_okay=False),
              help="Analyse only these rows, in this order (.npy, or one number per line "
                   "in .csv/.txt): e.g. the queries an active student picked.")
@click.option("--rounds", type=click.Path(dir_okay=False),
              help="Several rounds (rows, mechanism, parameters, student) composed into one "
                   "total: a CSV with a header or a JSON list.")
@click.option("--add-rdp", type=click.Path(dir_okay=False),
              help="Add an external RDP curve (CSV order,rdp; e.g. a private GAN's) before "
                   "conversion.")
@click.option("--smooth-sensitivity", "smooth", is_flag=True,
              help="Add the sanitised release of the data-dependent epsilon (GNSS, smooth "
                   "sensitivity; gnmax, confident, interactive). Uses --order if given, "
                   "else the order the accounting chose.")
@click.option("--ss-history", type=click.Path(dir_okay=False),
              help="With --smooth-sensitivity: write before/after/std every --ss-every "
                   "queries (.csv, .jsonl).")
@click.option("--ss-every", type=click.IntRange(min=1), default=100, show_default=True,
              help="Queries between --ss-history rows.")
@click.option("--individualized", type=click.Choice(list(VARIANTS)),
              help="Individualized PATE: per-group budgets by upsampling, weighting or "
                   "vanishing (needs --groups; weighting and vanishing need --predictions "
                   "and --teacher-groups).")
@click.option("--groups", type=click.Path(dir_okay=False),
              help="Privacy groups: CSV group,budget[,upsampling|weight|participation]"
                   "[,share].")
@click.option("--teacher-groups", type=click.Path(dir_okay=False),
              help="CSV teacher,group: the privacy group each teacher's data comes from.")
@click.option("--precision", type=click.IntRange(min=0, max=9), default=2, show_default=True,
              help="Upsampling: budget ratios are rounded to 10^-p before taking integers.")
@click.option("--weights", "weight_rule", type=click.Choice(["budget", "group-size"]),
              default="budget", show_default=True,
              help="Weighting: Appendix C (budget / mean teacher budget) or the paper's "
                   "Algorithm 2 variant (times group size).")
@click.option("--power", type=POSITIVE, default=2.0, show_default=True,
              help="Vanishing: participation frequency (eps_g / eps_max)^power.")
@click.option("--show-parameters", is_flag=True,
              help="With --individualized: print each group's derived parameters and exit.")
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
            threshold, sigma_threshold, laplace_scale, student, confidence, svt_scale,
            svt_cutoff, svt_threshold, target_epsilon, query_indices, rounds, add_rdp, smooth,
            ss_history, ss_every, individualized, groups, teacher_groups, precision,
            weight_rule, power, show_parameters, accounting, delta, orders, order, conversion,
            seed, budget, max_epsilon, fmt, output, per_query, debug):
    """Privacy cost of answering PATE queries from saved teacher votes.

    VOTES is a (queries x classes) vote histogram: .npy (memory-mapped), .npz (array
    'votes', optional 'labels'), .csv/.tsv (optional header), or - for standard input.
    Prints the total epsilon at --delta, the number of answered queries, and, with
    --labels, the accuracy of the labels output.
    """
    vote_set = _load_vote_set(votes, predictions, classes, labels, teachers)
    if ss_history is not None and not smooth:
        raise click.UsageError("--ss-history needs --smooth-sensitivity")
    if (groups is not None or show_parameters) and individualized is None:
        raise click.UsageError("--groups and --show-parameters need --individualized")
    plan, student_rows = None, None
    if individualized is not None:
        plan = _individualized_plan(individualized, groups, teacher_groups, predictions,
                                    vote_set, precision, weight_rule, power)
        if show_parameters:
            click.echo(_parameters_text(plan[0], fmt), nl=False)
            return
    grid = np.array([order]) if order is not None else (
        default_orders() if orders is None else orders)
    parameters = dict(sigma=sigma, threshold=threshold, sigma_threshold=sigma_threshold,
                      laplace_scale=laplace_scale, confidence=confidence, svt_scale=svt_scale,
                      svt_cutoff=svt_cutoff, svt_threshold=svt_threshold,
                      target_epsilon=target_epsilon)
    extra_rdp, add_rdp_info = None, None
    if add_rdp is not None:
        extra_rdp, digest, note = load_rdp_curve(add_rdp, orders=grid)
        add_rdp_info = {"path": add_rdp, "sha256": digest, "note": note}
    common = dict(teachers=vote_set.teachers, accounting=accounting, delta=delta, orders=grid,
                  conversion=conversion, seed=seed, labels=vote_set.labels,
                  initial_rdp=extra_rdp, source=vote_set)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if rounds is not None:
            if budget is not None or query_indices is not None or queries is not None:
                raise click.UsageError("--rounds sets the rows of each round: it does not "
                                       "combine with --budget, --query-indices or --queries")
            plan = [_round(spec, vote_set, parameters)
                    for spec in load_rounds(rounds)]
            result = analyze_rounds(vote_set.votes, plan, **common)
        elif plan is not None:
            if budget is not None or query_indices is not None:
                raise click.UsageError("--individualized has its own stopping rule: it does "
                                       "not combine with --budget or --query-indices")
            chosen = build_mechanism(mechanism, teachers=vote_set.teachers, **parameters)
            student_rows = _student_rows(mechanism, student, vote_set)
            group_parameters, assigned, raw_predictions = plan
            result = analyze_individualized(
                vote_set.votes, chosen, group_parameters, predictions=raw_predictions,
                teacher_groups=assigned, classes=vote_set.classes, queries=queries,
                student=student_rows,
                **{k: v for k, v in common.items() if k != "initial_rdp"})
        else:
            chosen = build_mechanism(mechanism, teachers=vote_set.teachers, **parameters)
            student_rows = _student_rows(mechanism, student, vote_set)
            if mechanism == "svt" and svt_scale is not None and target_epsilon is not None:
                raise click.UsageError("give --svt-scale or --target-epsilon, not both")
            if mechanism == "svt" and budget is not None:
                raise click.UsageError("--budget does not apply to -m svt (its cut-off "
                                       "bounds the cost)")
            indices = None if query_indices is None else load_query_indices(query_indices)
            available, where = ((vote_set.queries, vote_set.path) if indices is None
                                else (indices.size, query_indices))
            if queries is not None and queries > available:
                raise click.UsageError(f"--queries {queries} is larger than the {available} "
                                       f"queries in {where}")
            result = analyze_votes(vote_set.votes, chosen, queries=queries, budget=budget,
                                   student=student_rows, query_indices=indices, **common)
    summary = summary_dict(result)
    history = None
    if smooth:
        if rounds is not None or plan is not None:
            raise click.UsageError("--smooth-sensitivity applies to single runs (not "
                                   "--rounds or --individualized)")
        report = sanitize_analysis(result, vote_set.votes, student=student_rows, order=order,
                                   report_every=ss_every if ss_history else None)
        summary["smooth_sensitivity"] = report_dict(report)
        history = history_rows(report)
    if add_rdp_info is not None:
        summary["add_rdp"] = add_rdp_info
        if add_rdp_info["note"]:
            result.warnings.append(add_rdp_info["note"])
            summary["warnings"] = list(result.warnings)
    text = render(summary, fmt)
    files = {}
    if per_query is not None:
        files[per_query] = per_query_bytes(per_query_frame(result), per_query)
    if output is not None:
        files[output] = text.encode()
    if ss_history is not None:
        files[ss_history] = per_query_bytes(pd.DataFrame(history), ss_history)
    write_outputs(files)
    if output is None:
        click.echo(text, nl=False)
    for note in result.warnings:
        click.echo(f"Warning: {note}", err=True)
    if max_epsilon is not None and result.epsilon > max_epsilon:
        raise OverBudget(f"epsilon {result.epsilon:.4f} exceeds --max-epsilon {max_epsilon:g}")


def _load_vote_set(votes, predictions, classes, labels, teachers):
    if (votes is None) == (predictions is None):
        raise click.UsageError("give exactly one of VOTES or --predictions FILE")
    if classes is not None and predictions is None:
        raise click.UsageError("--classes only applies to --predictions")
    if predictions is not None:
        vote_set = load_predictions(predictions, classes=classes, labels=labels)
    else:
        vote_set = load_votes(votes, teachers=teachers, labels=labels)
    if teachers is not None:
        vote_set = replace(vote_set, teachers=teachers)
    return vote_set


def _student_rows(mechanism, student, vote_set):
    if mechanism != "interactive":
        if student is not None:
            raise click.UsageError("--student only applies to -m interactive")
        return None
    if student is None:
        raise click.UsageError("-m interactive needs --student FILE")
    return load_student(student, queries=vote_set.queries, classes=vote_set.classes)


def _individualized_plan(variant, groups, teacher_groups, predictions, vote_set, precision,
                         weight_rule, power):
    """Group parameters, each teacher's group and the raw predictions (if any)."""
    if groups is None:
        raise click.UsageError("--individualized needs --groups FILE")
    privacy_groups = load_groups(groups)
    assigned, raw = None, None
    if variant != "upsampling":
        if predictions is None or teacher_groups is None:
            raise click.UsageError(f"--individualized {variant} needs --predictions FILE and "
                                   "--teacher-groups FILE")
    if teacher_groups is not None:
        if predictions is None:
            raise click.UsageError("--teacher-groups needs --predictions FILE")
        raw = vote_set.predictions
        assigned = load_teacher_groups(teacher_groups, groups=privacy_groups,
                                       teachers=int(vote_set.teachers))
    parameters = derive_parameters(privacy_groups, variant=variant, teacher_groups=assigned,
                                   precision=precision, weights=weight_rule, power=power)
    return parameters, assigned, raw


def _parameters_text(parameters, fmt) -> str:
    rows = parameters.as_rows()
    if fmt == "json":
        import json

        return json.dumps({"individualized": parameters.variant, "groups": rows},
                          indent=2) + "\n"
    frame = pd.DataFrame(rows)
    if fmt == "csv":
        return frame.to_csv(index=False, lineterminator="\n")
    if fmt == "markdown":
        header = "| " + " | ".join(frame.columns) + " |"
        lines = [header, "|" + "---|" * len(frame.columns)]
        lines += ["| " + " | ".join(f"{v:g}" if isinstance(v, float) else str(v)
                                    for v in row) + " |" for row in frame.to_numpy()]
        return "\n".join(lines) + "\n"
    return f"individualized {parameters.variant}\n" + frame.to_string(index=False) + "\n"


def _round(spec: dict, vote_set, defaults: dict) -> Round:
    """One round of ``--rounds``: its rows, mechanism (command-line values as defaults)."""
    name = spec["mechanism"]
    if name not in MECHANISMS or name == "svt":
        raise InputError(f"--rounds: mechanism {name!r} is not one of "
                         f"{', '.join(m for m in MECHANISMS if m != 'svt')}")
    rows = spec["rows"]
    if rows.max() >= vote_set.queries:
        raise InputError(f"--rounds: rows up to {int(rows.max())} but {vote_set.path} has "
                         f"{vote_set.queries} queries")
    parameters = {**defaults, **{key: value for key, value in spec.items()
                                 if key in defaults}}
    student = None
    if name == "interactive":
        if "student" not in spec:
            raise InputError("--rounds: an interactive round needs a 'student' file")
        student = load_student(spec["student"], queries=vote_set.queries,
                               classes=vote_set.classes)
    mechanism = build_mechanism(name, teachers=vote_set.teachers, **parameters)
    return Round(rows=rows, mechanism=mechanism, student=student)


def main(args=None) -> int:
    """Console-script entry point."""
    raise SystemExit(run_command(analyze, args, prog_name="pate-analyze"))
