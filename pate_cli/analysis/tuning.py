"""``--tuning``: a run standing for every candidate of a random search (MATH.md s.12).

``pate-analyze --tuning DIST`` treats the analysed run as the bound on every candidate's
RDP curve (the candidates are runs like it) and reports what the whole search costs.
The headline ``epsilon`` stays the single run's figure (scripts read it as such); the
search's figure is ``tuning.epsilon_tuned``.
"""

from __future__ import annotations

from ..accounting.tuning import TuningDistribution, parse_tuning, tuned_epsilon
from ..errors import OptionError
from .result import TuningPart

# The largest mean number of candidates ``--tuning`` takes: each candidate is a whole
# analysis, and a mean such as 1e300 only printed a 300-digit epsilon.
MAX_TUNING_MEAN = 1e9


def parsed_tuning(text: str) -> TuningDistribution:
    """``parse_tuning`` with the mean held to ``MAX_TUNING_MEAN`` (``ValueError``)."""
    distribution = parse_tuning(text)
    check_tuning_mean(distribution)
    return distribution


def check_tuning_mean(distribution: TuningDistribution) -> None:
    """``OptionError`` for a mean number of candidates above ``MAX_TUNING_MEAN``."""
    if distribution.mean > MAX_TUNING_MEAN:
        raise OptionError(f"--tuning {distribution.name}:{distribution.mean:g}: a "
                          f"random search of more than {MAX_TUNING_MEAN:.0e} candidates on "
                          "average is outside the supported range (each candidate is a "
                          "whole run)")


def tuning_distribution(tuning) -> TuningDistribution:
    """A distribution from ``--tuning`` text (or one already built); ``OptionError``."""
    if isinstance(tuning, TuningDistribution):
        check_tuning_mean(tuning)
        return tuning
    try:
        return parsed_tuning(tuning)
    except OptionError:
        raise
    except ValueError as error:
        raise OptionError(str(error)) from None


def tuning_part(result, tuning) -> TuningPart:
    """The cost of a random search whose candidates each cost at most ``result``'s
    total RDP curve (converted as the run is: same grid, delta and conversion)."""
    distribution = tuning_distribution(tuning)
    epsilon, order = tuned_epsilon(result.rdp_total, orders=result.orders,
                                   delta=result.delta, conversion=result.conversion,
                                   distribution=distribution)
    return TuningPart(distribution=distribution.name, text=distribution.text,
                      mean=distribution.mean, shape=distribution.shape_value,
                      epsilon_single=result.epsilon, epsilon_tuned=epsilon, order=order)
