"""The exponential mechanisms' seeded Gumbel-max replay (math:mechanisms, math:threshold and
math:exponential).

Frequencies against the softmax by a chi-square test: under a correct replay the test's
p-value is uniform over seeds, so ``p > 1e-4`` fails for a correct replay with
probability 1e-4 over seeds (the false-alarm rate); the seed is fixed, so the outcome is
deterministic. Each test also checks that the same draws reject a wrong distribution
(the test can fail).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from pate_cli.mechanisms import (
    NOISE_BLOCK,
    ConfidentExponential,
    Exponential,
    NoiseSource,
    build_mechanism,
)
from tests.synthetic import assert_chunk_size_changes_nothing

FALSE_ALARM = 1e-4
REPLAYS = 20_000


def softmax(row, eta):
    weights = np.exp(eta * (row - row.max()))
    return weights / weights.sum()


def chi_square_p(labels, probabilities):
    observed = np.bincount(labels, minlength=probabilities.size)
    return stats.chisquare(observed, probabilities * labels.size).pvalue


@pytest.mark.parametrize("seed", [0, 1])
def test_replay_frequencies_are_the_softmax(seed):
    row = np.array([10.0, 7.0, 5.0, 0.0, 3.0, 9.0])
    eta = 0.3
    votes = np.repeat(row[None, :], REPLAYS, axis=0)  # one row, replayed 20,000 times
    labels = Exponential(eta=eta).replay(votes, noise=NoiseSource(seed)).label
    assert chi_square_p(labels, softmax(row, eta)) > FALSE_ALARM
    assert chi_square_p(labels, softmax(row, 2 * eta)) < FALSE_ALARM  # a wrong eta shows
    assert chi_square_p(labels, softmax(row, eta / 2)) < FALSE_ALARM


def test_confident_replay_answers_with_the_threshold_probability():
    row = np.array([12.0, 6.0, 2.0, 0.0])
    threshold, sigma1, eta = 13.0, 4.0, 0.25
    votes = np.repeat(row[None, :], REPLAYS, axis=0)
    decisions = ConfidentExponential(threshold=threshold, sigma_threshold=sigma1,
                                     eta=eta).replay(votes, noise=NoiseSource(3))
    answered = decisions.answered
    pr = stats.norm.cdf((row.max() - threshold) / sigma1)
    assert stats.binomtest(int(answered.sum()), REPLAYS, pr).pvalue > FALSE_ALARM
    assert np.all(decisions.label[~answered] == -1)
    labels = decisions.label[answered]
    assert chi_square_p(labels, softmax(row, eta)) > FALSE_ALARM
    assert chi_square_p(labels, softmax(row, 2 * eta)) < FALSE_ALARM


def test_same_seed_same_decisions_other_seed_other_labels():
    votes = np.random.default_rng(4).integers(0, 30, size=(3000, 5)).astype(np.float64)
    mechanism = ConfidentExponential(threshold=20.0, sigma_threshold=5.0, eta=0.2)
    first = mechanism.replay(votes, noise=NoiseSource(7))
    again = mechanism.replay(votes, noise=NoiseSource(7))
    other = mechanism.replay(votes, noise=NoiseSource(8))
    np.testing.assert_array_equal(first.label, again.label)
    np.testing.assert_array_equal(first.answered, again.answered)
    assert not np.array_equal(first.label, other.label)


def test_pieces_of_a_replay_are_the_replay():
    """Queries keyed by position: replaying any split (across a noise block) gives the
    same decisions as one replay."""
    votes = np.random.default_rng(5).integers(0, 30, size=(NOISE_BLOCK + 500, 4)).astype(float)
    mechanism = Exponential(eta=0.15)
    whole = mechanism.replay(votes, noise=NoiseSource(2)).label
    noise = NoiseSource(2)
    cuts = [0, 1, 700, NOISE_BLOCK - 3, NOISE_BLOCK + 2, votes.shape[0]]
    pieces = [mechanism.replay(votes[a:b], noise=noise, start=a).label
              for a, b in zip(cuts, cuts[1:], strict=False)]
    np.testing.assert_array_equal(np.concatenate(pieces), whole)


def test_gumbel_noise_is_its_own_stream():
    """The Gumbel draws are not a transform of the Gaussian answer stream's."""
    noise = NoiseSource(0)
    from pate_cli.mechanisms import STREAM_ANSWER, STREAM_GUMBEL

    gumbel = noise.draw(stream=STREAM_GUMBEL, kind="gumbel", start=0, count=5000, width=3)
    normal = noise.draw(stream=STREAM_ANSWER, kind="normal", start=0, count=5000, width=3)
    assert stats.kstest(gumbel.ravel(), stats.gumbel_r.cdf).pvalue > FALSE_ALARM
    assert abs(stats.spearmanr(gumbel.ravel(), normal.ravel()).statistic) < 0.05


@pytest.mark.parametrize("mechanism", [Exponential(eta=0.2),
                                       ConfidentExponential(threshold=18.0, sigma_threshold=6.0,
                                                            eta=0.2)],
                         ids=lambda m: m.name)
@pytest.mark.parametrize("setting", [{"accounting": "replay"}, {"accounting": "expected"},
                                     {"accounting": "replay", "budget": 3.0},
                                     {"accounting": "data-independent", "budget": 4.0}])
def test_chunk_size_never_changes_anything(mechanism, setting):
    draws = np.random.default_rng(6)
    votes = np.stack([np.bincount(draws.integers(0, 4, 30), minlength=4)
                      for _ in range(NOISE_BLOCK + 300)]).astype(np.float64)
    assert_chunk_size_changes_nothing(votes, mechanism, **setting)


def test_parameters_are_checked_and_defaulted():
    with pytest.raises(ValueError, match="eta must lie in"):
        Exponential(eta=301.0)
    with pytest.raises(ValueError, match="eta must be positive"):
        Exponential(eta=-1.0)
    with pytest.raises(ValueError, match="sigma threshold"):
        ConfidentExponential(threshold=1.0, sigma_threshold=0.0, eta=1.0)
    default = build_mechanism("exponential", teachers=250)
    # sqrt(2) / (0.16 M): eta^2 / 2 = 1 / sigma^2 at the default sigma = 0.16 M = 40
    assert default.eta == pytest.approx(math.sqrt(2) / 40, rel=1e-15)
    assert default.eta**2 / 2 == pytest.approx(1 / 40**2, rel=1e-14)
    confident = build_mechanism("confident-exponential", teachers=250, eta=0.1)
    assert confident.params == {"threshold": 200.0, "sigma_threshold": 150.0, "eta": 0.1,
                                "screening": "exact"}
