"""The aggregators as frozen value objects (``protocol.Mechanism``) and their seeded replay:
votes and a ``NoiseSource`` to decisions (math:mechanisms)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import numpy as np

from ..decisions import OUTCOME_ABSTAIN, OUTCOME_STUDENT, OUTCOME_TEACHER, Decisions
from ..inputs.vote_checks import integer_votes
from ..numerics import ratio_up
from .domains import (
    GAUSSIAN_SCALE,
    LAPLACE_SCALE,
    Facts,
    finite,
    noise_scale,
    positive,
)
from .exponential import DEFAULT_ETA_TIMES_M, ConfidentExponential, Exponential
from .noise import (
    STREAM_ANSWER,
    NoiseSource,
)
from .noisy_argmax import ArgmaxNoise, noisy_labels
from .svt import SVTPATE
from .threshold import check_threshold_parameters, passes_threshold


def _teacher_labels(votes, noise, start, kind, scale, answered, draw: bool) -> np.ndarray:
    """Noisy argmax where ``answered`` (noise from the answer stream), -1 elsewhere;
    ``LABEL_NOT_DRAWN`` for every answered query when ``draw`` is False."""
    return noisy_labels(votes, ArgmaxNoise(STREAM_ANSWER, kind, scale=scale), noise=noise,
                        start=start, answered=answered, draw=draw)


def _answer_every_query(votes, noise, start, kind, scale, labels: bool) -> Decisions:
    """Noisy argmax of every query (LNMax, GNMax), noise from the answer stream."""
    answered = np.ones(votes.shape[0], dtype=bool)
    return Decisions(answered, _teacher_labels(votes, noise, start, kind, scale, answered,
                                               labels))


@dataclass(frozen=True)
class LNMax(Facts):
    """Laplace noisy max (Papernot et al. 2017): ``argmax_j n_j + Laplace(0, lam)``.

    Every query is answered; each answer is ``2 / lam``-DP (math:mechanisms,
    math:independent, math:lnmax).
    """

    laplace_scale: float
    name: str = field(default="lnmax", init=False)
    answer_noise: ClassVar[str | None] = "laplace"

    def __post_init__(self):
        object.__setattr__(self, "laplace_scale",
                           noise_scale(self.laplace_scale, "laplace scale", LAPLACE_SCALE))

    @property
    def pure_epsilon(self) -> float:
        """Each answer's pure-DP epsilon, ``2 / lam`` (rounded up)."""
        return ratio_up(2.0, self.laplace_scale)

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        return _answer_every_query(votes, noise, start, "laplace", self.laplace_scale, labels)


@dataclass(frozen=True)
class GNMax(Facts):
    """Gaussian noisy max (Papernot et al. 2018): ``argmax_j n_j + N(0, sigma^2)``.

    Every query is answered (math:mechanisms, math:independent and math:gnmax).
    """

    sigma: float
    name: str = field(default="gnmax", init=False)
    answer_noise: ClassVar[str | None] = "gaussian"

    def __post_init__(self):
        object.__setattr__(self, "sigma", noise_scale(self.sigma, "sigma", GAUSSIAN_SCALE))

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        return _answer_every_query(votes, noise, start, "normal", self.sigma, labels)


def _check_confident_parameters(mechanism) -> None:
    """T finite, sigma1, sigma2 in the Gaussian domain, ``screening`` ``exact`` (math:screening)
    or ``gaussian`` (math:independent's, the papers')."""
    check_threshold_parameters(mechanism)
    object.__setattr__(mechanism, "sigma", noise_scale(mechanism.sigma, "sigma", GAUSSIAN_SCALE))


@dataclass(frozen=True)
class ConfidentGNMax(Facts):
    """Confident-GNMax (Algorithm 1 of Papernot et al. 2018).

    Answer ``argmax_j n_j + N(0, sigma^2)`` only if ``max_j n_j + N(0, sigma1^2) >= T``,
    otherwise abstain (math:mechanisms, math:threshold, math:costs). ``teachers`` (M) and
    ``integer_votes`` (plain counts) give the counts the threshold step may compare, for its
    exact curve (``screening="exact"``, math:screening); without ``teachers`` it is charged
    math:independent's Gaussian curve.
    """

    threshold: float
    sigma_threshold: float
    sigma: float
    name: str = field(default="confident", init=False)
    teachers: float | None = None
    screening: str = "exact"
    integer_votes: bool = False
    selects: ClassVar[bool] = True
    answer_noise: ClassVar[str | None] = "gaussian"

    def __post_init__(self):
        _check_confident_parameters(self)

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        answered = passes_threshold(self, votes, noise=noise, start=start)
        return Decisions(answered, _teacher_labels(votes, noise, start, "normal", self.sigma,
                                                   answered, labels))


@dataclass(frozen=True)
class InteractiveGNMax(Facts):
    """Interactive-GNMax (Papernot et al. 2018, Algorithm 2; math:mechanisms, math:threshold,
    math:costs).

    With the student's probabilities ``p`` and ``M`` teachers: if ``max_j (n_j - M p_j) +
    N(0, sigma1^2) >= T`` the teachers answer ``argmax_j n_j + N(0, sigma^2)``; else if
    ``max_j p_j > confidence`` the student's own label is reinforced (no teacher data is
    touched); else abstain.
    """

    threshold: float
    sigma_threshold: float
    sigma: float
    confidence: float
    teachers: float
    name: str = field(default="interactive", init=False)
    screening: str = "exact"
    uses_student: ClassVar[bool] = True
    selects: ClassVar[bool] = True
    answer_noise: ClassVar[str | None] = "gaussian"

    def __post_init__(self):
        _check_confident_parameters(self)
        object.__setattr__(self, "teachers", positive(self.teachers, "teachers"))
        confidence = finite(self.confidence, "confidence")
        if not 0.0 <= confidence <= 1.0:
            raise ValueError(f"confidence must lie in [0, 1], got {confidence:g}")
        object.__setattr__(self, "confidence", confidence)

    def selection_counts(self, votes: np.ndarray, student: np.ndarray | None = None):
        """``max_j (n_j - M p_j)`` per query: what the selection step compares with T."""
        if student is None:
            raise ValueError("Interactive-GNMax needs the student's probabilities (--student)")
        return (votes - self.teachers * student).max(axis=1)

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        if student is None:
            raise ValueError("Interactive-GNMax needs the student's probabilities (--student)")
        teacher = passes_threshold(self, votes, noise=noise, start=start, student=student)
        reinforced = ~teacher & (student.max(axis=1) > self.confidence)
        released = np.where(teacher, _teacher_labels(votes, noise, start, "normal", self.sigma,
                                                     teacher, labels),
                            np.where(reinforced, np.argmax(student, axis=1), -1))
        outcome = np.where(teacher, OUTCOME_TEACHER,
                           np.where(reinforced, OUTCOME_STUDENT, OUTCOME_ABSTAIN))
        return Decisions(teacher, released.astype(np.int64), outcome.astype(np.int8))


MECHANISMS = {"lnmax": LNMax, "gnmax": GNMax, "confident": ConfidentGNMax,
              "interactive": InteractiveGNMax, "svt": SVTPATE, "exponential": Exponential,
              "confident-exponential": ConfidentExponential}


# Defaults relative to M (cli:pate-analyze): the 2018 paper's MNIST setting (M = 250: sigma 40,
# T 200, sigma1 150; LNMax lam 20) scaled with M; eta (inverse scale) ``DEFAULT_ETA_TIMES_M / M``.
DEFAULT_FRACTIONS = {"sigma": 0.16, "threshold": 0.8, "sigma_threshold": 0.6,
                     "laplace_scale": 0.08, "svt_scale": 0.01}

# The mechanisms that take each parameter (``_built``); SELECTING: those with a threshold step.
SELECTING = ("confident", "interactive", "confident-exponential")
TAKEN_BY = {"sigma": ("gnmax", "confident", "interactive"), "threshold": SELECTING,
            "sigma_threshold": SELECTING, "laplace_scale": ("lnmax",),
            "confidence": ("interactive",), "svt_scale": ("svt",), "svt_cutoff": ("svt",),
            "svt_threshold": ("svt",), "target_epsilon": ("svt",),
            "eta": ("exponential", "confident-exponential"), "screening": SELECTING}
# a parameter's option where it is not --NAME, what it applies to, and why
_FLAGS = {"threshold": "-T/--threshold", "screening": "--screening gaussian"}
_WHERE = {"screening": "the threshold step of "}
_WHY = {"target_epsilon": " (it solves SVT-PATE's scale; for the others see pate-calibrate)"}


def flag_of(key: str) -> str:
    """The command-line flag of parameter ``key``."""
    return _FLAGS.get(key, "--" + key.replace("_", "-"))


def not_taken(key: str, name: str, *others: str) -> str | None:
    """The one-line refusal of ``key`` given to ``name`` and ``others`` (a sweep's grid, a
    rounds file) when none takes it (``TAKEN_BY``), else None."""
    takers = TAKEN_BY.get(key, ())
    if any(each in takers for each in (name, *others)):
        return None
    flag = flag_of(key)
    return (f"{flag} applies to {_WHERE.get(key, '')}-m {', '.join(takers)}, not -m "
            f"{' or -m '.join(dict.fromkeys((name, *others)))}{_WHY.get(key, '')}")


def needs_integer_votes(name: str, parameters: dict, vote_set) -> bool:
    """Whether the threshold step compares whole counts (math:screening's integer grid): a
    Confident aggregator on plain votes, with the exact curve."""
    return (name in ("confident", "confident-exponential")
            and parameters.get("screening") != "gaussian" and integer_votes(vote_set.votes))


def mechanism_for(name: str, vote_set, parameters: dict):
    """``build_mechanism`` for a ``VoteSet``: its teachers, and whole-count screening where
    :func:`needs_integer_votes`."""
    return build_mechanism(name, teachers=vote_set.teachers, **parameters,
                           integer_votes=needs_integer_votes(name, parameters, vote_set))


@dataclass(frozen=True)
class MechanismParameters:
    """``build_mechanism``'s keywords, None for the default from M (``DEFAULT_FRACTIONS``;
    eta ``DEFAULT_ETA_TIMES_M / M``; confidence 0.9, svt_cutoff 100, screening exact)."""

    sigma: float | None = None
    threshold: float | None = None
    sigma_threshold: float | None = None
    laplace_scale: float | None = None
    confidence: float | None = None
    svt_scale: float | None = None
    svt_cutoff: int | str | None = None
    svt_threshold: float | None = None
    target_epsilon: float | None = None
    eta: float | None = None
    screening: str | None = None
    integer_votes: bool = False


def build_mechanism(name: str, *, teachers: float, **parameters: Any):
    """Create a mechanism by name, unset parameters filled from the teacher count M.

    Args:
        name: a key of ``MECHANISMS``.
        teachers: M, which the defaults scale with.
        **parameters: :class:`MechanismParameters`' fields; ``screening`` (``exact`` or
            ``gaussian``) and ``integer_votes`` (plain counts) apply to selecting mechanisms
            (math:screening).

    Raises:
        TypeError: another keyword.
        ValueError: an unknown name or a parameter out of its domain (a default's error
            names the options to give).
    """
    unknown = sorted(set(parameters) - {item.name for item in fields(MechanismParameters)})
    if unknown:
        raise TypeError(f"build_mechanism() got an unexpected keyword argument {unknown[0]!r}")
    given = MechanismParameters(**parameters)
    defaulted = []

    def pick(key):
        value = getattr(given, key)
        if value is None:
            defaulted.append(key)
            if key == "eta":
                return DEFAULT_ETA_TIMES_M / teachers
            return DEFAULT_FRACTIONS[key] * teachers
        return value

    try:
        return _built(name, teachers, given, pick)
    except ValueError as error:
        named = str(error).split(" ", 1)[0]  # "confidence must be ...": the value named
        if not defaulted or getattr(given, named, None) is not None:
            raise  # a value given (--confidence nan), not a default from M
        # a default out of range comes from the votes: say so, and what to give instead
        flags = ", ".join("--" + key.replace("_", "-") for key in defaulted)
        raise ValueError(f"{error} (defaults scale with the number of teachers M = "
                         f"{teachers:g}, the votes' row total; give {flags}, or check the "
                         "votes)") from None


def _built(name: str, teachers: float, given: MechanismParameters, pick):
    screening = "exact" if given.screening is None else given.screening
    if name == "lnmax":
        return LNMax(laplace_scale=pick("laplace_scale"))
    if name == "gnmax":
        return GNMax(sigma=pick("sigma"))
    if name == "confident":
        return ConfidentGNMax(threshold=pick("threshold"),
                              sigma_threshold=pick("sigma_threshold"),
                              sigma=pick("sigma"), teachers=teachers,
                              screening=screening, integer_votes=given.integer_votes)
    if name == "interactive":
        return InteractiveGNMax(threshold=pick("threshold"),
                                sigma_threshold=pick("sigma_threshold"),
                                sigma=pick("sigma"),
                                confidence=0.9 if given.confidence is None else given.confidence,
                                teachers=teachers, screening=screening)
    if name == "exponential":
        return Exponential(eta=pick("eta"))
    if name == "confident-exponential":
        return ConfidentExponential(threshold=pick("threshold"),
                                    sigma_threshold=pick("sigma_threshold"),
                                    eta=pick("eta"), teachers=teachers,
                                    screening=screening, integer_votes=given.integer_votes)
    if name == "svt":
        svt_scale = given.svt_scale
        if svt_scale is None and given.target_epsilon is None:
            svt_scale = pick("svt_scale")
        return SVTPATE(scale=svt_scale, cutoff=100 if given.svt_cutoff is None else
                       given.svt_cutoff, threshold=given.svt_threshold,
                       target_epsilon=given.target_epsilon)
    raise ValueError(f"unknown mechanism {name!r} (choose from {', '.join(MECHANISMS)})")
