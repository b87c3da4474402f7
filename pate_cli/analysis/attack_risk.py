"""The attack risk a run's guarantee implies (math:risk): bounds on a membership attacker's
true-positive rate at each false-positive rate, and on its advantage.

``result.risk_data_independent`` is the publishable bound:

* Gaussian aggregators (GNMax, Confident, Interactive) without ``--add-rdp`` or rounds
  (multi-label too, :func:`run_steps`): the steps' exact mu-GDP curve (source ``pld`` with
  ``mu``; answers of sensitivity sqrt(2) or the sampled run's, std sigma; selections
  sensitivity 1, std sigma1; every query answered where the run reports
  ``epsilon_data_independent_worst``, else its answers); a sampled run's sampled composition
  (Poisson: its PLD, else the data-independent RDP curve) capped by that curve, without ``mu``;
* SVT-PATE: its guarantee at every delta (:func:`svt_risk`);
* LNMax and exponential: at each rate the smaller of their answers' exact pure-DP
  composition's profile (``added_figures.pld_figure``) and the data-independent RDP curve's
  conversions (source ``pld`` where the composition's advantage is smaller, else ``rdp``);
* any other run: the data-independent RDP curve's conversions (source ``rdp``).

``result.risk`` is the headline accounting's bound: the same if data-independent; else its
RDP curve's (source ``rdp``, one direction only: ``accounting.risk``) capped by the
data-independent bound (unsanitised, like the data-dependent epsilon), or that bound itself
where the curve is nowhere tighter. Individualized runs (one curve per group) have neither.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..accounting.risk import (
    RDP_DELTAS,
    AttackRisk,
    gaussian_mu,
    gaussian_risk,
    profile_risk,
    rdp_risk,
)
from ..accounting.svt import svt_epsilon
from ..mechanisms.sampled import SampledMechanism, unsampled
from .result import AnalysisResult

# The aggregators whose steps are Gaussian (analysis.added_figures' GAUSSIAN).
GAUSSIAN = ("gnmax", "confident", "interactive")


def gaussian_steps(mechanism, *, answered: int, queries: int) -> list | None:
    """A Gaussian aggregator's run's ``(sensitivity, std, count)`` steps, unsampled (a sampled
    run's sensitivities: sampling never costs more, math:sampling); None for others."""
    if mechanism.name not in GAUSSIAN:
        return None
    sensitivity = (mechanism.sampling.answer_sensitivity if is_sampled(mechanism)
                   else math.sqrt(2.0))
    steps = [(sensitivity, mechanism.sigma, answered)]
    if mechanism.selects:
        steps.append((1.0, mechanism.sigma_threshold, queries))
    return steps


def own_bound(result: AnalysisResult) -> bool:
    """Whether the run's own curve is its publishable bound: data-independent accounting of
    every answer it can give (no ``epsilon_data_independent_worst``)."""
    return (result.accounting == "data-independent"
            and result.epsilon_data_independent_worst is None)


def bound_curve(result: AnalysisResult):
    """The RDP curve the publishable bound rests on: the run's own (:func:`own_bound`) or
    ``rdp_data_independent`` (every query answered where the run reports the any-run bound);
    None where there is none."""
    return result.rdp_total if own_bound(result) else result.rdp_data_independent


def is_sampled(mechanism) -> bool:
    """Whether ``mechanism`` declares a sampling of its voters (other than all of them)."""
    return isinstance(mechanism, SampledMechanism) and not unsampled(mechanism.sampling)


def run_steps(result: AnalysisResult) -> list | None:
    """A Gaussian aggregator's run's ``(sensitivity, std, count)`` steps without ``--add-rdp``,
    else None; in rounds, every round's (:func:`rounds_steps`). Multi-label: ``binary`` over
    the (query, label) rows; ``tau``, ``powerset`` one GNMax step a query
    (docs/tutorials/multilabel.md)."""
    if result.initial_rdp is not None:
        return None
    if result.rounds is not None:
        return rounds_steps(result, any_run=result.epsilon_data_independent_worst is not None)
    mechanism, multi = result.mechanism, result.multilabel
    if multi is not None and multi.variant != "binary":
        return ([(math.sqrt(multi.sensitivity_squared), mechanism.sigma, result.queries)]
                if mechanism.name == "gnmax" else None)
    rows = result.queries * (1 if multi is None else multi.labels)
    if result.epsilon_data_independent_worst is None:
        return gaussian_steps(mechanism, answered=int(round(result.answered_total)),
                              queries=rows)
    rows = result.requested or rows  # any run's: every requested query (past a halt)
    return gaussian_steps(mechanism, answered=rows, queries=rows)


def rounds_steps(result: AnalysisResult, *, any_run: bool) -> list | None:
    """The unsampled Gaussian steps of a run in rounds (None where a round is not Gaussian):
    each round's answers (every query under ``expected``, as a single run's), or with
    ``any_run`` every query of a selecting round answered (the rounds' any-run bound)."""
    steps: list = []
    for part, mechanism in zip(result.rounds or (), result.mechanism.mechanisms, strict=True):
        every = result.accounting == "expected" or (any_run and mechanism.selects)
        one = None if is_sampled(mechanism) else gaussian_steps(
            mechanism, answered=part.queries if every else int(round(part.answered)),
            queries=part.queries)
        if one is None:
            return None
        steps += one
    return steps


def data_independent_risk(result: AnalysisResult) -> AttackRisk | None:
    """``result``'s publishable attack risk (see the module), never looser than the printed
    data-independent pair (:func:`_printed_pair`); None without one RDP curve
    (individualized groups)."""
    if result.groups is not None or result.rdp_total is None:
        return None
    if result.svt is not None:
        return svt_risk(result)
    curve = bound_curve(result)
    if curve is None:
        curve = result.rdp_total
    mechanism = result.mechanism
    plain = run_steps(result)
    if plain is None:
        risk = rdp_risk(curve, orders=result.orders, conversion=result.conversion)
        composed = result.risk_data_independent  # a pure-DP run's composition's
        if composed is not None:  # named by the smaller advantage
            risk = (composed.capped(risk) if composed.advantage < risk.advantage
                    else risk.capped(composed))
    elif not is_sampled(mechanism):
        risk = gaussian_risk(gaussian_mu(plain))
    else:
        sampled = result.risk_data_independent  # the PLD's, where the run composed one
        if sampled is None:
            sampled = rdp_risk(curve, orders=result.orders, conversion=result.conversion)
        risk = sampled.capped(gaussian_risk(gaussian_mu(plain)))
    return risk.capped(_printed_pair(result, independent=True))


def _printed_pair(result: AnalysisResult, *, independent: bool) -> AttackRisk:
    """The risk of the printed (epsilon, delta) pair: ``epsilon_data_independent`` (``_worst``
    under ``expected``: the bound for any release, not an average) or its PLD figure where
    smaller; ``independent`` False: the headline ``epsilon`` (one-way if data-dependent). A
    curve read on a grid of deltas may miss the run's delta: this cap keeps the risk within
    the printed guarantee."""
    epsilon = result.epsilon
    if independent:
        epsilon, pld = result.epsilon_data_independent, result.epsilon_data_independent_pld
        if result.epsilon_data_independent_worst is not None:  # the bound for any run
            epsilon, pld = (result.epsilon_data_independent_worst,
                            result.epsilon_data_independent_worst_pld)
        if pld is not None:  # printed first where smaller
            epsilon = min(epsilon, pld)
    return profile_risk([epsilon], [result.delta], "rdp", one_way=not independent)


def svt_risk(result: AnalysisResult) -> AttackRisk:
    """SVT-PATE's risk: its printed pair and, without ``--add-rdp``, ``svt_epsilon`` at each
    ``delta'``, holding at ``delta' + delta2`` (the threshold's failure probability, math:svt).
    Source ``pure`` where ``c eps0`` gave every epsilon, else ``rdp``."""
    svt = result.svt
    assert svt is not None
    epsilons, deltas, pure = [result.epsilon_data_independent], [result.delta], True
    if result.initial_rdp is None:
        for delta in RDP_DELTAS[RDP_DELTAS + svt.delta2 < 1.0]:
            epsilon, _, bound = svt_epsilon(scale=svt.scale, rounds=svt.cutoff,
                                            delta=float(delta), conversion=result.conversion)
            epsilons.append(float(epsilon))
            deltas.append(float(delta) + svt.delta2)
            pure = pure and bool(bound)
    pure = pure and not math.isfinite(result.order)
    return profile_risk(epsilons, deltas, "pure" if pure else "rdp")


def with_risk(result: AnalysisResult) -> AnalysisResult:
    """``result`` with its attack risks (``risk``, ``risk_data_independent``)."""
    independent = data_independent_risk(result)
    if independent is None:
        return result
    risk = independent
    if result.accounting != "data-independent" and result.svt is None:
        # a data-dependent curve bounds one direction only (accounting.risk)
        dependent = replace(rdp_risk(result.rdp_total, orders=result.orders,
                                     conversion=result.conversion, one_way=True).capped(
            _printed_pair(result, independent=False)), data_dependent=True)
        risk = dependent.capped(independent)
        if not _tighter(risk, independent):  # the votes' curve adds nothing: publishable
            risk = independent
    return replace(result, risk=risk, risk_data_independent=independent)


def _tighter(risk: AttackRisk, than: AttackRisk) -> bool:
    """Whether ``risk`` is below ``than`` somewhere: its advantage, or its TPR at a rate of the
    trade-off curve (``AttackRisk.tpr``)."""
    return bool(risk.advantage < than.advantage or np.any(risk.tpr < than.tpr))
