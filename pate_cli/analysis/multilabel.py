"""Multi-label runs (``--multilabel``; Dziedzic et al. 2023, derivations in
``accounting.multilabel``): one row per query, its curve the sum of its labels' (valid for
a teacher changing every label at once); the columns are docs/tutorials/multilabel.md's.

- ``binary``: the ``(queries, labels, 2)`` counts flattened to ``(queries * labels, 2)``
  rows analysed by ``analyze_votes`` (GNMax, or Confident thresholding each label's larger
  count), noise keyed by the row ``query * labels + label``: the flattened file's totals.
- ``tau:TAU`` and ``powerset`` (GNMax, from per-teacher predictions): every query is
  answered; tau's curve is data-independent in every mode (no data-dependent bound for the
  clipped Gaussian), powerset's is math:gnmax with math:sparse's zero block of unobserved sets.

Label sets are integers (bit l = label l; -1 beyond ``MAX_SET_LABELS`` labels). Arrays are
read whole: memory grows with the file.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

import numpy as np

from ..accounting.composition import ArrayRows, running_epsilon
from ..accounting.conversion import checked_setting, grid_edge_notes, rdp_to_epsilon
from ..accounting.gnmax import log_q_gnmax, rdp_gnmax
from ..accounting.multilabel import (
    parse_variant,
    rdp_multilabel_data_independent,
    sensitivity_squared,
)
from ..accounting.pld import gaussian_pld_epsilon
from ..errors import OptionError
from ..inputs.multilabel import (
    attach_multilabel_labels,
    first_queries,
    load_multilabel_counts,
    load_multilabel_predictions,
)
from ..mechanisms import NoiseSource
from ..mechanisms.multilabel import (
    MAX_SET_LABELS,
    clipped_sums,
    powerset_votes,
    replay_powerset,
    replay_tau,
    set_ids,
)
from ..query_table import QueryTable
from ..vote_rows import VoteRows
from .added_figures import with_pld_figure, with_smaller_pld
from .result import AnalysisResult, MultilabelPart, QueryCounts
from .run import analyze_votes
from .steps import mechanism_steps, step_curves

CURVE_ROWS = 4096  # queries whose summed curves are formed at once
VARIANT_MECHANISMS = {"binary": ("gnmax", "confident"), "tau": ("gnmax",),
                      "powerset": ("gnmax",)}


def run_multilabel(spec, votes, *, orders, initial_rdp, build) -> AnalysisResult:
    """``--multilabel`` (``spec``, a ``run_spec.RunSpec``) over a counts file ``votes`` or
    ``spec.predictions``: read, check the options, analyse on the grid ``orders`` after
    ``initial_rdp``. ``build(M)`` makes the mechanism ``spec`` names for M teachers."""
    predictions, mechanism, q_bound = spec.predictions, spec.mechanism, spec.q_bound
    variant, tau = parse_variant(spec.multilabel)
    if (votes is None) == (predictions is None):
        raise OptionError("give exactly one of VOTES or --predictions FILE")
    if variant != "binary" and predictions is None:
        raise OptionError(f"--multilabel {variant} needs --predictions FILE (queries, "
                          "teachers, labels): the per-label counts do not give each "
                          "teacher's label set")
    name = mechanism.lower() if isinstance(mechanism, str) else getattr(mechanism, "name", "")
    if name not in VARIANT_MECHANISMS[variant]:
        raise OptionError(f"--multilabel {variant} runs -m "
                          f"{' or -m '.join(VARIANT_MECHANISMS[variant])}, not {name}")
    if variant != "binary" and q_bound != "union":
        raise OptionError(f"--q-bound {q_bound} applies to --multilabel binary only")
    vote_set = (load_multilabel_counts(votes) if predictions is None
                else load_multilabel_predictions(predictions))
    if variant == "powerset" and vote_set.label_count > MAX_SET_LABELS:
        raise OptionError(f"--multilabel powerset takes at most {MAX_SET_LABELS} labels "
                          f"(label sets are 64-bit integers), got {vote_set.label_count}")
    vote_set = first_queries(vote_set if spec.labels is None
                             else attach_multilabel_labels(vote_set, spec.labels), spec.queries)
    chosen = build(vote_set.teachers)
    setting = dict(accounting=spec.accounting, delta=spec.delta, orders=orders,
                   conversion=spec.conversion, seed=spec.seed, initial_rdp=initial_rdp)
    count, label_count = vote_set.queries, vote_set.label_count
    if variant == "binary":
        result, output = _binary(vote_set, chosen, q_bound=q_bound, workers=spec.workers,
                                 **setting)
    else:
        result = _whole_sets(vote_set, chosen, variant=variant, tau=tau, **setting)
        output = count * label_count  # every label released
    part = MultilabelPart(variant, label_count, tau,
                          sensitivity_squared(variant, labels=label_count, tau=tau), output)
    if variant != "binary" and spec.accounting == "data-independent" and initial_rdp is None:
        result = with_smaller_pld(result, gaussian_pld_epsilon(
            [(math.sqrt(part.sensitivity_squared), chosen.sigma, count)], spec.delta))
    return replace(result, multilabel=part, q_bound=q_bound)


def _binary(votes, mechanism, *, q_bound, workers, **setting) -> tuple[AnalysisResult, int]:
    """The flattened run, its rows summed by query; and the labels it released."""
    from scipy.special import logsumexp
    count, labels = votes.queries, votes.label_count
    run = analyze_votes(np.ascontiguousarray(votes.counts.reshape(count * labels, 2)),
                        mechanism, teachers=votes.teachers, q_bound=q_bound, workers=workers,
                        labels=None if votes.labels is None else votes.labels.reshape(-1),
                        source=votes, **setting)
    independent = run.accounting == "data-independent"
    if independent and run.initial_rdp is None:
        run = with_pld_figure(run, mechanism, run.delta)  # each label a Gaussian step
    rows = QueryTable.of_frame(run.to_frame())  # the flattened rows' table, in memory
    selection, answer = mechanism_steps(mechanism, q_bound=q_bound)
    epsilon_query = np.empty(count)
    for lo in range(0, count, CURVE_ROWS):  # the labels' curves as charged (math:costs)
        flat = slice(lo * labels, min(count, lo + CURVE_ROWS) * labels)
        sel, sel_index = step_curves(selection, rows.log_pr_answered[flat], run.orders,
                                     independent)
        ans, ans_index = step_curves(answer, rows.log_q[flat], run.orders, independent)
        curves = sel[sel_index] + rows.answered[flat, None] * ans[ans_index]
        epsilon_query[lo:lo + CURVE_ROWS] = rdp_to_epsilon(
            curves.reshape(-1, labels, run.orders.size).sum(axis=1), orders=run.orders,
            delta=run.delta, conversion=run.conversion)[0]

    def by_query(column: np.ndarray) -> np.ndarray:
        return column.reshape(count, labels)
    answered_bits = (by_query(rows.label) >= 0).astype(np.int64)
    any_answered = answered_bits.any(axis=1)
    last = np.arange(1, count + 1) * labels - 1
    with np.errstate(divide="ignore"):
        log_pr = logsumexp(by_query(rows.log_pr_answered), axis=1) - np.log(labels)
    table = QueryTable(
        plurality=by_query(rows.plurality).min(axis=1),
        plurality_class=set_ids(by_query(rows.plurality_class)),
        answered=by_query(rows.answered).sum(axis=1),
        label=np.where(any_answered, set_ids(np.maximum(by_query(rows.label), 0)), -1),
        log_q=np.minimum(logsumexp(by_query(rows.log_q), axis=1), 0.0),
        log_pr_answered=log_pr, epsilon_query=epsilon_query,
        epsilon_cumulative=rows.epsilon_cumulative[last],
        order_cumulative=rows.order_cumulative[last],
        rdp_selection=by_query(rows.rdp_selection).sum(axis=1),
        rdp_answer=by_query(rows.rdp_answer).sum(axis=1),
        columns={"answered_labels": set_ids(answered_bits)})
    counts = QueryCounts(queries=count, labels_output=int(np.count_nonzero(any_answered)),
                         outcomes=None, reordered=False)
    return replace(run, counts=counts, table=table, frames=None, distinct_pairs=None,
                   query_index=None), int(answered_bits.sum())


def _whole_sets(votes, mechanism, *, variant, tau, accounting, delta, orders, conversion,
                seed, initial_rdp) -> AnalysisResult:
    """tau and powerset: every query answered with one GNMax-type release."""
    orders, converter = checked_setting(accounting, delta, orders, conversion)
    count, labels, teachers, sigma = (votes.queries, votes.label_count, votes.teachers,
                                      mechanism.sigma)
    noise = NoiseSource(seed)
    independent = rdp_multilabel_data_independent(variant, sigma=sigma, orders=orders,
                                                  labels=labels, tau=tau)
    curves = np.broadcast_to(independent, (count, orders.size))
    if variant == "tau":
        sums = clipped_sums(votes.predictions, tau)
        bits = replay_tau(sums, teachers=teachers, sigma=sigma, noise=noise)
        label, log_q = set_ids(bits), np.full(count, np.nan)
        plurality = np.maximum(teachers - sums, sums).min(axis=1)
        plurality_bits = sums > teachers - sums
    else:
        histogram = powerset_votes(votes.predictions)
        label = replay_powerset(histogram, labels=labels, sigma=sigma, noise=noise)
        top = np.argmax(histogram.counts, axis=1)
        plurality = histogram.counts[np.arange(count), top]
        bits, plurality_bits = (np.stack([label, histogram.sets[np.arange(count), top]])
                                [..., None] >> np.arange(labels)) & 1
        log_q = log_q_gnmax(VoteRows(histogram.counts, 2.0**labels - histogram.counts.shape[1]),
                            sigma=sigma)
        if accounting != "data-independent":
            distinct, index = np.unique(log_q, return_inverse=True)
            curves = rdp_gnmax(distinct, sigma=sigma, orders=orders)[index.reshape(-1)]
    carry = (np.zeros(orders.size) if initial_rdp is None
             else np.asarray(initial_rdp, dtype=np.float64))
    figures = running_epsilon(ArrayRows(np.ascontiguousarray(curves)), count, carry,
                              converter, per_query=True)
    assert figures.epsilon_query is not None  # per_query=True
    convert = partial(rdp_to_epsilon, orders=orders, delta=delta, conversion=conversion)
    di_curve = carry + count * independent
    (epsilon, order), (eps_di, order_di) = (map(float, convert(curve)) for curve in
                                            (figures.carry, di_curve))
    at = int(np.flatnonzero(orders == order)[0])
    return AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=2,
        counts=QueryCounts(queries=count, labels_output=int(np.count_nonzero(label >= 0)),
                           outcomes=None, reordered=False), table=QueryTable(
            plurality=plurality, plurality_class=set_ids(plurality_bits),
            answered=np.full(count, float(labels)), label=label, log_q=log_q,
            log_pr_answered=np.zeros(count), epsilon_query=figures.epsilon_query,
            epsilon_cumulative=figures.epsilon, order_cumulative=orders[figures.order_index],
            rdp_selection=np.zeros(count), rdp_answer=np.ascontiguousarray(curves[:, at])),
        rdp_total=figures.carry, epsilon=epsilon, order=order, epsilon_data_independent=eps_di,
        rdp_data_independent=di_curve,
        order_data_independent=order_di, answered_total=float(count * labels),
        rdp_at_order={"selection": 0.0, "answer": float(figures.carry[at] - carry[at])},
        label_accuracy=None if votes.labels is None else float(np.mean(bits == votes.labels)),
        warnings=grid_edge_notes(orders, order, epsilon), source=votes,
        initial_rdp=None if initial_rdp is None else carry)
