"""What every aggregator is and returns: the ``Mechanism`` protocol and its
``pate_cli.decisions.Decisions``.

math:mechanisms and math:costs. The analysis never asks which class a mechanism is: it
reads these facts, and ``analysis.steps`` maps the name to its cost steps (math:costs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from ..decisions import Decisions
from ..errors import OptionError

if TYPE_CHECKING:
    from .noise import NoiseSource

# The label of a released teacher answer whose noise was not drawn (``labels=False``):
# a valid class number, so counts of released labels stay right; never shown or scored.
LABEL_NOT_DRAWN = 0


@runtime_checkable
class Mechanism(Protocol):
    """An aggregator as the analysis sees it.

    ``uses_student``: its selection runs on ``n - M p`` and its replay needs the
    student's probabilities. ``selects``: it has a noisy-threshold selection step
    (``selection_counts`` gives the count that step compares with T). ``answer_noise``:
    ``"gaussian"``, ``"laplace"`` or None (SVT releases the plain plurality).
    ``sequential``: its decisions depend on the whole sequence (SVT's rounds), so it is
    replayed once over every analysed query (``start`` 0) by its own analysis path.
    """

    name: str
    uses_student: bool
    selects: bool
    answer_noise: str | None
    sequential: bool

    @property
    def params(self) -> dict: ...

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        """The seeded run's decisions. ``labels=False``: the answer noise is not drawn
        and every released teacher label is ``LABEL_NOT_DRAWN`` (for runs that only
        count labels; the decisions, and any student label, are unchanged)."""
        ...


def checked_mechanism(mechanism) -> None:
    """``OptionError`` unless ``mechanism`` is a mechanism object (not a name)."""
    if isinstance(mechanism, str):
        raise OptionError(f"analyze_votes takes a mechanism object, not the name "
                          f"{mechanism!r}: use pate_cli.analyze(votes, {mechanism!r}) or "
                          f"pate_cli.build_mechanism({mechanism!r}, teachers=M)")
    if not all(hasattr(mechanism, name) for name in ("uses_student", "sequential", "name")):
        raise OptionError(f"analyze_votes takes a mechanism object (GNMax, LNMax, "
                          f"ConfidentGNMax...), got {type(mechanism).__name__}")
