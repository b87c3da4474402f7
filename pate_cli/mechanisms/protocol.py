"""What every aggregator is and returns: the Mechanism protocol and its Decisions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Decisions:
    """What a replay output for a run of queries.

    ``answered``: bool ``(queries,)``, True where the teachers' data was used to answer
    (the answer step ran); ``labels``: int64 ``(queries,)``, -1 where nothing was output;
    ``outcome``: for Interactive-GNMax, ``OUTCOME_TEACHER``/``OUTCOME_STUDENT``/
    ``OUTCOME_ABSTAIN`` per query (None for the other aggregators).
    """

    answered: np.ndarray
    labels: np.ndarray
    outcome: np.ndarray | None = None


OUTCOME_ABSTAIN, OUTCOME_TEACHER, OUTCOME_STUDENT = 0, 1, 2
OUTCOME_NAMES = ("abstain", "teacher", "student")
