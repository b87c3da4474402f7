"""The aggregators as frozen value objects, and their seeded replay.

MATH.md section 1. A replay turns votes and a seed into decisions (which queries were
answered, with which label); the noise comes from ``NoiseSource`` (``noise.py``). Every
aggregator follows ``protocol.Mechanism``: one ``replay(votes, *, noise, start=0,
student=None)`` signature and class-level facts the analysis reads instead of asking
which class it has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .noise import (
    STREAM_ANSWER,
    STREAM_SELECTION,
    STREAM_SVT_QUERY,
    STREAM_SVT_THRESHOLD,
    NoiseSource,
)
from .protocol import (
    OUTCOME_ABSTAIN,
    OUTCOME_STUDENT,
    OUTCOME_TEACHER,
    SVT_HALTED,
    SVT_STABLE,
    SVT_UNSTABLE,
    Decisions,
)


def _positive(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive, got {value:g}")
    return value


# Domains of the noise parameters, checked when a mechanism is built (a wider value is a
# user mistake, refused in one line, rather than an overflow deep in the accounting):
#
# * Gaussian std (sigma, sigma1) in [1e-9, 1e12]: the largest RDP term, alpha / sigma^2
#   with alpha <= 1e6 (``orders.MAX_ORDER``), stays below 1e24, so a sum over 10^9
#   queries is still finite; sigma^2 neither overflows nor underflows.
# * Laplace scale lambda in [1e-2, 1e12]: LNMax's bound takes exp(eps0) with eps0 = 2 /
#   lambda, which overflows for lambda < 2 / 709.78 = 0.0028; at lambda = 0.01 each answer
#   already costs eps0 = 200, past any meaningful privacy.
# * SVT scale in [1e-6, 1e12]: its costs are polynomial in 2 / lambda (no exp), and the
#   solver for --target-epsilon searches [1e-6, 1e9].
# * the SVT threshold w above 1: at w <= 1 the failure probability delta2 (MATH.md s.8) is
#   at least 1/2, so no delta < 1 is left, and exp(-(w - 1) / (4 lambda)) could overflow.
#   The selection threshold T only needs to be finite (it enters through log_ndtr).
#
# The upper bound 1e12 keeps a single vote visible next to the noise: float64 resolves
# 1e12 to about 1e-4, so adding one vote still moves the noisy count; from about 1e15 on
# the votes would vanish in rounding and the output would be noise alone.
GAUSSIAN_SCALE = (1e-9, 1e12)
LAPLACE_SCALE = (1e-2, 1e12)
SVT_SCALE = (1e-6, 1e12)


def _scale(value, name: str, domain: tuple[float, float]) -> float:
    """A noise scale: positive (``_positive``) and within ``domain`` (see above)."""
    value = _positive(value, name)
    low, high = domain
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {value:g}")
    return value


def _finite(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


# Rows read at once where a replay reads a whole (possibly memory-mapped) sequence.
_READ_ROWS = 1 << 16


def distance_to_instability(votes) -> np.ndarray:
    """``max(0, ceil(m/2) - 1)`` with ``m`` the plurality margin (MATH.md s.1, SVT-PATE):
    how many votes must change before the plurality label can change."""
    votes = np.asarray(votes, dtype=np.float64)
    top_two = -np.partition(-votes, 1, axis=1)[:, :2]
    margin = top_two[:, 0] - top_two[:, 1]
    return np.maximum(0.0, np.ceil(margin / 2.0) - 1.0)


def _noisy_argmax(votes: np.ndarray, noise: np.ndarray, scale: float) -> np.ndarray:
    return np.argmax(votes + scale * noise, axis=1)


def _answer_every_query(votes, noise, start, kind, scale) -> Decisions:
    """Noisy argmax of every query (LNMax, GNMax), noise from the answer stream."""
    count, classes = votes.shape
    draws = noise.draw(stream=STREAM_ANSWER, kind=kind, start=start, count=count, width=classes)
    labels = _noisy_argmax(votes, draws, scale)
    return Decisions(np.ones(count, dtype=bool), labels.astype(np.int64))


class _Facts:
    """What ``protocol.Mechanism`` says about an aggregator, by default: no student, no
    selection step, no answer noise, not sequential. Each aggregator states what differs."""

    uses_student: ClassVar[bool] = False
    selects: ClassVar[bool] = False
    answer_noise: ClassVar[str | None] = None
    sequential: ClassVar[bool] = False


@dataclass(frozen=True)
class LNMax(_Facts):
    """Laplace noisy max (Papernot et al. 2017): ``argmax_j n_j + Laplace(0, lam)``.

    Every query is answered; each answer is ``2 / lam``-DP (MATH.md sections 1, 2, 5).
    """

    laplace_scale: float
    name: str = field(default="lnmax", init=False)
    answer_noise: ClassVar[str | None] = "laplace"

    def __post_init__(self):
        object.__setattr__(self, "laplace_scale",
                           _scale(self.laplace_scale, "laplace scale", LAPLACE_SCALE))

    @property
    def params(self) -> dict:
        return {"laplace_scale": self.laplace_scale}

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None) -> Decisions:
        return _answer_every_query(votes, noise, start, "laplace", self.laplace_scale)


@dataclass(frozen=True)
class GNMax(_Facts):
    """Gaussian noisy max (Papernot et al. 2018): ``argmax_j n_j + N(0, sigma^2)``.

    Every query is answered (MATH.md sections 1-3).
    """

    sigma: float
    name: str = field(default="gnmax", init=False)
    answer_noise: ClassVar[str | None] = "gaussian"

    def __post_init__(self):
        object.__setattr__(self, "sigma", _scale(self.sigma, "sigma", GAUSSIAN_SCALE))

    @property
    def params(self) -> dict:
        return {"sigma": self.sigma}

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None) -> Decisions:
        return _answer_every_query(votes, noise, start, "normal", self.sigma)


def _check_confident_parameters(mechanism) -> None:
    """T finite; sigma1 and sigma2 in the Gaussian domain (Confident and Interactive)."""
    object.__setattr__(mechanism, "threshold", _finite(mechanism.threshold, "threshold"))
    object.__setattr__(mechanism, "sigma_threshold",
                       _scale(mechanism.sigma_threshold, "sigma threshold", GAUSSIAN_SCALE))
    object.__setattr__(mechanism, "sigma", _scale(mechanism.sigma, "sigma", GAUSSIAN_SCALE))


@dataclass(frozen=True)
class ConfidentGNMax(_Facts):
    """Confident-GNMax (Algorithm 1 of Papernot et al. 2018).

    Answer ``argmax_j n_j + N(0, sigma^2)`` only if ``max_j n_j + N(0, sigma1^2) >= T``,
    otherwise abstain (MATH.md sections 1, 4, 7).
    """

    threshold: float
    sigma_threshold: float
    sigma: float
    name: str = field(default="confident", init=False)
    selects: ClassVar[bool] = True
    answer_noise: ClassVar[str | None] = "gaussian"

    def __post_init__(self):
        _check_confident_parameters(self)

    @property
    def params(self) -> dict:
        return {
            "threshold": self.threshold,
            "sigma_threshold": self.sigma_threshold,
            "sigma": self.sigma,
        }

    def selection_counts(self, votes: np.ndarray, student: np.ndarray | None = None):
        """``max_j n_j`` per query: what the selection step compares with T."""
        return votes.max(axis=1)

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None) -> Decisions:
        count, classes = votes.shape
        selection = noise.draw(stream=STREAM_SELECTION, kind="normal", start=start, count=count)
        answered = (self.selection_counts(votes) + self.sigma_threshold * selection[:, 0]
                    >= self.threshold)
        draws = noise.draw(stream=STREAM_ANSWER, kind="normal", start=start, count=count,
                           width=classes)
        labels = np.where(answered, _noisy_argmax(votes, draws, self.sigma), -1)
        return Decisions(answered, labels.astype(np.int64))


@dataclass(frozen=True)
class InteractiveGNMax(_Facts):
    """Interactive-GNMax (Algorithm 2 of Papernot et al. 2018), MATH.md sections 1, 4, 7.

    With the student's probabilities ``p`` and ``M`` teachers: if
    ``max_j (n_j - M p_j) + N(0, sigma1^2) >= T`` the teachers answer
    ``argmax_j n_j + N(0, sigma^2)``; else if ``max_j p_j > confidence`` the student's own
    label is reinforced (no teacher data is touched); else abstain.
    """

    threshold: float
    sigma_threshold: float
    sigma: float
    confidence: float
    teachers: float
    name: str = field(default="interactive", init=False)
    uses_student: ClassVar[bool] = True
    selects: ClassVar[bool] = True
    answer_noise: ClassVar[str | None] = "gaussian"

    def __post_init__(self):
        _check_confident_parameters(self)
        object.__setattr__(self, "teachers", _positive(self.teachers, "teachers"))
        confidence = _finite(self.confidence, "confidence")
        if not 0.0 <= confidence <= 1.0:
            raise ValueError(f"confidence must lie in [0, 1], got {confidence:g}")
        object.__setattr__(self, "confidence", confidence)

    @property
    def params(self) -> dict:
        return {
            "threshold": self.threshold,
            "sigma_threshold": self.sigma_threshold,
            "sigma": self.sigma,
            "confidence": self.confidence,
        }

    def selection_counts(self, votes: np.ndarray, student: np.ndarray | None = None):
        """``max_j (n_j - M p_j)`` per query: what the selection step compares with T."""
        if student is None:
            raise ValueError("Interactive-GNMax needs the student's probabilities (--student)")
        return (votes - self.teachers * student).max(axis=1)

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None) -> Decisions:
        if student is None:
            raise ValueError("Interactive-GNMax needs the student's probabilities (--student)")
        count, classes = votes.shape
        selection = noise.draw(stream=STREAM_SELECTION, kind="normal", start=start, count=count)
        teacher = (self.selection_counts(votes, student) + self.sigma_threshold * selection[:, 0]
                   >= self.threshold)
        draws = noise.draw(stream=STREAM_ANSWER, kind="normal", start=start, count=count,
                           width=classes)
        reinforced = ~teacher & (student.max(axis=1) > self.confidence)
        labels = np.where(teacher, _noisy_argmax(votes, draws, self.sigma),
                          np.where(reinforced, np.argmax(student, axis=1), -1))
        outcome = np.where(teacher, OUTCOME_TEACHER,
                           np.where(reinforced, OUTCOME_STUDENT, OUTCOME_ABSTAIN))
        return Decisions(teacher, labels.astype(np.int64), outcome.astype(np.int8))


@dataclass(frozen=True)
class SVTPATE(_Facts):
    """SVT-PATE (Bassily, Thakkar, Thakurta 2018; Liu et al., Algorithm 2), MATH.md s.1, 8.

    Each query's distance to instability plus ``Laplace(2 lam)`` is compared with a noisy
    threshold ``w + Laplace(lam)``: above it the plain majority label is released; at or
    below it the query is unstable (abstain, fresh threshold). After ``cutoff`` unstable
    queries the mechanism halts. ``threshold`` None: chosen from delta (MATH.md s.8);
    ``scale`` None: solved from ``target_epsilon``. ``cutoff`` ``"auto"`` (with
    ``target_epsilon`` only): the analysis picks the cut-off that answers the most queries
    (``analysis.svt_advice``) and replays with it.
    """

    scale: float | None
    cutoff: int | str
    threshold: float | None = None
    target_epsilon: float | None = None
    name: str = field(default="svt", init=False)
    sequential: ClassVar[bool] = True

    def __post_init__(self):
        if self.scale is None and self.target_epsilon is None:
            raise ValueError("SVT needs --svt-scale or --target-epsilon")
        if self.scale is not None:
            object.__setattr__(self, "scale", _scale(self.scale, "SVT scale", SVT_SCALE))
        if self.target_epsilon is not None:
            object.__setattr__(self, "target_epsilon",
                               _positive(self.target_epsilon, "target epsilon"))
        if isinstance(self.cutoff, str) and self.cutoff.lower() == "auto":
            if self.target_epsilon is None or self.scale is not None:
                raise ValueError("--svt-cutoff auto needs --target-epsilon (each cut-off's "
                                 "scale is solved for it), not --svt-scale")
            object.__setattr__(self, "cutoff", "auto")
        elif not (isinstance(self.cutoff, (int, np.integer)) and self.cutoff >= 1):
            raise ValueError(f"SVT cut-off must be a positive integer or 'auto', got "
                             f"{self.cutoff!r}")
        if self.threshold is not None:
            threshold = _finite(self.threshold, "SVT threshold")
            if not threshold > 1.0:
                raise ValueError(f"SVT threshold must be above 1, got {threshold:g} (at w <= 1 "
                                 "the failure probability delta2 is at least 1/2)")
            object.__setattr__(self, "threshold", threshold)

    @property
    def params(self) -> dict:
        cutoff = self.cutoff if self.cutoff == "auto" else int(self.cutoff)
        return {"svt_scale": self.scale, "svt_cutoff": cutoff,
                "svt_threshold": self.threshold, "target_epsilon": self.target_epsilon}

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None) -> Decisions:
        """Run the whole analysed sequence (``start`` 0): stable queries get the
        plurality label; outcome codes ``SVT_STABLE``/``SVT_UNSTABLE``/``SVT_HALTED``.

        Needs the scale and the threshold resolved (``analysis.svt`` does it from
        ``target_epsilon`` and delta). Sequential by nature (a fresh threshold after each
        unstable query), computed segment by segment: all noise is drawn up front, and
        each round's first unstable query is found with array operations on windows that
        double while none is found, and a run of consecutive unstable queries at once.
        ``votes`` is read in chunks (it may be a memory map).
        """
        if start != 0:
            raise ValueError("SVT-PATE is replayed over the whole sequence at once (start 0)")
        count = votes.shape[0]
        distance = np.empty(count)
        plurality_class = np.empty(count, dtype=np.int64)
        for lo in range(0, count, _READ_ROWS):
            block = np.asarray(votes[lo : lo + _READ_ROWS], dtype=np.float64)
            distance[lo : lo + block.shape[0]] = distance_to_instability(block)
            plurality_class[lo : lo + block.shape[0]] = np.argmax(block, axis=1)
        return self.replay_distances(distance, plurality_class, noise=noise)

    def replay_distances(self, distance: np.ndarray, plurality_class: np.ndarray, *,
                         noise: NoiseSource) -> Decisions:
        """:meth:`replay` from each query's distance to instability and plurality class
        (what ``replay`` computes from the votes), so that a search over cut-offs
        computes them once."""
        if self.scale is None or self.threshold is None or self.cutoff == "auto":
            raise ValueError("resolve the SVT scale, cut-off and threshold before replaying")
        count, cutoff = distance.shape[0], int(self.cutoff)
        score = distance + 2.0 * self.scale * noise.draw(
            stream=STREAM_SVT_QUERY, kind="laplace", start=0, count=count)[:, 0]
        rounds = min(cutoff, count)
        thresholds = self.threshold + self.scale * noise.draw(
            stream=STREAM_SVT_THRESHOLD, kind="laplace", start=0, count=rounds)[:, 0]
        unstable = np.zeros(count, dtype=bool)
        position, met, window, run = 0, 0, 1024, 16
        while met < cutoff and position < count:
            # A run of unstable queries: query position + j meets threshold met + j for as
            # long as each one is unstable (each draws the next threshold), so the run's
            # length is the first j whose score clears its threshold.
            if score[position] <= thresholds[met]:
                span = min(count - position, cutoff - met, run)
                clears = score[position : position + span] > thresholds[met : met + span]
                first = int(np.argmax(clears)) if clears.any() else span
                unstable[position : position + first] = True
                position, met = position + first, met + first
                run = run * 2 if first == span else 16
                continue
            # The query at ``position`` is stable: find the next unstable one at this
            # threshold in windows that double while none is found.
            end = min(count, position + window)
            hits = np.flatnonzero(score[position:end] <= thresholds[met])
            if hits.size == 0:
                position, window = end, window * 2
                continue
            unstable[position + hits[0]] = True
            position, met, window = position + hits[0] + 1, met + 1, 1024
        halted_from = position if met == cutoff else count
        released = ~unstable
        released[halted_from:] = False
        outcome = np.full(count, SVT_STABLE, dtype=np.int8)
        outcome[halted_from:] = SVT_HALTED
        outcome[unstable] = SVT_UNSTABLE
        labels = np.where(released, plurality_class, -1)
        return Decisions(released, labels, outcome)


MECHANISMS = {"lnmax": LNMax, "gnmax": GNMax, "confident": ConfidentGNMax,
              "interactive": InteractiveGNMax, "svt": SVTPATE}


# Defaults relative to the number of teachers M (CLI.md): the 2018 paper's MNIST setting
# (M = 250: sigma 40, T 200, sigma1 150) scaled with M; LNMax lam = 20 at M = 250.
DEFAULT_FRACTIONS = {"sigma": 0.16, "threshold": 0.8, "sigma_threshold": 0.6,
                     "laplace_scale": 0.08, "svt_scale": 0.01}


def build_mechanism(name: str, *, teachers: float, sigma: float | None = None,
                    threshold: float | None = None, sigma_threshold: float | None = None,
                    laplace_scale: float | None = None, confidence: float | None = None,
                    svt_scale: float | None = None, svt_cutoff: int | str | None = None,
                    svt_threshold: float | None = None, target_epsilon: float | None = None):
    """Create a mechanism by name, filling unset parameters from the teacher count M."""
    def pick(value, key):
        return DEFAULT_FRACTIONS[key] * teachers if value is None else value

    if name == "lnmax":
        return LNMax(laplace_scale=pick(laplace_scale, "laplace_scale"))
    if name == "gnmax":
        return GNMax(sigma=pick(sigma, "sigma"))
    if name == "confident":
        return ConfidentGNMax(threshold=pick(threshold, "threshold"),
                              sigma_threshold=pick(sigma_threshold, "sigma_threshold"),
                              sigma=pick(sigma, "sigma"))
    if name == "interactive":
        return InteractiveGNMax(threshold=pick(threshold, "threshold"),
                                sigma_threshold=pick(sigma_threshold, "sigma_threshold"),
                                sigma=pick(sigma, "sigma"),
                                confidence=0.9 if confidence is None else confidence,
                                teachers=teachers)
    if name == "svt":
        if svt_scale is None and target_epsilon is None:
            svt_scale = DEFAULT_FRACTIONS["svt_scale"] * teachers
        return SVTPATE(scale=svt_scale, cutoff=100 if svt_cutoff is None else svt_cutoff,
                       threshold=svt_threshold, target_epsilon=target_epsilon)
    raise ValueError(f"unknown mechanism {name!r} (choose from {', '.join(MECHANISMS)})")
