"""Multi-label runs (``--multilabel``; Dziedzic et al. 2023; derivations in
``accounting.multilabel``): one per-query row with each query's curves summed over its
labels.

- ``binary``: the ``(queries, labels, 2)`` counts flattened to ``(queries * labels, 2)``
  rows analysed by ``analyze_votes`` (GNMax or Confident per label; Confident thresholds
  each label's larger count and releases that label's bit or nothing). The totals are
  those of the flattened file, bit for bit, with its noise keyed by the flattened row
  ``query * labels + label``; a query's curve is the sum of its labels' curves, valid for
  a teacher changing every label at once (``accounting.multilabel``).
- ``tau:TAU`` and ``powerset`` (GNMax only, from per-teacher predictions): every query
  is answered; tau's curve is data-independent in every accounting mode (no
  data-dependent bound for the clipped Gaussian), powerset's is MATH.md s.3 with s.14's
  zero block of unobserved sets (``expected`` = ``replay``: GNMax answers every query).

Per-query rows: ``plurality`` = the weakest label's plurality count, ``plurality_class``
and ``label`` = label sets (bit l = label l; -1 beyond ``MAX_SET_LABELS`` labels, and
``label`` -1 when no label of the query was released), ``answered`` = labels answered
(expected under ``expected``), ``log_q`` = the log of the sum of the labels' q (binary;
NaN for tau), ``log_pr_answered`` = log of the mean pr_answered, and the extra column
``answered_labels`` = the set of labels released (binary). Label accuracy is over
(query, label) pairs released. Arrays are read whole: memory grows with the file.
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
from .added_figures import with_pld_figure
from .result import AnalysisResult, MultilabelPart, QueryCounts, QueryTable
from .run import analyze_votes
from .setting import checked_setting, grid_edge_notes
from .steps import mechanism_steps, step_curves

# Queries whose summed curves are formed at once.
CURVE_ROWS = 4096
# The mechanisms each variant runs.
VARIANT_MECHANISMS = {"binary": ("gnmax", "confident"), "tau": ("gnmax",),
                      "powerset": ("gnmax",)}


def parse_variant(text: str) -> tuple[str, float | None]:
    """``--multilabel`` text -> ``(variant, tau)``: ``binary``, ``powerset`` or
    ``tau:TAU`` (TAU a positive number); ``OptionError`` otherwise."""
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


def analyze_multilabel(votes, mechanism, *, variant: str, tau: float | None,
                       accounting: str, delta: float, orders, conversion: str, seed: int,
                       queries: int | None = None, initial_rdp=None, q_bound: str = "union",
                       workers: int | None = None) -> AnalysisResult:
    """Analyse ``votes`` (an ``inputs.multilabel.MultilabelVotes``) as ``variant``."""
    if queries is not None:
        votes = replace(votes, counts=votes.counts[:queries],
                        predictions=None if votes.predictions is None
                        else votes.predictions[:queries],
                        labels=None if votes.labels is None else votes.labels[:queries])
    labels = votes.label_count
    output = votes.queries * labels  # tau and powerset release every label
    if variant == "binary":
        result, output = _binary(votes, mechanism, accounting=accounting, delta=delta,
                                 orders=orders, conversion=conversion, seed=seed,
                                 initial_rdp=initial_rdp, q_bound=q_bound, workers=workers)
    else:
        result = _whole_sets(votes, mechanism, variant=variant, tau=tau,
                             accounting=accounting, delta=delta, orders=orders,
                             conversion=conversion, seed=seed, initial_rdp=initial_rdp)
    part = MultilabelPart(variant, labels, tau,
                          sensitivity_squared(variant, labels=labels, tau=tau), output)
    if variant != "binary" and accounting == "data-independent" and initial_rdp is None:
        figure = gaussian_pld_epsilon(
            [(math.sqrt(part.sensitivity_squared), mechanism.sigma, votes.queries)], delta)
        if figure is not None and figure < result.epsilon:
            result = replace(result, epsilon=figure, epsilon_data_independent=figure,
                             data_independent_method="pld", epsilon_rdp=result.epsilon)
    return replace(result, multilabel=part)


def run_multilabel(text: str, votes, predictions, mechanism, *, build, labels, accounting,
                   delta, orders, conversion, seed, queries, initial_rdp, q_bound,
                   workers) -> AnalysisResult:
    """``--multilabel TEXT`` over a counts file ``votes`` or a ``predictions`` file: read,
    check the options (one-line ``OptionError``/``InputError``), analyse. ``build(M)``
    makes the mechanism for M teachers (``mechanism`` names it)."""
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
    if queries is not None and queries > vote_set.queries:
        raise OptionError(f"--queries {queries} is larger than the {vote_set.queries} "
                          f"queries in {vote_set.path}")
    result = analyze_multilabel(vote_set, build(vote_set.teachers), variant=variant, tau=tau,
                                accounting=accounting, delta=delta, orders=orders,
                                conversion=conversion, seed=seed, queries=queries,
                                initial_rdp=initial_rdp, q_bound=q_bound, workers=workers)
    return replace(result, q_bound=q_bound)


def _counts(queries: int, output: np.ndarray) -> QueryCounts:
    """What the summary needs of a multi-label run's queries (``output``: where a label
    set was released)."""
    return QueryCounts(queries=queries, labels_output=int(np.count_nonzero(output)),
                       outcomes=None, reordered=False)


def _sets(bits: np.ndarray) -> np.ndarray:
    """Label-set ids of 0/1 ``(queries, labels)``, or -1 beyond ``MAX_SET_LABELS``."""
    if bits.shape[1] > MAX_SET_LABELS:
        return np.full(bits.shape[0], -1, dtype=np.int64)
    return set_ids(bits)


def _binary(votes, mechanism, *, accounting, delta, orders, conversion, seed, initial_rdp,
            q_bound, workers) -> tuple[AnalysisResult, int]:
    """The flattened run, its rows summed by query; and the labels it released."""
    from scipy.special import logsumexp
    count, labels = votes.queries, votes.label_count
    flat = np.ascontiguousarray(votes.counts.reshape(count * labels, 2))
    truth = None if votes.labels is None else votes.labels.reshape(-1)
    run = analyze_votes(flat, mechanism, teachers=votes.teachers, accounting=accounting,
                        delta=delta, orders=orders, conversion=conversion, seed=seed,
                        labels=truth, initial_rdp=initial_rdp, q_bound=q_bound,
                        workers=workers, source=votes)
    if accounting == "data-independent" and initial_rdp is None:
        run = with_pld_figure(run, mechanism, delta)  # each label a Gaussian step
    shaped = (count, labels)
    flat_rows = QueryTable.of_frame(run.to_frame())  # the flattened rows' table, in memory
    per_label_curves = _label_curves(run, flat_rows, mechanism, q_bound)
    epsilon_query = np.empty(count)
    for lo in range(0, count, CURVE_ROWS):
        hi = min(count, lo + CURVE_ROWS)
        summed = per_label_curves(lo * labels, hi * labels).reshape(
            hi - lo, labels, -1).sum(axis=1)
        epsilon_query[lo:hi] = rdp_to_epsilon(summed, orders=run.orders, delta=delta,
                                              conversion=conversion)[0]
    released = flat_rows.label.reshape(shaped)
    answered_bits = (released >= 0).astype(np.int64)
    any_answered = answered_bits.any(axis=1)
    last = np.arange(count) * labels + labels - 1
    with np.errstate(divide="ignore"):
        log_pr = logsumexp(flat_rows.log_pr_answered.reshape(shaped), axis=1) - np.log(labels)
    return replace(run, counts=_counts(count, any_answered), frames=None, distinct_pairs=None,
                   table=QueryTable(
        plurality=flat_rows.plurality.reshape(shaped).min(axis=1),
        plurality_class=_sets(flat_rows.plurality_class.reshape(shaped)),
        answered=flat_rows.answered.reshape(shaped).sum(axis=1),
        label=np.where(any_answered, _sets(np.maximum(released, 0)), -1),
        log_q=np.minimum(logsumexp(flat_rows.log_q.reshape(shaped), axis=1), 0.0),
        log_pr_answered=log_pr, epsilon_query=epsilon_query,
        epsilon_cumulative=flat_rows.epsilon_cumulative[last],
        order_cumulative=flat_rows.order_cumulative[last],
        rdp_selection=flat_rows.rdp_selection.reshape(shaped).sum(axis=1),
        rdp_answer=flat_rows.rdp_answer.reshape(shaped).sum(axis=1),
        columns={"answered_labels": _sets(answered_bits)}), query_index=None
    ), int(answered_bits.sum())


def _label_curves(run: AnalysisResult, rows: QueryTable, mechanism, q_bound: str):
    """Rows ``lo .. hi-1`` of the flattened run (its per-query ``rows``) -> their curves
    (selection + weighted answer, MATH.md s.7), as the run charged them."""
    selection, answer = mechanism_steps(mechanism, q_bound=q_bound)
    independent = run.accounting == "data-independent"

    def curves(lo: int, hi: int) -> np.ndarray:
        sel, sel_index = step_curves(selection, rows.log_pr_answered[lo:hi], run.orders,
                                     independent)
        ans, ans_index = step_curves(answer, rows.log_q[lo:hi], run.orders, independent)
        return sel[sel_index] + rows.answered[lo:hi, None] * ans[ans_index]
    return curves


def _whole_sets(votes, mechanism, *, variant, tau, accounting, delta, orders, conversion,
                seed, initial_rdp) -> AnalysisResult:
    """tau and powerset: every query answered with one GNMax-type release."""
    orders, converter = checked_setting(accounting, delta, orders, conversion)
    count, labels = votes.queries, votes.label_count
    sigma, teachers = mechanism.sigma, votes.teachers
    noise = NoiseSource(seed)
    independent = rdp_multilabel_data_independent(variant, sigma=sigma, orders=orders,
                                                  labels=labels, tau=tau)
    if variant == "tau":
        sums = clipped_sums(votes.predictions, tau)
        bits = replay_tau(sums, teachers=teachers, sigma=sigma, noise=noise)
        label = _sets(bits)
        top = np.maximum(teachers - sums, sums)
        plurality, plurality_bits = top.min(axis=1), (sums > teachers - sums)
        log_q = np.full(count, np.nan)
        curves = np.broadcast_to(independent, (count, orders.size))
    else:
        histogram = powerset_votes(votes.predictions)
        label = replay_powerset(histogram, labels=labels, sigma=sigma, noise=noise)
        bits = (label[:, None] >> np.arange(labels)) & 1
        top = np.argmax(histogram.counts, axis=1)
        plurality = histogram.counts[np.arange(count), top]
        plurality_bits = (histogram.sets[np.arange(count), top][:, None]
                          >> np.arange(labels)) & 1
        width = histogram.counts.shape[1]
        log_q = log_q_gnmax_with_zero_block(histogram.counts, 2.0**labels - width, sigma)
        if accounting == "data-independent":
            curves = np.broadcast_to(independent, (count, orders.size))
        else:
            distinct, index = np.unique(log_q, return_inverse=True)
            curves = rdp_gnmax(distinct, sigma=sigma, orders=orders)[index.reshape(-1)]
    carry = (np.zeros(orders.size) if initial_rdp is None
             else np.asarray(initial_rdp, dtype=np.float64))
    figures = running_epsilon(ArrayRows(np.ascontiguousarray(curves)), count, carry,
                              converter, per_query=True)
    epsilon, order = (float(x) for x in rdp_to_epsilon(figures.carry, orders=orders,
                                                       delta=delta, conversion=conversion))
    at = int(np.flatnonzero(orders == order)[0])
    di_total = carry + count * independent
    eps_di, order_di = (float(x) for x in rdp_to_epsilon(di_total, orders=orders, delta=delta,
                                                         conversion=conversion))
    own = figures.epsilon_query  # formed: per_query=True
    assert own is not None
    accuracy = None
    if votes.labels is not None:
        accuracy = float(np.mean(bits == votes.labels))
    answered = np.full(count, float(labels))
    rdp_answer = np.ascontiguousarray(curves[:, at])
    return AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=2,
        counts=_counts(count, label >= 0), table=QueryTable(
            plurality=plurality, plurality_class=_sets(plurality_bits), answered=answered,
            label=label, log_q=log_q, log_pr_answered=np.zeros(count), epsilon_query=own,
            epsilon_cumulative=figures.epsilon, order_cumulative=orders[figures.order_index],
            rdp_selection=np.zeros(count), rdp_answer=rdp_answer),
        rdp_total=figures.carry,
        epsilon=epsilon, order=order, epsilon_data_independent=eps_di,
        order_data_independent=order_di, answered_total=float(count * labels),
        rdp_at_order={"selection": 0.0, "answer": float(figures.carry[at] - carry[at])},
        label_accuracy=accuracy, warnings=grid_edge_notes(orders, order, epsilon),
        source=votes,
        initial_rdp=None if initial_rdp is None else carry)
