"""Figures a finished run adds (``analyze``): each from the run's totals or its queries.

- **The PLD figure** (MATH.md sections 2, 3 and 13): under ``--accounting
  data-independent``, the smaller of the RDP figure and the privacy-loss-distribution
  accountant's for the Gaussian steps, when the optional dp_accounting is installed
  (``data_independent_method`` says which): :func:`with_pld_figure`.
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

from ..accounting.pld import gaussian_pld_epsilon
from ..accounting.smooth_sensitivity import (
    DEFAULT_CHUNK,
    SmoothSensitivityResult,
    sanitize_confident,
    sanitize_gnmax,
)
from ..accounting.tuning import TuningDistribution, parse_tuning, tuned_epsilon
from ..errors import OptionError
from ..mechanisms import release_draw
from ..sparse_rows import SparseRows, SparseVotes, is_sparse
from .result import AnalysisResult, TuningPart
from .setting import CHUNK_ELEMENTS


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
                      report_every: int | None = None) -> SmoothSensitivityResult:
    """The smooth-sensitivity report for ``result`` (computed from ``votes``).

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
    order = float(result.order if order is None else order)
    common: dict = dict(teachers=int(round(result.teachers)), sigma=mechanism.sigma,
                        order=order, delta=result.delta, release_noise=release_draw(result.seed))
    if is_sparse(votes):  # a chunk at a time, its rows x stored width within the budget
        rows = _SparseSubset(votes, result.query_index)
        common["chunk_size"] = min(DEFAULT_CHUNK, max(1, CHUNK_ELEMENTS // votes.width))
    else:
        rows = _rows(votes, result.query_index)
    if not mechanism.selects:
        def run(every):
            return sanitize_gnmax(rows, weights=result.answered, report_every=every, **common)
    else:
        max_votes = None
        if mechanism.uses_student:  # the selection compares max n - M p (MATH.md s.4)
            max_votes = mechanism.selection_counts(rows, _rows(student, result.query_index))

        def run(every):
            return sanitize_confident(rows, threshold=mechanism.threshold,
                                      sigma_threshold=mechanism.sigma_threshold,
                                      weights=result.answered, max_votes=max_votes,
                                      report_every=every, **common)
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


class _SparseSubset:
    """Rows ``positions`` (all rows if ``None``) of ``SparseVotes``, read as ``SparseRows``
    a slice at a time: the subset is never gathered whole (MATH.md s.14)."""

    def __init__(self, votes: SparseVotes, positions: np.ndarray | None) -> None:
        self.votes = votes
        self.positions = np.arange(len(votes)) if positions is None else positions
        self.shape = (int(self.positions.size), int(votes.vocabulary))

    def __getitem__(self, part: slice) -> SparseRows:
        return self.votes.rows(self.positions[part])


def _rows(array, positions):
    if positions is None or (positions.size and np.array_equal(
            positions, np.arange(positions[0], positions[0] + positions.size))):
        start = 0 if positions is None or positions.size == 0 else int(positions[0])
        stop = array.shape[0] if positions is None else start + positions.size
        return array[start:stop]
    return np.asarray(array)[positions]
