"""Straightforward per-row implementations of math:index, written independently of the
package (plain ``math`` on Python floats, one query at a time) to check the vectorised
kernels against. Slow on purpose: never import this from the package."""

from __future__ import annotations

import math

from scipy.special import log_ndtr


def log1mexp(x: float) -> float:
    if x == 0:
        return -math.inf
    if x < -1:
        return math.log1p(-math.exp(x))
    return math.log(-math.expm1(x))


def log_add(x: float, y: float) -> float:
    """log(e^x + e^y) as numpy.logaddexp computes it (max plus log1p of the rest)."""
    top, low = max(x, y), min(x, y)
    if low == -math.inf:
        return top
    return top + math.log1p(math.exp(low - top))


def logsumexp(values: list[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


def log_q_gnmax(counts, sigma):
    counts = [float(c) for c in counts]
    top = max(range(len(counts)), key=lambda j: (counts[j], -j))
    terms = [float(log_ndtr(-(counts[top] - c) / (math.sqrt(2) * sigma)))
             for j, c in enumerate(counts) if j != top]
    return min(logsumexp(terms), math.log(1 - 1 / len(counts)))


def rdp_gnmax(log_q, sigma, order):
    if log_q == -math.inf:
        return 0.0
    var = sigma ** 2
    independent = order / var
    mu2 = sigma * math.sqrt(-log_q)
    mu1 = mu2 + 1
    e1, e2 = mu1 / var, mu2 / var
    if not (mu1 > order and mu2 > 1 and -log_q > e2):
        return independent
    limit = (mu2 - 1) * e2 - mu2 * (math.log(1 + 1 / (mu1 - 1)) + math.log(1 + 1 / (mu2 - 1)))
    if log_q > limit:
        return independent
    q = math.exp(log_q)
    log_a = (order - 1) * (log1mexp(log_q) - log1mexp((log_q + e2) * (1 - 1 / mu2)))
    log_b = (order - 1) * (e1 - log_q / (mu1 - 1))
    first = math.log1p(-q) + log_a
    second = log_q + log_b
    dep = log_add(first, second) / (order - 1)
    return min(independent, dep)


def log_pr_answered(counts, threshold, sigma1):
    top = max(counts)  # rounded toward the threshold on a lattice of 2^k <= sigma1 / 64
    step = min(1.0, max(2.0**-10, 2.0 ** math.floor(math.log2(sigma1 / 64))))
    top = (min(math.ceil(top / step) * step, threshold) if top < threshold
           else max(math.floor(top / step) * step, threshold))
    return float(log_ndtr((top - threshold) / sigma1))


def rdp_threshold(log_pr, sigma1, order):
    log_q = min(log_pr, log1mexp(log_pr))
    return rdp_gnmax(log_q, math.sqrt(2) * sigma1, order)


def log_q_lnmax(counts, lam):
    counts = [float(c) for c in counts]
    top = max(range(len(counts)), key=lambda j: (counts[j], -j))
    terms = []
    for j, c in enumerate(counts):
        if j != top:
            g = (c - counts[top]) / lam
            terms.append(math.log(2 - g) + math.log(0.25) + g)
    return min(logsumexp(terms), math.log(1 - 1 / len(counts)))


def rdp_lnmax(log_q, lam, order):
    eps0 = 2 / lam
    q = math.exp(log_q)
    if q <= 1 / (math.exp(eps0) + 1):
        one = math.log1p(-q) + (math.log1p(-q) - log1mexp(eps0 + log_q)) * (order - 1)
        two = log_q + eps0 * (order - 1)
        log_t = log_add(one, two)
    else:
        log_t = math.inf
    return min(0.5 * eps0 * eps0 * order, log_t / (order - 1), eps0)


def epsilon_classic(rdp_curve, orders, delta):
    best = min(range(len(orders)), key=lambda i: (rdp_curve[i] - math.log(delta)
                                                  / (orders[i] - 1), i))
    return rdp_curve[best] - math.log(delta) / (orders[best] - 1), orders[best]


def epsilon_improved(rdp_curve, orders, delta):
    values = [r + math.log((a - 1) / a) - (math.log(delta) + math.log(a)) / (a - 1)
              for r, a in zip(rdp_curve, orders, strict=True)]
    return max(0.0, min(values))
