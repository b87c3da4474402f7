"""Aggregators to audit with pate-audit (docs/tutorials/audit.md).

Each is a function ``f(votes, rng) -> labels``: ``votes`` an (n, K) integer array of vote
histograms, ``rng`` a ``numpy.random.Generator``, the result an (n,) integer array of labels
(-1 for no answer). All three claim GNMax with sigma 40 (``pate-audit -m gnmax --sigma 40``):

- ``gnmax`` keeps the claim: Gaussian noise of std 40 on every count, then the argmax;
- ``tenth_sigma`` is broken: it adds a tenth of the claimed noise (std 4);
- ``laplace_instead`` is broken: it adds Laplace noise of scale 5 where Gaussian noise of
  std 40 is claimed (the same kind of mistake as passing a scale meant for another
  mechanism).

    pate-audit sample_votes/mnist_250_votes.npy -m gnmax --sigma 40 \\
        --aggregator examples/broken_aggregators.py:tenth_sigma
"""

import numpy as np

SIGMA = 40.0


def gnmax(votes, rng):
    """GNMax as claimed: argmax of the counts plus N(0, 40^2) noise each."""
    return np.argmax(votes + rng.normal(0.0, SIGMA, size=votes.shape), axis=1)


def tenth_sigma(votes, rng):
    """Broken: a tenth of the claimed standard deviation."""
    return np.argmax(votes + rng.normal(0.0, SIGMA / 10, size=votes.shape), axis=1)


def laplace_instead(votes, rng):
    """Broken: Laplace noise of scale sigma / 8 where Gaussian noise of std sigma is
    claimed."""
    return np.argmax(votes + rng.laplace(0.0, SIGMA / 8, size=votes.shape), axis=1)
