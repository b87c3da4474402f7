"""Multi-label runs (``--multilabel``; Dziedzic et al. 2023, derivations in
``accounting.multilabel``): one per-query row per query, its curve the sum of its labels'
(valid for a teacher changing every label at once).

- ``binary``: the ``(queries, labels, 2)`` counts flattened to ``(queries * labels, 2)``
  rows analysed by ``analyze_votes`` (GNMax, or Confident thresholding each label's larger
  count), noise keyed by the flattened row ``query * labels + label``: the totals are the
  flattened file's, bit for bit.
- ``tau:TAU`` and ``powerset`` (GNMax, from per-teacher predictions): every query is
  answered; tau's curve is data-independent in every mode (no data-dependent bound for the
  clipped Gaussian), powerset's is MATH.md s.3 with s.14's zero block of unobserved sets.

Per-query rows: ``plurality`` = the weakest label's, ``plurality_class`` and ``label`` =
label sets (bit l = label l; -1 beyond ``MAX_SET_LABELS`` labels, ``label`` -1 when no
label was released), ``answered`` = labels answered, ``log_q`` = log of the sum of the
labels' q (binary; NaN for tau), ``log_pr_answered`` = log of the mean pr_answered, and
``answered_labels`` = the set released (binary). Label accuracy is over the (query, label)
pairs released. Arrays are read whole: memory grows with the file.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..accounting.composition import ArrayRows, running_epsilon
from ..accounting.conversion import rdp_to_epsilon
from ..accounting.gnmax import rdp_gnmax
from ..accounting.multilabel import rdp_multilabel_data_independent, sensitivity_squared
from ..accounting.pld import gaussian_pld_epsilon
from ..accounting.token_votes import log_q_gnmax_with_zero_block
from ..errors import OptionError
from ..inputs.multilabel import (
    attach_multilabel_labels,
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
from .added_figures import with_pld_figure, with_smaller_pld
from .result import AnalysisResult, MultilabelPart, QueryCounts
from .run import analyze_votes
from .serialize import QueryTable
from .setting import checked_setting, grid_edge_notes
from .steps import mechanism_steps, step_curves

CURVE_ROWS = 4096  # queries whose summed curves are formed at once
VARIANT_MECHANISMS = {"binary": ("gnmax", "confident"), "tau": ("gnmax",),
                      "powerset": ("gnmax",)}


def parse_variant(text: str) -> tuple[str, float | None]:
    """``--multilabel`` text -> ``(variant, tau)``; ``OptionError`` for a bad one."""
    name, _, value = str(text).strip().lower().partition(":")
    if name in ("binary", "powerset") and not value:
        return name, None
    if name == "tau":
        try:
            tau = float(value)
        except ValueError:
            tau = float("nan")
        if np.isfinite(tau) and tau > 0:
            return name, tau
        raise OptionError(f"--multilabel tau:TAU needs a positive number TAU, got {text!r}")
    raise OptionError(f"--multilabel must be binary, tau:TAU or powerset, got {text!r}")


def run_multilabel(text: str, votes, predictions, mechanism, *, build, labels, accounting,
                   delta, orders, conversion, seed, queries, initial_rdp, q_bound,
                   workers) -> AnalysisResult:
    """``--multilabel TEXT`` over a counts file ``votes`` or a ``predictions`` file: read,
    check the options, analyse. ``build(M)`` makes the mechanism ``mechanism`` names for M
    teachers."""
    variant, tau = parse_variant(text)
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
    if labels is not None:
        vote_set = attach_multilabel_labels(vote_set, labels)
    if queries is not None:
        if queries > vote_set.queries:
            raise OptionError(f"--queries {queries} is larger than the {vote_set.queries} "
                              f"queries in {vote_set.path}")
        vote_set = replace(vote_set, counts=vote_set.counts[:queries], **{
            key: None if getattr(vote_set, key) is None else getattr(vote_set, key)[:queries]
            for key in ("predictions", "labels")})
    chosen = build(vote_set.teachers)
    setting = dict(accounting=accounting, delta=delta, orders=orders, conversion=conversion,
                   seed=seed, initial_rdp=initial_rdp)
    count, label_count = vote_set.queries, vote_set.label_count
    if variant == "binary":
        result, output = _binary(vote_set, chosen, q_bound=q_bound, workers=workers, **setting)
    else:
        result = _whole_sets(vote_set, chosen, variant=variant, tau=tau, **setting)
        output = count * label_count  # every label released
    part = MultilabelPart(variant, label_count, tau,
                          sensitivity_squared(variant, labels=label_count, tau=tau), output)
    if variant != "binary" and accounting == "data-independent" and initial_rdp is None:
        result = with_smaller_pld(result, gaussian_pld_epsilon(
            [(math.sqrt(part.sensitivity_squared), chosen.sigma, count)], delta))
    return replace(result, multilabel=part, q_bound=q_bound)


def _sets(bits: np.ndarray) -> np.ndarray:
    """Label-set ids of 0/1 ``(queries, labels)``, or -1 beyond ``MAX_SET_LABELS``."""
    if bits.shape[1] > MAX_SET_LABELS:
        return np.full(bits.shape[0], -1, dtype=np.int64)
    return set_ids(bits)


def _counts(queries: int, output: np.ndarray) -> QueryCounts:
    return QueryCounts(queries=queries, labels_output=int(np.count_nonzero(output)),
                       outcomes=None, reordered=False)


def _binary(votes, mechanism, *, accounting, delta, orders, conversion, seed, initial_rdp,
            q_bound, workers) -> tuple[AnalysisResult, int]:
    """The flattened run, its rows summed by query; and the labels it released."""
    from scipy.special import logsumexp
    count, labels = votes.queries, votes.label_count
    run = analyze_votes(np.ascontiguousarray(votes.counts.reshape(count * labels, 2)),
                        mechanism, teachers=votes.teachers, accounting=accounting,
                        delta=delta, orders=orders, conversion=conversion, seed=seed,
                        labels=None if votes.labels is None else votes.labels.reshape(-1),
                        initial_rdp=initial_rdp, q_bound=q_bound, workers=workers,
                        source=votes)
    if accounting == "data-independent" and initial_rdp is None:
        run = with_pld_figure(run, mechanism, delta)  # each label a Gaussian step
    rows = QueryTable.of_frame(run.to_frame())  # the flattened rows' table, in memory
    selection, answer = mechanism_steps(mechanism, q_bound=q_bound)
    independent = accounting == "data-independent"
    epsilon_query = np.empty(count)
    for lo in range(0, count, CURVE_ROWS):  # the labels' curves as charged (MATH.md s.7)
        hi = min(count, lo + CURVE_ROWS)
        flat = slice(lo * labels, hi * labels)
        sel, sel_index = step_curves(selection, rows.log_pr_answered[flat], run.orders,
                                     independent)
        ans, ans_index = step_curves(answer, rows.log_q[flat], run.orders, independent)
        curves = sel[sel_index] + rows.answered[flat, None] * ans[ans_index]
        epsilon_query[lo:hi] = rdp_to_epsilon(curves.reshape(hi - lo, labels, -1).sum(axis=1),
                                              orders=run.orders, delta=delta,
                                              conversion=conversion)[0]

    def by_query(column: np.ndarray) -> np.ndarray:
        return column.reshape(count, labels)
    answered_bits = (by_query(rows.label) >= 0).astype(np.int64)
    any_answered = answered_bits.any(axis=1)
    last = np.arange(count) * labels + labels - 1
    with np.errstate(divide="ignore"):
        log_pr = logsumexp(by_query(rows.log_pr_answered), axis=1) - np.log(labels)
    return replace(run, counts=_counts(count, any_answered), frames=None, distinct_pairs=None,
                   table=QueryTable(
        plurality=by_query(rows.plurality).min(axis=1),
        plurality_class=_sets(by_query(rows.plurality_class)),
        answered=by_query(rows.answered).sum(axis=1),
        label=np.where(any_answered, _sets(np.maximum(by_query(rows.label), 0)), -1),
        log_q=np.minimum(logsumexp(by_query(rows.log_q), axis=1), 0.0),
        log_pr_answered=log_pr, epsilon_query=epsilon_query,
        epsilon_cumulative=rows.epsilon_cumulative[last],
        order_cumulative=rows.order_cumulative[last],
        rdp_selection=by_query(rows.rdp_selection).sum(axis=1),
        rdp_answer=by_query(rows.rdp_answer).sum(axis=1),
        columns={"answered_labels": _sets(answered_bits)}), query_index=None
    ), int(answered_bits.sum())


def _whole_sets(votes, mechanism, *, variant, tau, accounting, delta, orders, conversion,
                seed, initial_rdp) -> AnalysisResult:
    """tau and powerset: every query answered with one GNMax-type release."""
    orders, converter = checked_setting(accounting, delta, orders, conversion)
    count, labels = votes.queries, votes.label_count
    sigma, teachers = mechanism.sigma, votes.teachers
    noise = NoiseSource(seed)
    independent = rdp_multilabel_data_independent(variant, sigma=sigma, orders=orders,
                                                  labels=labels, tau=tau)
    curves = np.broadcast_to(independent, (count, orders.size))
    if variant == "tau":
        sums = clipped_sums(votes.predictions, tau)
        bits = replay_tau(sums, teachers=teachers, sigma=sigma, noise=noise)
        label = _sets(bits)
        plurality = np.maximum(teachers - sums, sums).min(axis=1)
        plurality_bits = sums > teachers - sums
        log_q = np.full(count, np.nan)
    else:
        histogram = powerset_votes(votes.predictions)
        label = replay_powerset(histogram, labels=labels, sigma=sigma, noise=noise)
        bits = (label[:, None] >> np.arange(labels)) & 1
        top = np.argmax(histogram.counts, axis=1)
        plurality = histogram.counts[np.arange(count), top]
        plurality_bits = (histogram.sets[np.arange(count), top][:, None]
                          >> np.arange(labels)) & 1
        log_q = log_q_gnmax_with_zero_block(
            histogram.counts, 2.0**labels - histogram.counts.shape[1], sigma)
        if accounting != "data-independent":
            distinct, index = np.unique(log_q, return_inverse=True)
            curves = rdp_gnmax(distinct, sigma=sigma, orders=orders)[index.reshape(-1)]
    carry = (np.zeros(orders.size) if initial_rdp is None
             else np.asarray(initial_rdp, dtype=np.float64))
    figures = running_epsilon(ArrayRows(np.ascontiguousarray(curves)), count, carry,
                              converter, per_query=True)
    assert figures.epsilon_query is not None  # per_query=True
    epsilon, order = (float(x) for x in rdp_to_epsilon(figures.carry, orders=orders,
                                                       delta=delta, conversion=conversion))
    eps_di, order_di = (float(x) for x in rdp_to_epsilon(
        carry + count * independent, orders=orders, delta=delta, conversion=conversion))
    at = int(np.flatnonzero(orders == order)[0])
    return AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=2,
        counts=_counts(count, label >= 0), table=QueryTable(
            plurality=plurality, plurality_class=_sets(plurality_bits),
            answered=np.full(count, float(labels)), label=label, log_q=log_q,
            log_pr_answered=np.zeros(count), epsilon_query=figures.epsilon_query,
            epsilon_cumulative=figures.epsilon, order_cumulative=orders[figures.order_index],
            rdp_selection=np.zeros(count), rdp_answer=np.ascontiguousarray(curves[:, at])),
        rdp_total=figures.carry, epsilon=epsilon, order=order, epsilon_data_independent=eps_di,
        order_data_independent=order_di, answered_total=float(count * labels),
        rdp_at_order={"selection": 0.0, "answer": float(figures.carry[at] - carry[at])},
        label_accuracy=None if votes.labels is None else float(np.mean(bits == votes.labels)),
        warnings=grid_edge_notes(orders, order, epsilon), source=votes,
        initial_rdp=None if initial_rdp is None else carry)
