"""A published private-prediction figure, recomputed
(docs/tutorials/language-models.md#reproducing-a-published-private-prediction-figure).

InvisibleInk (Vinod, Pillutla, Thakurta, NeurIPS 2025, arXiv 2507.02974) samples each of
T = 500 tokens from softmax(mean clipped logits / tau) over B = 7 private references
(its experiments' `--batch 8` counts the public prompt too), with no subsampling: the
references are split into disjoint batches. Its accountant (`utils.compute_rho`,
`utils.cdp_eps` of cerai-iitm/InvisibleInk-Experiments) charges every token
rho = (C / (B tau))^2 / 2 of zCDP and converts T rho to (epsilon, delta) with Canonne,
Kamath and Steinke's bound, minimised over a continuous order. Its clip norm C is solved
from the stated epsilon = 10 at delta = 1e-6 (`utils.get_clip`).

In pate_cli's terms (math:exponential) one reference moves each utility by at most
eta = C / (B tau), and the exponential mechanism's data-independent curve is
min(2 eta, alpha eta^2 / 2): the same rho per token. The published epsilon is recovered
by the improved conversion (math:conversion), the same bound at the grid's orders.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import pate_cli
from tests.precision import digits

PUBLISHED_EPSILON = 10.0
DELTA = 1e-6
TOKENS = 500
REFERENCES = 7          # B: private references per batch
TEMPERATURE = 1.2       # tau
VOCABULARY = 32_000     # TinyLlama-1.1B's vocabulary
ETA = 0.0784673         # C / (B tau) as the README passes it (C = 0.659125)
FINE_ORDERS = np.round(np.arange(1.5, 10.0, 0.01), 2)

_digits = digits(40)  # mpmath's precision for this module's tests


def mp_order(rho, log_delta):
    """The order minimising CKS20's bound: d/d alpha of it is
    rho + (log delta + log alpha) / (alpha - 1)^2, zero at the optimum."""
    top = 2 + 2 * mpmath.sqrt(-log_delta / rho)
    return mpmath.findroot(lambda a: rho * (a - 1) ** 2 + log_delta + mpmath.log(a),
                           (mpmath.mpf(1) + mpmath.mpf(10) ** -12, top), solver="anderson")


def mp_epsilon(rho, delta):
    """(epsilon, delta) of rho-zCDP, Canonne-Kamath-Steinke 2020 at the exact optimal order:
    alpha rho + log(1 - 1/alpha) - (log delta + log alpha) / (alpha - 1)."""
    rho, log_delta = mpmath.mpf(rho), mpmath.log(mpmath.mpf(delta))
    a = mp_order(rho, log_delta)
    return a * rho + mpmath.log(1 - 1 / a) - (log_delta + mpmath.log(a)) / (a - 1)


def mp_rho(epsilon, delta):
    """The total zCDP that the published epsilon allows (what `get_clip` solves)."""
    return mpmath.findroot(lambda r: mp_epsilon(r, delta) - epsilon,
                           (mpmath.mpf(10) ** -6, mpmath.mpf(epsilon)), solver="anderson")


def votes_file(path, tokens=TOKENS):
    """Any votes with T rows: data-independent accounting reads only their number."""
    rows = np.arange(tokens)
    matrix = sp.csr_matrix((np.full(tokens, float(REFERENCES)), (rows, np.zeros(tokens, int))),
                           shape=(tokens, VOCABULARY))
    sp.save_npz(path, matrix)
    return path


def run(path, eta, **options):
    return pate_cli.analyze(str(path), "exponential", eta=eta, accounting="data-independent",
                            delta=DELTA, per_query=False, **options)


def test_the_readme_eta_is_the_published_settings_clip_over_b_tau():
    rho_token = mp_rho(PUBLISHED_EPSILON, DELTA) / TOKENS
    eta = mpmath.sqrt(2 * rho_token)
    clip = eta * REFERENCES * TEMPERATURE
    assert float(clip) == pytest.approx(0.659125, abs=5e-7)
    assert float(eta) == pytest.approx(ETA, abs=5e-8)


def test_published_epsilon_recomputed(tmp_path):
    path = votes_file(tmp_path / "invink_votes.npz")
    # The authors' conversion is continuous in the order: on a 0.01 grid within 1e-5.
    fine = run(path, ETA, conversion="improved", orders=FINE_ORDERS)
    assert fine.epsilon == pytest.approx(PUBLISHED_EPSILON, rel=1e-5)
    assert fine.order == pytest.approx(3.85)
    # The default grid (0.5 apart at these orders) costs at most 0.13%, never less.
    default = run(path, ETA, conversion="improved")
    assert PUBLISHED_EPSILON < default.epsilon < PUBLISHED_EPSILON * 1.0013
    assert default.epsilon == pytest.approx(10.012507162453014, rel=1e-9)
    # The classic conversion (Mironov 2017) is what PATE papers report; looser here.
    classic = run(path, ETA)
    assert classic.epsilon == pytest.approx(10.7623, abs=1e-4)
    # A replacement changes one reference's clipped difference by up to 2C: twice the eta.
    replace = run(path, 2 * ETA, conversion="improved")
    assert replace.epsilon == pytest.approx(23.4815, abs=1e-4)


@settings(max_examples=25, deadline=None)
@given(epsilon=st.floats(1.0, 20.0), tokens=st.integers(50, 2000))
def test_pate_cli_meets_the_continuous_bound_from_above(tmp_path_factory, epsilon, tokens):
    """For any stated (epsilon, T) at delta 1e-6, the eta solved from the authors'
    accountant gives back epsilon: never below it (a grid minimum is at least the
    continuous one), and within 1e-3 relative on the 0.01 grid where the optimum lies."""
    eta = float(mpmath.sqrt(2 * mp_rho(epsilon, DELTA) / tokens))
    optimum = float(mp_order(mp_rho(epsilon, DELTA), mpmath.log(DELTA)))
    orders = np.round(np.arange(1.01, max(optimum * 2, 3.0), 0.01), 2)
    path = votes_file(tmp_path_factory.mktemp("v") / "votes.npz", tokens)
    result = run(path, eta, conversion="improved", orders=orders)
    assert result.epsilon >= epsilon * (1 - 1e-9)
    assert result.epsilon == pytest.approx(epsilon, rel=1e-3)
