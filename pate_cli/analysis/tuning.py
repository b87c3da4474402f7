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


def tuning_distribution(tuning) -> TuningDistribution:
    """A distribution from ``--tuning`` text (or one already built); ``OptionError``."""
    if isinstance(tuning, TuningDistribution):
        return tuning
    try:
        return parse_tuning(tuning)
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
