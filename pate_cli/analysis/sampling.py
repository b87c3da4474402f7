"""Sampled voters (MATH.md s.16): the declared scheme, its refusals and its cost steps.

``--sampling poisson:RATE`` (each privacy unit votes independently with probability RATE;
neighbours add or remove one unit) or ``without-replacement:m/N`` (a fixed-size subset;
neighbours replace one unit). A sampled run is a :class:`SampledMechanism`: the
aggregator, unchanged in what it replays, carrying its :class:`Sampling`; the cost table
(``analysis.steps``) gives its steps amplified data-independent curves
(``accounting.subsampling``): Gaussian steps (GNMax's answer, the threshold) exactly under
Poisson sampling (Mironov, Talwar and Zhang 2019) and by WBK Theorem 9 without
replacement; LNMax's Laplace step, known by its RDP curve, by Zhu-Wang (Poisson) or WBK.
Sensitivities: the argmax ``sqrt(2)`` (``--vote-change move``: a unit's presence moves one
vote) or 1 (``add``; L1 2 or 1 for Laplace); the threshold's count 1. Noise multiplier
``z = sigma / Delta``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ..accounting.laplace import rdp_laplace, rdp_lnmax_data_independent
from ..accounting.pld import sampled_gaussian_pld_epsilon
from ..accounting.subsampling import (
    rdp_poisson_gaussian,
    rdp_poisson_general,
    rdp_without_replacement,
)
from ..errors import OptionError
from .added_figures import with_pld_figure

VOTE_CHANGES = ("move", "add")
SAMPLED_MECHANISMS = ("gnmax", "confident", "lnmax")


@dataclass(frozen=True)
class Sampling:
    """A declared sampling scheme: ``rate`` (Poisson, or ``size / population``), with
    ``size`` and ``population`` for ``without-replacement``; ``vote_change`` sets the
    argmax's sensitivity."""

    scheme: str
    rate: float
    size: int | None = None
    population: int | None = None
    vote_change: str = "move"

    @property
    def answer_sensitivity(self) -> float:
        """L2 sensitivity of the Gaussian argmax: sqrt(2) (move) or 1 (add)."""
        return math.sqrt(2.0) if self.vote_change == "move" else 1.0

    def laplace_sensitivity(self) -> float:
        """L1 sensitivity of the Laplace argmax's counts: 2 (move) or 1 (add)."""
        return 2.0 if self.vote_change == "move" else 1.0

    def text(self) -> str:
        """The scheme as ``--sampling`` writes it."""
        if self.scheme == "poisson":
            return f"poisson:{self.rate!r}"
        return f"without-replacement:{self.size}/{self.population}"


def parse_sampling(text, vote_change: str = "move") -> Sampling:
    """``--sampling`` (a string, or a :class:`Sampling` kept as is) with ``--vote-change``;
    ``OptionError`` with the reason for anything MATH.md s.16 refuses."""
    if vote_change not in VOTE_CHANGES:
        raise OptionError(f"--vote-change must be one of {', '.join(VOTE_CHANGES)}, "
                          f"got {vote_change!r}")
    if isinstance(text, Sampling):
        return replace(text, vote_change=vote_change)
    scheme, _, value = str(text).strip().lower().partition(":")
    if scheme in ("with-replacement", "replacement"):
        raise OptionError("--sampling with-replacement is refused: no amplification bound "
                          "for sampling with replacement is implemented (MATH.md s.16); "
                          "accounting it as poisson or without-replacement is invalid")
    if scheme == "poisson":
        rate = _number(value, "--sampling poisson:RATE")
        if not 0.0 < rate <= 1.0:
            raise OptionError(f"--sampling poisson:RATE needs a rate in (0, 1], got {value}")
        return Sampling("poisson", rate, vote_change=vote_change)
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
                        vote_change)
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


def check_sampled_run(sampling: Sampling, name: str, *, accounting: str, rounds,
                      individualized, smooth_sensitivity: bool) -> None:
    """The combinations MATH.md s.16 and this implementation refuse, one line each."""
    if accounting != "data-independent":
        raise OptionError(f"--sampling needs --accounting data-independent, not {accounting}: "
                          "the data-dependent bounds (MATH.md s.3-s.5) are for a fixed "
                          "histogram and no valid published bound combines them with "
                          "amplification by subsampling (MATH.md s.16)")
    if name not in SAMPLED_MECHANISMS:
        raise OptionError(f"--sampling applies to -m {', '.join(SAMPLED_MECHANISMS)}, not "
                          f"-m {name}")
    if rounds is not None or individualized is not None or smooth_sensitivity:
        raise OptionError("--sampling applies to single runs (not --rounds, --individualized "
                          "or --smooth-sensitivity)")


def declared_sampling(sampling, vote_change: str | None, mechanism, **run) -> Sampling | None:
    """``analyze``'s ``sampling`` and ``vote_change`` checked against the run (``run``:
    ``check_sampled_run``'s keywords); None without sampling."""
    if sampling is None:
        if vote_change not in (None, "move"):
            raise OptionError("--vote-change applies to sampled voters (--sampling)")
        return None
    parsed = parse_sampling(sampling, vote_change or "move")
    check_sampled_run(parsed, mechanism.lower() if isinstance(mechanism, str)
                      else mechanism.name, **run)
    return parsed


@dataclass(frozen=True)
class SampledMechanism:
    """An aggregator whose voters are sampled: it replays as ``inner`` does (every
    attribute but ``sampling`` is ``inner``'s) and costs what ``analysis.steps`` gives a
    sampled run."""

    inner: object
    sampling: Sampling

    def __getattr__(self, name: str):
        if name in ("inner", "sampling") or name.startswith("__"):
            raise AttributeError(name)  # unpickling asks before the fields are set
        return getattr(self.inner, name)

    def replay(self, votes, **options):
        return self.inner.replay(votes, **options)


def unsampled(sampling: Sampling) -> bool:
    """Rate 1 with ``--vote-change move``: the run is the aggregator without sampling."""
    return sampling.rate == 1.0 and sampling.vote_change == "move"


def sampled_steps(selection, answer, mechanism: SampledMechanism):
    """The (selection, answer) steps of the inner aggregator with their data-independent
    curves amplified (the data-dependent ones are never used: s.16 refuses them)."""
    sampling = mechanism.sampling
    if unsampled(sampling):  # every unit votes: the steps' own curves, bit for bit
        return selection, answer
    if mechanism.name == "lnmax":
        curve = partial(_laplace_amplified, sampling, mechanism.laplace_scale)
    else:
        curve = partial(_gaussian_amplified, sampling,
                        mechanism.sigma / sampling.answer_sensitivity)
    answer = replace(answer, independent=curve)
    if selection is not None:
        selection = replace(selection, independent=partial(
            _gaussian_amplified, sampling, mechanism.sigma_threshold))
    return selection, answer


# The amplified curves, at module level so that a step pickles (cluster workers run them).

def _gaussian_curve(z, orders):
    return np.asarray(orders, dtype=np.float64) / (2.0 * z * z)


def _gaussian_amplified(sampling: Sampling, z: float, orders) -> np.ndarray:
    if sampling.scheme == "poisson":
        return rdp_poisson_gaussian(rate=sampling.rate, noise_multiplier=z, orders=orders)
    return rdp_without_replacement(partial(_gaussian_curve, z), rate=sampling.rate,
                                   orders=orders)


def _laplace_curve(scale, vote_change, orders):
    """The Laplace argmax's own curve: its counts' exact RDP (two counts move, or one
    count changes by 1), capped by pure DP's ``min(eps0, alpha eps0^2 / 2)``."""
    if vote_change == "move":
        return rdp_lnmax_data_independent(scale=scale, orders=orders)
    eps0 = 1.0 / scale
    orders = np.asarray(orders, dtype=np.float64)
    return np.minimum(rdp_laplace(scale=scale, orders=orders),
                      np.minimum(0.5 * eps0 * eps0 * orders, eps0))


def _laplace_amplified(sampling: Sampling, scale: float, orders) -> np.ndarray:
    curve = partial(_laplace_curve, scale, sampling.vote_change)
    if sampling.scheme == "poisson":
        return rdp_poisson_general(curve, rate=sampling.rate, orders=orders)
    return rdp_without_replacement(curve, rate=sampling.rate, orders=orders,
                                   pure_epsilon=sampling.laplace_sensitivity() / scale)


def with_sampled_pld_figure(result, mechanism: SampledMechanism, delta: float):
    """Poisson-sampled Gaussian steps composed by dp_accounting's PLD accountant (where
    installed): the smaller of that and the RDP figure, as ``bounds.with_pld_figure``
    does for unsampled runs. dp_accounting has no PLD for sampling without replacement:
    those runs keep the RDP figure."""
    sampling = mechanism.sampling
    if unsampled(sampling):
        return with_pld_figure(result, mechanism.inner, delta)
    if sampling.scheme != "poisson" or mechanism.name == "lnmax":
        return result
    steps = [(mechanism.sigma / sampling.answer_sensitivity,
              int(round(result.answered_total)))]
    if mechanism.name == "confident":
        steps.append((mechanism.sigma_threshold, result.queries))
    figure = sampled_gaussian_pld_epsilon(sampling.rate, steps, delta)
    if figure is None or not figure < result.epsilon:
        return result
    budget = result.budget
    if budget is not None:
        budget = replace(budget, remaining=max(0.0, budget.limit - figure))
    return replace(result, epsilon=figure, epsilon_data_independent=figure,
                   data_independent_method="pld", epsilon_rdp=result.epsilon, budget=budget)
