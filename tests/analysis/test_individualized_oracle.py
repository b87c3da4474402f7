"""Individualized GNMax end to end against a per-query implementation written from the
formulas alone (math:individualized, math:gnmax, math:conversion): plain Python floats, one
query and one order at a time, none of the package's kernels. Each group's RDP is the
data-dependent GNMax bound at noise ``sigma / D_g`` with the real mechanism's ``q``, capped by
``alpha D_g^2 / sigma^2``; the run halts before the first query after which some group's
classic epsilon would exceed its budget. The package may sit above by its rounding margin,
never below."""

from __future__ import annotations

import csv
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import log_ndtr

from pate_cli import analyze
from pate_cli.orders import default_orders
from tests import SAMPLES

DELTA = 1e-5
QUERIES = 1200
MARGIN = 1e-11  # the package raises converted figures by about 1e-12 relative


def _log1mexp(x: float) -> float:
    if x == 0:
        return -math.inf
    return math.log1p(-math.exp(x)) if x < -1 else math.log(-math.expm1(x))


def _log_q(counts: list[float], sigma: float) -> float:
    top = max(range(len(counts)), key=lambda j: (counts[j], -j))
    terms = [float(log_ndtr(-(counts[top] - c) / (math.sqrt(2.0) * sigma)))
             for j, c in enumerate(counts) if j != top]
    peak = max(terms)
    log_q = peak + math.log(sum(math.exp(t - peak) for t in terms))
    return min(log_q, math.log(1.0 - 1.0 / len(counts)))


def _rdp(log_q: float, sigma: float, alpha: float) -> float:
    """Theorem 6 with Proposition 10's orders, where its conditions hold."""
    independent = alpha / sigma**2
    if log_q == -math.inf:
        return 0.0
    mu2 = sigma * math.sqrt(-log_q)
    mu1 = mu2 + 1.0
    e1, e2 = mu1 / sigma**2, mu2 / sigma**2
    if not (mu1 > alpha and mu2 > 1.0 and -log_q > e2 and log_q <= (mu2 - 1.0) * e2 - mu2 * (
            math.log(1.0 + 1.0 / (mu1 - 1.0)) + math.log(1.0 + 1.0 / (mu2 - 1.0)))):
        return independent
    log_rest = _log1mexp(log_q)
    log_a = (alpha - 1.0) * (log_rest - _log1mexp((log_q + e2) * (1.0 - 1.0 / mu2)))
    log_b = (alpha - 1.0) * (e1 - log_q / (mu1 - 1.0))
    x, y = log_rest + log_a, log_q + log_b
    top = max(x, y)
    return min(independent, (top + math.log1p(math.exp(min(x, y) - top))) / (alpha - 1.0))


def _groups():
    with open(SAMPLES / "mnist_250_groups.csv", newline="") as handle:
        budgets = {row["group"]: float(row["budget"]) for row in csv.DictReader(handle)}
    with open(SAMPLES / "mnist_250_teacher_groups.csv", newline="") as handle:
        rows = sorted(csv.DictReader(handle), key=lambda row: int(row["teacher"]))
    return budgets, [row["group"] for row in rows]


def _sensitivities(variant: str, budgets: dict, teacher_groups: list) -> dict:
    """Upsampling: the budgets' smallest integer ratios (denominators up to 100); weighting:
    ``eps_g`` over the teachers' mean budget."""
    if variant == "weighting":
        mean = sum(budgets[g] for g in teacher_groups) / len(teacher_groups)
        return {g: b / mean for g, b in budgets.items()}
    low = min(budgets.values())
    ratios = {g: Fraction(b / low).limit_denominator(100) for g, b in budgets.items()}
    common = math.lcm(*(r.denominator for r in ratios.values()))
    return {g: float(r * common) for g, r in ratios.items()}


def by_hand(variant: str, sigma: float) -> tuple[int | None, dict]:
    budgets, teacher_groups = _groups()
    size = _sensitivities(variant, budgets, teacher_groups)
    weight = [size[g] if variant == "weighting" else 1.0 for g in teacher_groups]
    predictions = np.load(SAMPLES / "mnist_250_predictions.npy")
    orders = [float(a) for a in default_orders()]
    spent = {g: [0.0] * len(orders) for g in budgets}
    epsilon: dict = {}
    for query in range(QUERIES):
        counts = [0.0] * 10
        for teacher, label in enumerate(predictions[query]):
            if label >= 0:
                counts[int(label)] += weight[teacher]
        log_q = _log_q(counts, sigma)
        after = {g: [s + _rdp(log_q, sigma / size[g], a)
                     for s, a in zip(spent[g], orders, strict=True)] for g in budgets}
        now = {g: min(r + math.log(1.0 / DELTA) / (a - 1.0)
                      for r, a in zip(after[g], orders, strict=True)) for g in budgets}
        if any(now[g] > budgets[g] for g in budgets):
            return query, epsilon
        spent, epsilon = after, now
    return None, epsilon


@pytest.mark.parametrize("variant, sigma", [("weighting", 40.0), ("upsampling", 20.0),
                                            ("upsampling", 60.0)])
def test_group_figures_agree_with_a_per_query_implementation(variant, sigma):
    halt, expected = by_hand(variant, sigma)
    assert halt is not None  # the budgets bind within the queries analysed
    result = analyze(predictions=SAMPLES / "mnist_250_predictions.npy", mechanism="gnmax",
                     sigma=sigma, accounting="expected", queries=QUERIES, individualized=variant,
                     groups=SAMPLES / "mnist_250_groups.csv",
                     teacher_groups=SAMPLES / "mnist_250_teacher_groups.csv")
    assert result.groups.stopped_at == halt
    for group in result.groups.groups:
        exact = expected[group["group"]]
        assert exact <= group["epsilon"] <= exact * (1.0 + MARGIN), group
