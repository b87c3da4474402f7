"""What a finished single run adds: the PLD figure (data-independent: the smaller of the RDP
and the Gaussian steps' PLD figures, ``accounting.pld``; math:independent, math:sampling),
``--tuning``'s random-search cost (math:tuning; ``epsilon`` stays the single run's) and the
GNSS report (``--smooth-sensitivity``, math:smooth; streamed: :class:`PendingRelease`)."""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from ..accounting.conversion import grid_edge_notes, rdp_to_epsilon
from ..accounting.pld import (
    gaussian_exact_epsilon,
    gaussian_pld,
    laplace_pld_epsilon,
    pure_composed_epsilon,
    pure_composed_profile,
)
from ..accounting.risk import TRUSTED_DELTA, pld_risk, profile_risk, rdp_risk
from ..accounting.smooth_sensitivity import (
    DEFAULT_CHUNK,
    ChunkValues,
    Release,
    ReleaseSetting,
    SmoothSensitivityResult,
)
from ..accounting.tuning import TuningDistribution, tuned_epsilon, tuned_rdp
from ..errors import PateWarning
from ..inputs.rows import AnalysedRows, FirstRows
from ..mechanisms import release_draw
from ..rounding import ceil_text
from ..vote_rows import is_sparse
from ..work_sizes import READ_VALUES
from .attack_risk import GAUSSIAN, bound_curve, gaussian_steps, is_sampled, own_bound
from .result import AnalysisResult, TuningPart
from .steps import mechanism_steps, run_charges

# Most answers a pure-DP exact composition is formed for (answers + 1 binomial terms; past a
# few the RDP figure is smaller anyway).
PURE_COMPOSED_QUERIES = 10_000
# Most LNMax answers whose noisy counts' PLD is composed (under a second a figure).
LAPLACE_PLD_QUERIES = 100_000


def with_smaller_pld(result: AnalysisResult, figure: float | None) -> AnalysisResult:
    """The PLD ``figure`` replaces the RDP one (kept as ``epsilon_rdp``) when smaller;
    ``remaining = max(0, limit - figure)`` (the halt, found on the RDP sums, math:costs, stays
    valid and cautious); the grid-edge note goes (no wider grid changes it)."""
    if figure is None or not figure < result.epsilon:
        return result
    budget = result.budget
    if budget is not None:
        budget = replace(budget, remaining=max(0.0, budget.limit - figure))
    edge = grid_edge_notes(result.orders, result.order, result.epsilon)
    return replace(result, epsilon=figure, epsilon_data_independent=figure,
                   data_independent_method="pld", epsilon_rdp=result.epsilon, budget=budget,
                   warnings=tuple(note for note in result.warnings if note not in edge))


def with_pld_figure(result: AnalysisResult, mechanism, delta: float) -> AnalysisResult:
    """:func:`pld_figure` as ``epsilon_data_independent_pld`` (replay: its answers; expected:
    all answered) and, beside ``epsilon_data_independent_worst``, of all answered as
    ``epsilon_data_independent_worst_pld``, whose sampled or pure-DP risk (else the run's) is
    ``risk_data_independent``; data-independent: also replaces the RDP figure where smaller."""
    answered = (result.queries if result.accounting == "expected"
                else int(round(result.answered_total)))
    figure, sampled_risk = pld_figure(mechanism, result.queries, answered, delta)
    if figure is None:
        return result
    if result.accounting == "data-independent":
        result = with_smaller_pld(result, figure)
    worst, requested = None, result.requested or result.queries  # (a budget's: past the halt)
    if result.epsilon_data_independent_worst is not None:
        worst = figure
        if answered < requested:
            worst, sampled_risk = pld_figure(mechanism, requested, requested, delta)
    result = replace(result, epsilon_data_independent_pld=figure,
                     epsilon_data_independent_worst_pld=worst)
    return result if sampled_risk is None else replace(result,
                                                        risk_data_independent=sampled_risk)


def any_run_epsilon(result: AnalysisResult) -> float | None:
    """The bound for any run, every query answered (math:costs): the PLD figure where below the
    RDP one; None where the run reports none."""
    worst, pld = result.epsilon_data_independent_worst, result.epsilon_data_independent_worst_pld
    return None if worst is None else float(worst if pld is None else min(worst, pld))


def published_epsilon(result: AnalysisResult) -> float:
    """The epsilon a run publishes, gates and is calibrated on: ``epsilon``, or where a
    data-independent run composes only its answers, its bound for any run."""
    bound = any_run_epsilon(result)
    if result.accounting != "data-independent" or bound is None:
        return float(result.epsilon)
    return bound


def any_run_bound(result: AnalysisResult) -> dict | None:
    """:func:`published_epsilon`'s any-run bound as ``{epsilon, method, rdp, order}`` (its
    accountant, the RDP figure and its order); None where the run publishes its ``epsilon``."""
    worst = result.epsilon_data_independent_worst
    if result.accounting != "data-independent" or worst is None or result.groups is not None:
        return None  # (each group's own bound: no one curve)
    order = float(rdp_to_epsilon(result.rdp_data_independent, orders=result.orders,
                                 delta=result.delta, conversion=result.conversion)[1])
    epsilon = published_epsilon(result)
    return {"epsilon": epsilon, "method": "pld" if epsilon < worst else "rdp",
            "rdp": float(worst), "order": order}


def exact_gaussian_figure(steps: list, delta: float) -> float | None:
    """``gaussian_exact_epsilon(steps, delta)``; None where the profile is not resolved in
    floats (a std near its lower limit): the RDP figure stands alone."""
    figure = gaussian_exact_epsilon(steps, delta)
    return figure if math.isfinite(figure) else None


def pld_figure(mechanism, queries: int, answered: int,
               delta: float) -> tuple[float | None, Any]:
    """Data-independent epsilon of ``queries`` selections and ``answered`` answers composed by
    ``accounting.pld``, and the composition's attack risk (math:risk) or None.

    Gaussian (L2 sensitivity sqrt(2), or the sampled run's): the steps' exact figure unsampled
    (sampling never costs more, math:sampling); Poisson-sampled with dp_accounting, the smaller
    of it and the sampled composition (Confident's shared steps as ``steps._sampled``), with its
    risk. Pure-DP (LNMax ``2 / lambda``, exponential ``2 eta``; sampled runs unsampled): up to
    ``PURE_COMPOSED_QUERIES`` answers, the exact composition (``pld.pure_composed_epsilon``:
    randomized response's loss dominates every pure-DP step) with its risk; LNMax with
    dp_accounting: also the noisy counts' PLD (two Laplace steps an answer, up to
    ``LAPLACE_PLD_QUERIES``; its risk unread: the caller caps risk by the printed pair).

    Returns:
      ``(epsilon, risk)``; ``(None, None)`` for another aggregator.
    """
    plain = gaussian_steps(mechanism, answered=answered, queries=queries)
    if plain is None:
        pure = getattr(mechanism, "pure_epsilon", None)
        if pure is None or answered <= 0:  # sampled too: sampling never costs more
            return None, None
        found: list[float | None] = []
        risk = None
        if answered <= PURE_COMPOSED_QUERIES:
            found.append(pure_composed_epsilon(pure, answered, delta))
            epsilons, deltas = pure_composed_profile(pure, answered)
            risk = profile_risk(epsilons, deltas, "pld")
        scale = getattr(mechanism, "laplace_scale", None)  # LNMax: two Laplace steps each
        if scale is not None and answered <= LAPLACE_PLD_QUERIES:
            found.append(laplace_pld_epsilon(scale, 2 * answered, delta))
        figures = [figure for figure in found if figure is not None]
        return (min(figures) if figures else None), risk
    exact = exact_gaussian_figure(plain, delta)
    figures = [] if exact is None else [exact]
    sampled_risk = None
    sampling = mechanism.sampling if is_sampled(mechanism) else None
    if sampling is not None and sampling.scheme == "poisson":
        steps = plain
        if mechanism.selects and sampling.steps == "shared":
            joint = 1.0 / math.sqrt(1.0 / mechanism.sigma_threshold**2
                                    + (plain[0][0] / mechanism.sigma)**2)
            steps = [(1.0, joint, answered), (1.0, mechanism.sigma_threshold,
                                              queries - answered)]
        pld = gaussian_pld(steps, sampling.rate)
        if pld is not None:
            if delta >= TRUSTED_DELTA:  # below it, the RDP figure (accounting.risk)
                with np.errstate(over="ignore", invalid="ignore"):
                    composed = float(pld.get_epsilon_for_delta(delta))
                figures += [composed] if math.isfinite(composed) else []  # else the RDP's
            sampled_risk = pld_risk(pld)
    return (min(figures) if figures else None), sampled_risk


def tuning_part(result, distribution: TuningDistribution) -> TuningPart:
    """Cost of a random search (``distribution``) of candidates each costing at most
    ``result``'s RDP curve; data-dependent: also the search's data-independent bound
    (math:tuning, the figure a report may publish) and its attack risk (math:risk)."""
    tuned = partial(tuned_epsilon, orders=result.orders, delta=result.delta,
                    conversion=result.conversion, distribution=distribution)
    epsilon, order = tuned(result.rdp_total)
    independent = risk = None
    curve = bound_curve(result)
    if curve is not None and not own_bound(result):  # the search's bound beside its epsilon
        independent = tuned(curve)[0]
    if curve is not None and result.svt is None and result.groups is None:
        risk = rdp_risk(tuned_rdp(curve, orders=result.orders, distribution=distribution),
                        orders=result.orders, conversion=result.conversion)
    return TuningPart(distribution=distribution.name, text=distribution.text,
                      mean=distribution.mean, shape=distribution.shape_value,
                      epsilon_single=result.epsilon, epsilon_tuned=epsilon, order=order,
                      epsilon_tuned_data_independent=independent, risk=risk)


def sanitize_analysis(result, votes, *, student=None, order: float | None = None,
                      report_every: int | None = None, positions=None,
                      charges: ChunkValues | None = None,
                      decisions=None) -> SmoothSensitivityResult:
    """The smooth-sensitivity report of ``result`` (from ``votes``), a chunk at a time.

    Args:
      result: a replay or expected analysis of GNMax, Confident or Interactive.
      votes: the votes ``result`` analysed.
      student: Interactive's student probabilities.
      order: the order reported at (default: ``result``'s).
      report_every: queries between history checkpoints (default: no history).
      positions: the file rows it processed (default its ``query_index`` or first rows).
      charges: the answer step's charges, ``charges(start, stop)`` (default the seeded
        replay's, or those of ``decisions``).
      decisions: a run of given decisions: its ``Decisions``, which the charges follow
        (formed from the chunk the release reads: each row is read once).

    Returns:
      The ``SmoothSensitivityResult``.

    Raises:
      ValueError: where it does not apply or ``votes`` are not ``result``'s, and naming
        condition C5 or C6 when one fails at the order (before any vote is read).
    """
    _check_votes_match(result, votes)
    release = release_of(result, votes, order=order, report_every=report_every)
    if positions is None:
        positions = (FirstRows(result.queries) if result.query_index is None
                     else result.query_index)
    rows: Any = AnalysedRows(votes, positions, result.queries)  # sliced as an array is
    student_rows = (None if not result.mechanism.uses_student
                    else AnalysedRows(student, positions, result.queries))
    if charges is None:
        if result.decisions is not None and decisions is None:
            raise ValueError("the smooth-sensitivity report of a run of given decisions "
                             "needs them (decisions=) or their charges (charges=)")
        charges = run_charges(rows, mechanism=result.mechanism, accounting=result.accounting,
                              seed=result.seed, q_bound=result.q_bound,
                              student_rows=student_rows, decisions=decisions)
    maxima = None if student_rows is None else (  # Interactive's max(n - M p)
        lambda start, stop: result.mechanism.selection_counts(rows[start:stop],
                                                              student_rows[start:stop]))
    # each chunk's rows held while its charges and maxima read them (AnalysedRows)
    return release.read(rows, charges, maxima)


def _check_votes_match(result, votes) -> None:
    """ValueError where ``votes`` lack ``result``'s classes or the rows it analysed."""
    shape = tuple(int(size) for size in getattr(votes, "shape", ()))
    rows = (result.queries if result.query_index is None
            else int(np.max(result.query_index, initial=-1)) + 1)
    if len(shape) != 2 or shape[1] != result.classes or shape[0] < rows:
        raise ValueError(f"votes of shape {shape or type(votes).__name__} cannot be the votes "
                         f"the result analysed ({rows:,} rows of {result.classes:,} classes)")


def smooth_release(result, votes, *, stream: bool, budget: float | None,
                   **options) -> SmoothSensitivityResult | PendingRelease:
    """:func:`sanitize_analysis` (``options`` its keywords) or, for a streamed table, the
    :class:`PendingRelease` the table's pass forms (its refusals raised now)."""
    own = partial(sanitize_analysis, result, votes, **options)
    if not stream:
        return own()
    return PendingRelease(partial(release_of, result, votes, order=options.get("order"),
                                  report_every=options.get("report_every")), own, budget)


def release_of(result, votes, *, order: float | None = None,
               report_every: int | None = None) -> Release:
    """The GNSS release of ``result`` (math:smooth) before any chunk; ``chunk_size`` rows a
    chunk (sparse votes: stored width within ``READ_VALUES``).

    Raises:
      ValueError: another mechanism, data-independent accounting, or an order where the release
        is not computable or condition C5 or C6 fails.
    """
    mechanism = result.mechanism
    if mechanism.name not in GAUSSIAN:
        raise ValueError(f"--smooth-sensitivity applies to {', '.join(GAUSSIAN)}, "
                         f"not {mechanism.name}")
    if result.accounting == "data-independent":
        raise ValueError("--smooth-sensitivity needs replay or expected accounting (a "
                         "data-independent epsilon is already public)")
    order = float(result.order if order is None else order)
    chunk_size = (min(DEFAULT_CHUNK, max(1, READ_VALUES // votes.width)) if is_sparse(votes)
                  else DEFAULT_CHUNK)
    selection: dict = {}
    if mechanism.selects:
        # the threshold step's data-independent curve, as the run charges it (math:screening)
        step, _ = mechanism_steps(mechanism, q_bound=result.q_bound)
        assert step is not None  # a selecting mechanism
        selection = dict(threshold=mechanism.threshold,
                         sigma_threshold=mechanism.sigma_threshold,
                         selection_cap=float(step.independent(np.array([order]))[0]))
    release = Release(ReleaseSetting(
        teachers=int(round(result.teachers)), sigma=mechanism.sigma, order=order,
        delta=result.delta, release_noise=release_draw(result.seed),
        report_every=report_every, chunk_size=chunk_size, spent=_spent(result, order),
        **selection),
        classes=votes.shape[1], queries=result.queries)
    sums = release.sums
    if not sums.answer_independent and not all(sums.conditions()):
        failed = [name for name, ok in zip(("C5", "C6"), sums.conditions(), strict=True) if not ok]
        raise ValueError(f"smooth sensitivity is not valid here: condition "
                         f"{' and '.join(failed)} fails for sigma {mechanism.sigma:g}, "
                         f"K {result.classes}, order {order:g} (choose another --order)")
    return release


def _spent(result, order: float) -> float:
    """RDP spent before the first query (``initial_rdp``) at ``order``; ValueError elsewhere."""
    if result.initial_rdp is None:
        return 0.0
    at = np.flatnonzero(np.asarray(result.orders, dtype=float) == order)
    if at.size == 0:
        raise ValueError(f"the added RDP curve is known at the run's orders, not at order "
                         f"{order:g}: give that order to the run")
    return float(result.initial_rdp[at[0]])


def selection_maxima(mechanism, block, student) -> np.ndarray | None:
    """Interactive's selection statistic ``max(n - M p)`` (math:threshold); None for the
    others (``max n``)."""
    if not mechanism.selects or student is None:
        return None
    return mechanism.selection_counts(block, student)


def budget_limit(result: AnalysisResult) -> float | None:
    """The run's ``--budget``, or None."""
    return None if result.budget is None else result.budget.limit


SECRET_SEED_NOTE = "the sanitised release protects the votes only while its noise is secret"


def secret_seed_note(seed: int) -> str:
    """Every sanitised release's note: its noise is ``release_draw(seed)``, a recorded seed."""
    return (f"{SECRET_SEED_NOTE}: it is drawn from --seed {seed}, which this output records "
            "beside the unsanitised figures; publish the release alone, from a run whose "
            "--seed was drawn at random and kept private")


def release_notes(report: SmoothSensitivityResult | None,
                  budget: float | None) -> tuple[str, ...]:
    """A note where the release's epsilon (its own cost added) exceeds ``--budget``."""
    if budget is None or report is None or not report.epsilon_after > budget:
        return ()
    return (f"--budget {budget:g} halts the data-dependent epsilon, not its release: with "
            f"--smooth-sensitivity's own cost it is {ceil_text(report.epsilon_after)}, "
            "above the budget",)


def streamed_notes(result: AnalysisResult) -> tuple[str, ...]:
    """A pending release's :func:`release_notes`: formed after the run, so not in
    ``result.warnings`` (an eager release's is); the summary adds it."""
    if not isinstance(result.release, PendingRelease):
        return ()
    return release_notes(result.release.report(), budget_limit(result))


class PendingRelease:
    """The smooth-sensitivity release of a ``per_query="stream"`` run: formed by the table's
    pass if that ends first, else by :meth:`report`'s own pass over the same chunks (same
    report). Its :func:`release_notes` are issued as ``PateWarning`` when formed."""

    def __init__(self, make: Callable[[], Release],
                 own: Callable[[], SmoothSensitivityResult], budget: float | None):
        self.own, self.budget = own, budget
        self.unfed: Release | None = make()  # (its refusals raised now, before any output)
        self.chunk_size = self.unfed.chunk_size
        self.formed: SmoothSensitivityResult | None = None
        self.lock = threading.Lock()

    def claim(self, rows: int, window: int | None) -> Release | None:
        """The release to feed, for the first pass handing over every ``chunk_size``-row chunk
        (cut also at multiples of ``window``); None where chunks exceed the pass's ``rows``
        (its memory bound), cuts would split them, or once claimed or formed (an unfinished
        pass leaves it to :meth:`report`)."""
        if self.chunk_size > rows or (window is not None and window % self.chunk_size):
            return None
        with self.lock:
            release, self.unfed = self.unfed, None
        return release

    def form(self, report: SmoothSensitivityResult) -> SmoothSensitivityResult:
        """Keep ``report`` (the first formed) and issue its note."""
        with self.lock:
            first = self.formed is None
            if first:
                self.formed = report
        if first:
            self.unfed = None
            for note in release_notes(report, self.budget):
                warnings.warn(PateWarning(note), stacklevel=2)
        return self.formed if self.formed is not None else report

    def report(self) -> SmoothSensitivityResult:
        """The release: the table pass's, or formed now by a pass of its own."""
        return self.formed if self.formed is not None else self.form(self.own())
