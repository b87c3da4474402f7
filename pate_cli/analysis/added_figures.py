"""Figures a finished run adds (``analyze``): each from the run's totals or its queries.

- **The PLD figure** (MATH.md sections 2, 3 and 13): under ``--accounting
  data-independent``, the smaller of the RDP figure and the privacy-loss-distribution
  accountant's for the Gaussian steps, when the optional dp_accounting is installed
  (``data_independent_method`` says which): :func:`with_pld_figure`; for Poisson-sampled
  voters (MATH.md s.16) :func:`with_sampled_pld_figure`.
- **``--tuning``** (MATH.md s.12): the analysed run stands for every candidate of a random
  search (the candidates are runs like it) and the whole search's cost is reported. The
  headline ``epsilon`` stays the single run's figure (scripts read it as such); the
  search's figure is ``tuning.epsilon_tuned``: :func:`tuning_part`.
- **Publishing the data-dependent epsilon** (MATH.md s.10): the GNSS report, which connects
  an ``AnalysisResult`` to ``accounting/smooth_sensitivity/``: the same queries, the answer
  step's charge per query (0/1 in replay, ``pr_answered`` in expected accounting), and the
  order the accounting chose (or one the user fixes): :func:`sanitize_analysis`.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..accounting.pld import gaussian_pld_epsilon, sampled_gaussian_pld_epsilon
from ..accounting.smooth_sensitivity import (
    DEFAULT_CHUNK,
    ChunkValues,
    SmoothSensitivityResult,
    sanitize_confident,
    sanitize_gnmax,
)
from ..accounting.tuning import TuningDistribution, parse_tuning, tuned_epsilon
from ..errors import OptionError
from ..inputs.rows import rows_of
from ..mechanisms import release_draw
from ..mechanisms.sampled import SampledMechanism, unsampled
from ..sparse_rows import SparseRows, is_sparse
from ..work_sizes import READ_VALUES
from .result import AnalysisResult, TuningPart
from .setting import FirstRows
from .steps import run_charges


def with_pld_figure(result: AnalysisResult, mechanism, delta: float) -> AnalysisResult:
    """``--accounting data-independent`` with dp_accounting: the smaller of the RDP figure
    and the PLD accountant's (``accounting.pld``) for Gaussian aggregators; records which
    (``data_independent_method``: ``rdp`` or ``pld``) and keeps the RDP figure it
    replaces (``epsilon_rdp``: the per-query table's last ``epsilon_cumulative``). A
    budget's ``remaining`` is then ``limit - epsilon`` of the PLD figure; the halt itself
    was found on the RDP sums (MATH.md s.7), a valid, cautious rule."""
    if mechanism.name not in ("gnmax", "confident", "interactive"):
        return result
    steps = [(math.sqrt(2.0), mechanism.sigma, int(round(result.answered_total)))]
    if mechanism.name != "gnmax":
        steps.append((1.0, mechanism.sigma_threshold, result.queries))
    figure = gaussian_pld_epsilon(steps, delta)
    if figure is None or not figure < result.epsilon:
        return result
    budget = result.budget
    if budget is not None:  # what is left of the budget, after the reported figure
        budget = replace(budget, remaining=max(0.0, budget.limit - figure))
    return replace(result, epsilon=figure, epsilon_data_independent=figure,
                   data_independent_method="pld", epsilon_rdp=result.epsilon, budget=budget)


# The largest mean number of candidates ``--tuning`` takes: each candidate is a whole
# analysis, and a mean such as 1e300 only printed a 300-digit epsilon.
MAX_TUNING_MEAN = 1e9


def parsed_tuning(text: str) -> TuningDistribution:
    """``parse_tuning`` with the mean held to ``MAX_TUNING_MEAN`` (``ValueError``)."""
    distribution = parse_tuning(text)
    check_tuning_mean(distribution)
    return distribution


def check_tuning_mean(distribution: TuningDistribution) -> None:
    """``OptionError`` for a mean number of candidates above ``MAX_TUNING_MEAN``."""
    if distribution.mean > MAX_TUNING_MEAN:
        raise OptionError(f"--tuning {distribution.name}:{distribution.mean:g}: a "
                          f"random search of more than {MAX_TUNING_MEAN:.0e} candidates on "
                          "average is outside the supported range (each candidate is a "
                          "whole run)")


def tuning_distribution(tuning) -> TuningDistribution:
    """A distribution from ``--tuning`` text (or one already built); ``OptionError``."""
    if isinstance(tuning, TuningDistribution):
        check_tuning_mean(tuning)
        return tuning
    try:
        return parsed_tuning(tuning)
    except OptionError:
        raise
    except ValueError as error:
        raise OptionError(str(error)) from None


def tuning_part(result, tuning) -> TuningPart:
    """The cost of a random search whose candidates each cost at most ``result``'s
    total RDP curve (converted as the run is: same grid, delta and conversion)."""
    distribution = tuning_distribution(tuning)
    epsilon, order = tuned_epsilon(result.rdp_total, orders=result.orders,
                                   delta=result.delta, conversion=result.conversion,
                                   distribution=distribution)
    return TuningPart(distribution=distribution.name, text=distribution.text,
                      mean=distribution.mean, shape=distribution.shape_value,
                      epsilon_single=result.epsilon, epsilon_tuned=epsilon, order=order)


SANITIZABLE = ("gnmax", "confident", "interactive")


def sanitize_analysis(result, votes, *, student=None, order: float | None = None,
                      report_every: int | None = None, positions=None,
                      charges: ChunkValues | None = None) -> SmoothSensitivityResult:
    """The smooth-sensitivity report for ``result`` (computed from ``votes``).

    ``positions``: the file rows the run processed, in order (an array, or
    ``setting.FirstRows``; default: the result's ``query_index`` or its first rows);
    ``charges(start, stop)``: the answer step's charge of processed queries ``start ..
    stop-1`` (default: the seeded replay's, ``steps.run_charges``; a run of given
    decisions must pass its own). Rows, charges and Interactive's selection counts are
    formed a chunk at a time, so memory does not grow with the number of queries.

    Raises ``ValueError`` for mechanisms or accounting modes it does not apply to, and
    when condition C5 or C6 fails at the order (naming the condition, sigma, K and
    order, so the user can pick another ``--order``).
    """
    mechanism = result.mechanism
    if mechanism.name not in SANITIZABLE:
        raise ValueError(f"--smooth-sensitivity applies to {', '.join(SANITIZABLE)}, "
                         f"not {mechanism.name}")
    if result.accounting == "data-independent":
        raise ValueError("--smooth-sensitivity needs replay or expected accounting (a "
                         "data-independent epsilon is already public)")
    if positions is None:
        positions = (FirstRows(result.queries) if result.query_index is None
                     else result.query_index)
    if charges is None:
        if result.decisions is not None:
            raise ValueError("the smooth-sensitivity report of a run of given decisions "
                             "needs their charges (charges=)")
        charges = run_charges(votes, positions, mechanism=mechanism,
                              accounting=result.accounting, seed=result.seed,
                              q_bound=result.q_bound, student=student)
    order = float(result.order if order is None else order)
    common: dict = dict(teachers=int(round(result.teachers)), sigma=mechanism.sigma,
                        order=order, delta=result.delta, release_noise=release_draw(result.seed),
                        weights=charges)
    rows = AnalysedRows(votes, positions, result.queries)
    if is_sparse(votes):  # a chunk at a time, its rows x stored width within the budget
        common["chunk_size"] = min(DEFAULT_CHUNK, max(1, READ_VALUES // votes.width))
    if not mechanism.selects:
        def run(every):
            return sanitize_gnmax(rows, report_every=every, **common)
    else:
        max_votes = None
        if mechanism.uses_student:  # the selection compares max n - M p (MATH.md s.4)
            student_rows = AnalysedRows(student, positions, result.queries)

            def max_votes(start: int, stop: int) -> np.ndarray:
                return mechanism.selection_counts(rows[start:stop], student_rows[start:stop])

        def run(every):
            return sanitize_confident(rows, threshold=mechanism.threshold,
                                      sigma_threshold=mechanism.sigma_threshold,
                                      max_votes=max_votes, report_every=every, **common)
    # The reported figures never depend on whether a history was asked for (checkpoints
    # split the sums differently); the history's last row is the reported one.
    report = run(None)
    if report_every is not None and report.refusal is None:
        points = run(report_every).checkpoints
        report = replace(report, checkpoints=tuple(points[:-1]) + (report,))
    if report.refusal is not None:
        failed = [name for name, ok in (("C5", report.c5), ("C6", report.c6)) if not ok]
        raise ValueError(f"smooth sensitivity is not valid here: condition "
                         f"{' and '.join(failed)} fails for sigma {mechanism.sigma:g}, "
                         f"K {result.classes}, order {order:g} (choose another --order)")
    return report


class AnalysedRows:
    """The first ``queries`` of the analysed rows ``positions`` of ``votes`` (dense or
    ``SparseVotes``), read a slice at a time: the subset is never gathered whole (sparse
    rows as ``SparseRows``, MATH.md s.14; dense rows as float64)."""

    def __init__(self, votes, positions, queries: int) -> None:
        self.votes = votes
        self.positions = positions
        self.shape = (int(queries), int(votes.vocabulary if is_sparse(votes)
                                        else votes.shape[1]))

    def __getitem__(self, part: slice) -> np.ndarray | SparseRows:
        start, stop, _ = part.indices(self.shape[0])
        if is_sparse(self.votes):
            return self.votes.rows(self.positions[start:stop])
        return rows_of(self.votes, self.positions, start, stop)


def with_sampled_pld_figure(result, mechanism: SampledMechanism, delta: float):
    """Poisson-sampled Gaussian steps composed by dp_accounting's PLD accountant (where
    installed): the smaller of that and the RDP figure, as :func:`with_pld_figure`
    does for unsampled runs. dp_accounting has no PLD for sampling without replacement:
    those runs keep the RDP figure (MATH.md s.16)."""
    sampling = mechanism.sampling
    if unsampled(sampling):
        return with_pld_figure(result, mechanism.inner, delta)
    if sampling.scheme != "poisson" or mechanism.name == "lnmax":
        return result
    steps = [(mechanism.sigma / sampling.answer_sensitivity,
              int(round(result.answered_total)))]
    if mechanism.name == "confident":
        steps.append((mechanism.sigma_threshold, result.queries))
    figure = sampled_gaussian_pld_epsilon(sampling.rate, steps, delta)
    if figure is None or not figure < result.epsilon:
        return result
    budget = result.budget
    if budget is not None:
        budget = replace(budget, remaining=max(0.0, budget.limit - figure))
    return replace(result, epsilon=figure, epsilon_data_independent=figure,
                   data_independent_method="pld", epsilon_rdp=result.epsilon, budget=budget)
