"""``--rounds``' schedule: each round a mechanism over some rows of the vote file (with
Interactive-GNMax's student rows), built from a rounds file or given ``Round`` objects; the
composed run's mechanism (``RoundsMechanism``, for reporting). ``analysis.rounds`` runs them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..inputs import load_rounds
from ..inputs.rounds import round_inputs
from .aggregators import MECHANISMS, mechanism_for
from .protocol import Mechanism


@dataclass(frozen=True)
class Round:
    """One round of a multi-round run: which file rows, which mechanism, which student."""

    rows: np.ndarray
    mechanism: Mechanism
    student: np.ndarray | None = None


@dataclass(frozen=True)
class RoundsMechanism:
    """The mechanism of a composed multi-round run (for reporting)."""

    mechanisms: tuple[Mechanism, ...]
    name: str = field(default="rounds", init=False)

    @property
    def params(self) -> dict:
        return {"rounds": len(self.mechanisms)}


def rounds_of(rounds, vote_set, defaults: dict, parameter_names) -> list[Round]:
    """``--rounds``: a file's rounds (or the API's list of mappings, checked as a file's,
    or of ``Round`` objects), each with its rows and mechanism (the call's ``defaults`` for
    parameters it does not set)."""
    if isinstance(rounds, (list, tuple)) and rounds and all(
            isinstance(spec, Round) for spec in rounds):
        return list(rounds)
    found = []
    where = os.fspath(rounds) if isinstance(rounds, str | os.PathLike) else "--rounds"
    for number, spec in enumerate(load_rounds(rounds)):
        try:
            found.append(_round(spec, vote_set, defaults, parameter_names))
        except InputError:  # says which round already
            raise
        except ValueError as error:  # a parameter the mechanism refuses
            raise InputError(f"{where}: round {number}: {error}") from None
    return found


def _round(spec: dict, vote_set, defaults: dict, parameter_names) -> Round:
    name = spec["mechanism"]
    if name not in MECHANISMS or name == "svt":
        raise InputError(f"--rounds: mechanism {name!r} is not one of "
                         f"{', '.join(m for m in MECHANISMS if m != 'svt')}")
    rows, student = round_inputs(spec, vote_set)
    parameters = {**defaults, **{key: value for key, value in spec.items()
                                 if key in parameter_names}}
    return Round(rows=rows, mechanism=mechanism_for(name, vote_set, parameters), student=student)
