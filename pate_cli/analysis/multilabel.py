"""Multi-label runs (``--multilabel``; Dziedzic et al. 2023, derivations in
``accounting.multilabel``): one row per query, its curve the sum of its labels' (valid for a
teacher changing every label at once); the columns are docs/tutorials/multilabel.md's.

- ``binary``: the ``(queries, labels, 2)`` counts as ``(queries * labels, 2)`` rows analysed
  by ``analyze_votes`` (GNMax, or Confident thresholding each label's larger count), noise
  keyed by row ``query * labels + label``; the table is the flattened stream in pieces of
  whole queries, label rows summed.
- ``tau:TAU`` and ``powerset`` (GNMax, from per-teacher predictions): every query answered;
  tau's curve is data-independent in every mode (no data-dependent bound for the clipped
  Gaussian), powerset's is math:gnmax with math:sparse's zero block of unobserved sets. One
  pass adds each chunk's curves to the running sums in query order (same bits for any
  chunking); the table is a second such pass.

Label sets are integers (bit l = label l; -1 beyond ``MAX_SET_LABELS`` labels). Votes are read
a chunk of queries at a time."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..accounting.composition import StepRows, initial_carry, running_epsilon, running_total
from ..accounting.conversion import checked_setting, grid_edge_notes, rdp_to_epsilon
from ..accounting.gnmax import log_q_gnmax, rdp_gnmax
from ..accounting.multilabel import (
    parse_variant,
    rdp_multilabel_data_independent,
    sensitivity_squared,
)
from ..errors import OptionError
from ..inputs.multilabel import (
    attach_multilabel_labels,
    load_multilabel_counts,
    load_multilabel_predictions,
)
from ..inputs.rows import drop_mapped_rows
from ..mechanisms import NoiseSource
from ..mechanisms.multilabel import (
    MAX_SET_LABELS,
    clipped_sums,
    powerset_votes,
    replay_tau,
    set_ids,
)
from ..numerics import raised_rdp, whole
from ..query_table import QueryTable, per_query_frame
from ..work_sizes import WORK_VALUES, stream_rows
from .added_figures import exact_gaussian_figure, with_pld_figure, with_smaller_pld
from .per_query_stream import per_query_frames
from .result import AnalysisResult, MultilabelPart, QueryCounts, RunSetting
from .run import analyze_votes, reports_any_run_bound
from .steps import mechanism_steps, step_curves


def run_multilabel(spec, votes, *, orders, initial_rdp, build) -> AnalysisResult:
    """``--multilabel`` (``spec``, rules checked) over counts ``votes`` or ``spec.predictions``
    at ``orders`` after ``initial_rdp``; ``build(M)`` makes the mechanism for M teachers."""
    predictions, q_bound = spec.predictions, spec.q_bound
    variant, tau = parse_variant(spec.multilabel)
    if (votes is None) == (predictions is None):
        raise OptionError("give exactly one of VOTES or --predictions FILE")
    vote_set = (load_multilabel_counts(votes) if predictions is None
                else load_multilabel_predictions(predictions))
    if variant == "powerset" and vote_set.label_count > MAX_SET_LABELS:
        raise OptionError(f"--multilabel powerset takes at most {MAX_SET_LABELS} labels "
                          f"(label sets are 64-bit integers), got {vote_set.label_count}")
    vote_set = (vote_set if spec.labels is None
                else attach_multilabel_labels(vote_set, spec.labels)).head(spec.queries)
    chosen, chunk = build(vote_set.teachers), spec.chunk_size  # queries per chunk (rules)
    setting = RunSetting(accounting=spec.accounting, delta=spec.delta, orders=orders,
                         conversion=spec.conversion, seed=spec.seed, initial_rdp=initial_rdp,
                         per_query=bool(spec.per_query), chunk_size=chunk, q_bound=q_bound,
                         workers=spec.workers)
    result = (_binary(vote_set, chosen, setting) if variant == "binary" else
              _sets(vote_set, chosen, variant, tau, setting))
    count, label_count = vote_set.queries, vote_set.label_count
    part = MultilabelPart(variant, label_count, tau,
                          sensitivity_squared(variant, labels=label_count, tau=tau),
                          result.counts.labels_output)
    if variant != "binary" and initial_rdp is None:  # every query one Gaussian step
        figure = exact_gaussian_figure(
            [(math.sqrt(part.sensitivity_squared), chosen.sigma, count)], spec.delta)
        if spec.accounting == "data-independent" or variant == "tau":  # tau's in every mode
            result = with_smaller_pld(result, figure)
        worst = None if result.epsilon_data_independent_worst is None else figure
        result = replace(result, epsilon_data_independent_pld=figure,
                         epsilon_data_independent_worst_pld=worst)
    return replace(result, multilabel=part, q_bound=q_bound)


def _binary(votes, mechanism, setting: RunSetting) -> AnalysisResult:
    """The flattened run, its table the flattened stream summed by query;
    ``counts.labels_output``: the (query, label) pairs released."""
    q_bound, workers, per_query, chunk = (setting.q_bound, setting.workers, setting.per_query,
                                          setting.chunk_size)
    run = analyze_votes(votes.flat(), mechanism, accounting=setting.accounting,
                        delta=setting.delta, orders=setting.orders,
                        conversion=setting.conversion, seed=setting.seed,
                        initial_rdp=setting.initial_rdp, teachers=votes.teachers,
                        q_bound=q_bound, workers=workers, source=votes, per_query=per_query,
                        chunk_size=None if chunk is None else chunk * votes.label_count,
                        labels=None if votes.labels is None else votes.labels.reshape(-1))
    if run.initial_rdp is None:  # each label a Gaussian step
        run = with_pld_figure(run, mechanism, run.delta)
    counts = QueryCounts(queries=votes.queries, labels_output=run.counts.labels_output,
                         outcomes=None, reordered=False)
    return replace(run, counts=counts, distinct_pairs=None, query_index=None, frames=partial(
        _binary_frames, run, votes, q_bound, workers, chunk) if per_query else None)


def _binary_frames(run, votes, q_bound: str, workers, chunk, _result):
    """A binary run's table: the flattened run's pieces of whole queries, rows summed by query,
    each query's epsilon from its labels' curves as charged (math:costs)."""
    from scipy.special import logsumexp
    labels, orders, size = votes.label_count, run.orders, run.orders.size
    selection, answer = mechanism_steps(run.mechanism, q_bound=q_bound)
    independent, last = run.accounting == "data-independent", slice(labels - 1, None, labels)
    # every label's plurality count whole (found by the first pass), or each query's
    # smallest: scanned only where some label's is not
    integral = votes.predicted or run.counts.whole_maxima is not False or all(
        whole(votes.rows(lo, hi, float).max(axis=2).min(axis=1)) for lo, hi in votes.pieces())
    # queries whose label curves are formed, summed and converted at once (in cache)
    block = max(1, WORK_VALUES // (labels * size))
    converter = checked_setting(run.accounting, run.delta, orders, run.conversion)[1]
    buffer, summed = np.empty((block * labels, size)), np.empty((block, size))

    def by_query(column: np.ndarray) -> np.ndarray:
        return column.reshape(-1, labels)
    for frame in per_query_frames(run, votes.flat(), q_bound=q_bound, workers=workers,
                                  chunk_size=labels * (chunk or max(1, stream_rows(
                                      None, 2, size) // labels))):
        rows = QueryTable.of_frame(frame)
        count, start = rows.answered.size // labels, int(frame["query"].iat[0]) // labels
        sel, sel_index = step_curves(selection, rows.log_pr_answered, orders, independent)
        ans, ans_index = step_curves(answer, rows.log_q, orders, independent)
        epsilon_query = np.empty(count)
        curves = StepRows(sel, sel_index, ans, ans_index, rows.answered)
        for lo in range(0, count, block):  # each label's curve as charged, summed by query
            hi = min(count, lo + block)
            part, sums = buffer[: (hi - lo) * labels], summed[: hi - lo]
            curves.rows(lo * labels, hi * labels, part)
            np.sum(part.reshape(-1, labels, size), axis=1, out=sums)
            epsilon_query[lo:hi] = converter.epsilon(sums, out=sums)[0]
        answered_bits = (by_query(rows.label) >= 0).astype(np.int64)
        with np.errstate(divide="ignore"):
            log_pr = logsumexp(by_query(rows.log_pr_answered), axis=1) - np.log(labels)
        yield per_query_frame(SimpleNamespace(
            accounting=run.accounting, queries=count, query_index=np.arange(start, start + count),
            plurality=by_query(rows.plurality).min(axis=1), outcome=None,
            plurality_class=set_ids(by_query(rows.plurality_class)),
            answered=by_query(rows.answered).sum(axis=1), label=np.where(
                answered_bits.any(axis=1), set_ids(np.maximum(by_query(rows.label), 0)), -1),
            log_q=np.minimum(logsumexp(by_query(rows.log_q), axis=1), 0.0),
            log_pr_answered=log_pr, epsilon_query=epsilon_query,
            epsilon_cumulative=rows.epsilon_cumulative[last],
            order_cumulative=rows.order_cumulative[last],
            rdp_selection=by_query(rows.rdp_selection).sum(axis=1),
            rdp_answer=by_query(rows.rdp_answer).sum(axis=1),
            columns={"answered_labels": set_ids(answered_bits)}), integral=integral,
            raised=True)


def _rows(curves: np.ndarray, index: np.ndarray) -> StepRows:
    """``curves[index]`` as the per-query rows of the composition kernel."""
    return StepRows(np.zeros((1, curves.shape[1])), np.zeros(index.size, np.intp), curves,
                    index, np.ones(index.size))


@dataclass(frozen=True, eq=False)
class _SetRun:
    """What a tau or powerset run's chunks are formed with; ``dependent``: powerset, not
    data-independent; ``width``: powerset's."""

    variant: str
    tau: float | None
    mechanism: Any  # GNMax: its sigma, and powerset's replay
    noise: NoiseSource
    independent: np.ndarray
    orders: np.ndarray
    dependent: bool
    width: int | None


def _set_chunk(votes, lo: int, hi: int, run: _SetRun, replay: bool = True) -> SimpleNamespace:
    """Queries ``lo .. hi-1`` of a tau or powerset ``run``: curves and (``replay``, noise keyed
    by query position) released set ids and 0/1 labels, log q (NaN for tau), plurality counts
    and sets; powerset's histograms the file's ``width`` wide."""
    variant, tau, sigma, noise, width, independent, orders, dependent = (
        run.variant, run.tau, run.mechanism.sigma, run.noise, run.width, run.independent,
        run.orders, run.dependent)
    count, labels, teachers = hi - lo, votes.label_count, votes.teachers
    part = SimpleNamespace(curves=_rows(independent[None], np.zeros(count, np.intp)))
    if variant == "tau":
        sums = clipped_sums(votes.rows(lo, hi), tau)
        part.plurality = np.maximum(teachers - sums, sums).min(axis=1)
        if replay:
            part.bits = replay_tau(sums, teachers=teachers, sigma=sigma, noise=noise, start=lo)
            part.label, part.log_q, part.plurality_bits = (set_ids(part.bits), np.full(
                count, np.nan), sums > teachers - sums)
        return part
    histogram = powerset_votes(votes.rows(lo, hi), width)
    part.log_q = log_q_gnmax(histogram, sigma=sigma)
    if dependent:
        distinct, index = np.unique(part.log_q, return_inverse=True)
        part.curves = _rows(rdp_gnmax(distinct, sigma=sigma, orders=orders), index.reshape(-1))
    if replay:  # GNMax over the 2^L label sets, as over any sparse votes
        part.label = run.mechanism.replay(histogram, noise=noise, start=lo).label
        part.plurality = histogram.max()
        part.bits, part.plurality_bits = (np.stack([part.label, histogram.plurality_class()])
                                          [..., None] >> np.arange(labels)) & 1
    return part


def _sets(votes, mechanism, variant: str, tau, setting: RunSetting) -> AnalysisResult:
    """tau and powerset: every query answered by one GNMax-type release, its curve added to the
    running sums a chunk (``setting.chunk_size`` queries) at a time."""
    accounting, delta, conversion, seed = (setting.accounting, setting.delta,
                                           setting.conversion, setting.seed)
    initial_rdp, per_query, chunk = setting.initial_rdp, setting.per_query, setting.chunk_size
    orders, converter = checked_setting(accounting, delta, setting.orders, conversion)
    count, labels, scored = votes.queries, votes.label_count, votes.labels is not None
    independent = rdp_multilabel_data_independent(variant, sigma=mechanism.sigma,
                                                  orders=orders, labels=labels, tau=tau)
    dependent = variant == "powerset" and accounting != "data-independent"
    pieces = list(votes.pieces(chunk or stream_rows(
        None, int(np.prod(votes.array.shape[1:])), orders.size)))
    form = partial(_set_chunk, votes, run=_SetRun(
        variant, tau, mechanism, NoiseSource(seed), independent, orders, dependent,
        _widest(votes, pieces) if variant == "powerset" and (dependent or scored) else None))
    total = carry = initial_carry(initial_rdp, orders)
    correct = 0
    for lo, hi in pieces:  # the votes read where the curves or the scored labels need them
        part = (form(lo, hi, replay=scored) if dependent or scored else SimpleNamespace(
            curves=_rows(independent[None], np.zeros(hi - lo, np.intp))))
        total = running_total(part.curves, hi - lo, total)
        if scored:
            correct += int(np.count_nonzero(part.bits == votes.labels[lo:hi]))
            drop_mapped_rows(votes.labels, lo, hi)
    convert = partial(rdp_to_epsilon, orders=orders, delta=delta, conversion=conversion)
    di_curve = carry + count * independent
    # total: a running sum of every query's curve (and the RDP spent before)
    (epsilon, order), (eps_di, order_di) = (map(float, convert(curve, terms=terms)) for
                                            curve, terms in ((total, count + 1), (di_curve, 0)))
    eps_di = max(eps_di, epsilon)  # (analysis.run: capped curves summed in another order)
    at = int(np.flatnonzero(orders == order)[0])
    return AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=votes.teachers, classes=2,
        counts=QueryCounts(queries=count, labels_output=count * labels, outcomes=None,
                           reordered=False),
        rdp_total=total, epsilon=epsilon, order=order, epsilon_data_independent=eps_di,
        # every query answered: the data-independent figure is the bound for any run
        epsilon_data_independent_worst=eps_di if reports_any_run_bound(
            False, accounting) else None,
        rdp_data_independent=di_curve, order_data_independent=order_di,
        answered_total=float(count * labels),
        rdp_at_order={"selection": 0.0,
                      "answer": float(raised_rdp(total[at] - carry[at], count + 1))},
        label_accuracy=correct / (count * labels) if scored else None,
        warnings=grid_edge_notes(orders, order, epsilon), source=votes,
        initial_rdp=None if initial_rdp is None else carry,
        frames=partial(_set_frames, votes, variant, form, pieces, converter.summing(count + 1),
                       carry, at)
        if per_query else None)


def _set_frames(votes, variant: str, form, pieces, converter, carry, at: int, result):
    """A tau or powerset run's table a chunk at a time, sums running from ``carry``
    (math:conversion); a first pass finds powerset's width or whether tau's plurality counts
    are all whole."""
    run = form.keywords["run"]
    if variant == "powerset" and run.width is None:
        form = partial(_set_chunk, votes, run=replace(run, width=_widest(votes, pieces)))
    integral = variant != "tau" or all(whole(form(lo, hi, replay=False).plurality)
                                       for lo, hi in pieces)
    for lo, hi in pieces:
        part, count = form(lo, hi), hi - lo
        figures = running_epsilon(part.curves, count, carry, converter, per_query=True)
        carry = figures.carry
        yield per_query_frame(SimpleNamespace(
            accounting=result.accounting, queries=count, query_index=np.arange(lo, hi),
            plurality=part.plurality, plurality_class=set_ids(part.plurality_bits),
            answered=np.full(count, float(votes.label_count)), label=part.label,
            outcome=None, log_q=part.log_q, log_pr_answered=np.zeros(count),
            rdp_selection=np.zeros(count),
            rdp_answer=part.curves.answer[part.curves.answer_index, at],
            epsilon_query=figures.epsilon_query, epsilon_cumulative=figures.epsilon,
            order_cumulative=result.orders[figures.order_index], columns={}),
            integral=integral)


def _widest(votes, pieces) -> int:
    """The most distinct label sets of any query (powerset's histogram width)."""
    return max(int(powerset_votes(votes.rows(lo, hi)).stored.max()) for lo, hi in pieces)

