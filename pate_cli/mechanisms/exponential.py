"""The exponential-mechanism (Gumbel-max) aggregators and their seeded replay.

math:mechanisms, math:threshold, math:exponential: ``argmax_j (eta n_j + G_j)``, ``G_j``
standard Gumbel, alone or behind Confident-GNMax's noisy threshold. Gumbel draws have their
own stream (``STREAM_GUMBEL``), keyed by query position."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..decisions import Decisions
from .domains import ETA, Facts, noise_scale
from .noise import STREAM_GUMBEL, NoiseSource
from .noisy_argmax import ArgmaxNoise, noisy_labels
from .threshold import check_threshold_parameters, passes_threshold

# Default eta times M: eta = sqrt(2) / (0.16 M), where alpha eta^2 / 2 (math:exponential)
# equals the default GNMax answer's alpha / sigma^2, sigma = 0.16 M (math:independent): the
# same worst-case cost per answer (eta = 0.0354 at M = 250).
DEFAULT_ETA_TIMES_M = math.sqrt(2.0) / 0.16


def gumbel_labels(votes: np.ndarray, *, eta: float, noise: NoiseSource, start: int,
                  answered: np.ndarray, draw: bool = True) -> np.ndarray:
    """``argmax_j (eta n_j + G_j)`` where ``answered``, -1 elsewhere (math:exponential);
    ``LABEL_NOT_DRAWN`` for every answered query when ``draw`` is False."""
    return noisy_labels(votes, ArgmaxNoise(STREAM_GUMBEL, "gumbel", weight=eta), noise=noise,
                        start=start, answered=answered, draw=draw)


@dataclass(frozen=True)
class Exponential(Facts):
    """The exponential mechanism (Gumbel-max): ``argmax_j (eta n_j + G_j)``, ``G_j``
    standard Gumbel, i.e. ``Pr[j] = softmax(eta n)_j``. Every query is answered; each
    answer is ``2 eta``-DP (math:exponential)."""

    eta: float
    name: str = field(default="exponential", init=False)
    answer_noise: ClassVar[str | None] = "gumbel"

    def __post_init__(self):
        object.__setattr__(self, "eta", noise_scale(self.eta, "eta", ETA))

    @property
    def pure_epsilon(self) -> float:
        """Each answer's pure-DP epsilon, ``2 eta`` (exact in floating point)."""
        return 2.0 * self.eta

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        answered = np.ones(votes.shape[0], dtype=bool)
        return Decisions(answered, gumbel_labels(votes, eta=self.eta, noise=noise,
                                                 start=start, answered=answered, draw=labels))


@dataclass(frozen=True)
class ConfidentExponential(Facts):
    """Confident-GNMax's noisy threshold (math:threshold), then the exponential answer: if
    ``max_j n_j + N(0, sigma1^2) >= T`` answer ``argmax_j (eta n_j + G_j)``, else abstain
    (math:exponential, math:costs). ``teachers``, ``screening`` and ``integer_votes`` as
    for ``ConfidentGNMax`` (math:screening)."""

    threshold: float
    sigma_threshold: float
    eta: float
    name: str = field(default="confident-exponential", init=False)
    teachers: float | None = None
    screening: str = "exact"
    integer_votes: bool = False
    selects: ClassVar[bool] = True
    answer_noise: ClassVar[str | None] = "gumbel"

    def __post_init__(self):
        check_threshold_parameters(self)
        object.__setattr__(self, "eta", noise_scale(self.eta, "eta", ETA))

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        answered = passes_threshold(self, votes, noise=noise, start=start)
        return Decisions(answered, gumbel_labels(votes, eta=self.eta, noise=noise,
                                                 start=start, answered=answered, draw=labels))
