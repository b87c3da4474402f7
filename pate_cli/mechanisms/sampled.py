"""Sampled voters (math:sampling): the declared scheme and the aggregator that carries it.

``--sampling poisson:RATE`` (each unit votes with probability RATE; neighbours add or remove
one) or ``without-replacement:m/N`` (neighbours replace one). The aggregator replays unchanged;
``analysis.steps`` gives its steps amplified curves (``accounting.subsampling``). Argmax
sensitivity: Poisson ``sqrt(2)`` (``--vote-change move``) or 1 (``add``), L1 2 or 1; without
replacement ``sqrt(2)`` (L1 2) whatever the change; the threshold's count 1. Noise multiplier
``z = sigma / Delta``. ``--sampling-steps``: Confident's two steps share one subset per query
(``shared``, Private-kNN; default) or not (``independent``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import OptionError

VOTE_CHANGES = ("move", "add")
SAMPLING_STEPS = ("shared", "independent")
SAMPLED_MECHANISMS = ("gnmax", "confident", "lnmax")


@dataclass(frozen=True)
class Sampling:
    """A declared sampling scheme: ``rate`` (Poisson, or ``size / population``), ``size`` and
    ``population`` for ``without-replacement``; ``vote_change`` sets the argmax's sensitivity
    under Poisson; ``steps``: whether Confident's two steps share one subset per query."""

    scheme: str
    rate: float
    size: int | None = None
    population: int | None = None
    vote_change: str = "move"
    steps: str = "shared"

    @property
    def moves(self) -> bool:
        """Whether the argmax's counts move (one down, one up) between neighbours: a unit
        that moves its vote, or any replaced unit (sampling without replacement)."""
        return self.vote_change == "move" or self.scheme == "without-replacement"

    @property
    def answer_sensitivity(self) -> float:
        """L2 sensitivity of the Gaussian argmax: sqrt(2) where counts move, else 1."""
        return math.sqrt(2.0) if self.moves else 1.0

    def laplace_sensitivity(self) -> float:
        """L1 sensitivity of the Laplace argmax's counts: 2 where counts move, else 1."""
        return 2.0 if self.moves else 1.0

    def text(self) -> str:
        """The scheme as ``--sampling`` writes it."""
        if self.scheme == "poisson":
            return f"poisson:{self.rate!r}"
        return f"without-replacement:{self.size}/{self.population}"


def parse_sampling(text, vote_change: str = "move", steps: str = "shared") -> Sampling:
    """``--sampling`` (a string, or a :class:`Sampling` kept as is) with ``--vote-change`` and
    ``--sampling-steps``; ``OptionError`` with the reason for anything math:sampling refuses."""
    if vote_change not in VOTE_CHANGES:
        raise OptionError(f"--vote-change must be one of {', '.join(VOTE_CHANGES)}, "
                          f"got {vote_change!r}")
    if steps not in SAMPLING_STEPS:
        raise OptionError(f"--sampling-steps must be one of {', '.join(SAMPLING_STEPS)}, "
                          f"got {steps!r}")
    if isinstance(text, Sampling):
        return replace(text, vote_change=vote_change, steps=steps)
    scheme, _, value = str(text).strip().lower().partition(":")
    if scheme in ("with-replacement", "replacement"):
        raise OptionError("--sampling with-replacement is refused: no amplification bound "
                          "for sampling with replacement is implemented "
                          "(docs/explanation/sampling.md); accounting it as poisson or "
                          "without-replacement is invalid")
    if scheme == "poisson":
        rate = _number(value, "--sampling poisson:RATE")
        if not 0.0 < rate <= 1.0:
            raise OptionError(f"--sampling poisson:RATE needs a rate in (0, 1], got {value}")
        return Sampling("poisson", rate, vote_change=vote_change, steps=steps)
    if scheme == "without-replacement":
        size_text, slash, population_text = value.partition("/")
        size = _whole(size_text, "m", value)
        population = _whole(population_text, "N", value) if slash else None
        if population is None or size < 1 or population < 1:
            raise OptionError("--sampling without-replacement:m/N needs whole numbers "
                              f"1 <= m <= N, got {value!r}")
        if size > population:
            raise OptionError(f"--sampling without-replacement:{value}: m = {size} is larger "
                              f"than N = {population} (rate m/N must lie in (0, 1])")
        return Sampling("without-replacement", size / population, size, population,
                        vote_change, steps)
    raise OptionError(f"--sampling must be poisson:RATE or without-replacement:m/N, "
                      f"got {text!r}")


def _number(value: str, what: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise OptionError(f"{what} needs a number, got {value!r}") from None
    if not math.isfinite(number):
        raise OptionError(f"{what} needs a rate in (0, 1], got {value}")
    return number


def _whole(value: str, name: str, whole: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise OptionError("--sampling without-replacement:m/N needs whole numbers "
                          f"1 <= m <= N, got {whole!r} ({name} = {value!r})") from None


@dataclass(frozen=True)
class SampledMechanism:
    """An aggregator whose voters are sampled: every attribute but ``sampling`` is ``inner``'s."""

    inner: object
    sampling: Sampling

    def __getattr__(self, name: str):
        if name in ("inner", "sampling") or name.startswith("__"):
            raise AttributeError(name)  # unpickling asks before the fields are set
        return getattr(self.inner, name)

    def replay(self, votes, **options):
        return self.inner.replay(votes, **options)


def unsampled(sampling: Sampling) -> bool:
    """Rate 1 where counts move (``--vote-change move``, or without replacement): the run is
    the aggregator unsampled."""
    return sampling.rate == 1.0 and sampling.moves
