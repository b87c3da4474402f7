"""What every aggregator is and returns: the ``Mechanism`` protocol and its ``Decisions``
(math:mechanisms). The analysis reads these facts, never the class; ``analysis.steps`` maps the
name to its cost steps (math:costs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from ..decisions import Decisions
from ..errors import OptionError

if TYPE_CHECKING:
    from .noise import NoiseSource

# A released label whose noise was not drawn (``labels=False``): a class, never shown.
LABEL_NOT_DRAWN = 0


@runtime_checkable
class Mechanism(Protocol):
    """An aggregator as the analysis sees it. ``uses_student``: selection on ``n - M p``;
    ``selects``: a noisy-threshold step (``selection_counts``: what it compares with T);
    ``answer_noise``: ``"gaussian"``, ``"laplace"`` or None (SVT's plain plurality);
    ``sequential``: decisions depend on the whole sequence (SVT): replayed once from 0."""

    name: str
    uses_student: bool
    selects: bool
    answer_noise: str | None
    sequential: bool

    @property
    def params(self) -> dict: ...

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        """The seeded run's decisions; ``labels=False``: no answer noise drawn, every released
        teacher label ``LABEL_NOT_DRAWN`` (decisions and student labels unchanged)."""
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
