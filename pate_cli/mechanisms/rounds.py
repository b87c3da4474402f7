"""``--rounds``' schedule: each round a mechanism over some vote-file rows (with
Interactive-GNMax's student rows), from a rounds file or ``Round`` objects; the composed run's
mechanism (``RoundsMechanism``, for reporting). ``analysis.rounds`` runs them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, OptionError
from ..inputs import load_rounds
from ..inputs.rounds import round_inputs
from .aggregators import MECHANISMS, TAKEN_BY, flag_of, mechanism_for, not_taken
from .protocol import Mechanism


@dataclass(frozen=True)
class Round:
    """One round of a multi-round run: file rows, mechanism, student (and its file, for
    provenance)."""

    rows: np.ndarray
    mechanism: Mechanism
    student: np.ndarray | None = None
    student_file: str | None = None


@dataclass(frozen=True)
class RoundsMechanism:
    """The mechanism of a composed multi-round run (for reporting)."""

    mechanisms: tuple[Mechanism, ...]
    name: str = field(default="rounds", init=False)

    @property
    def params(self) -> dict:
        return {"rounds": len(self.mechanisms)}


def rounds_of(rounds, vote_set, defaults: dict, parameter_names) -> list[Round]:
    """``--rounds``: a file's rounds (or the API's mappings or ``Round`` objects), unset
    parameters from ``defaults``. ``InputError`` naming the round: a mechanism that cannot run
    in a round, or a parameter it does not take; ``OptionError``: a ``defaults`` parameter no
    round takes."""
    given = sorted(key for key, value in defaults.items()
                   if value is not None and not (key == "screening" and value == "exact"))
    if isinstance(rounds, (list, tuple)) and rounds and all(
            isinstance(spec, Round) for spec in rounds):
        if given:  # a Round's mechanism carries its own
            raise TypeError(f"parameters {given} apply to rounds given as mappings or a file, "
                            "not Round objects")
        return list(rounds)
    found = []
    where = os.fspath(rounds) if isinstance(rounds, str | os.PathLike) else "--rounds"
    specs = load_rounds(rounds)
    for number, spec in enumerate(specs):
        _check_round(where, number, spec)
    for key in given:  # a command-line parameter is each round's default: one must take it
        refusal = not_taken(key, *(spec["mechanism"] for spec in specs))
        if refusal:
            raise OptionError(f"{refusal} (the mechanisms of the rounds of {where})")
        if key in TAKEN_BY and all(spec.get(key) not in (None, "") for spec in specs
                                   if spec["mechanism"] in TAKEN_BY[key]):
            raise OptionError(f"{flag_of(key)} is set by every round of {where} that takes "
                              "it: the command's value would be ignored")
    for number, spec in enumerate(specs):
        try:
            found.append(_round(spec, vote_set, defaults, parameter_names))
        except InputError:  # says which round already
            raise
        except ValueError as error:  # a parameter the mechanism refuses
            raise InputError(f"{where}: round {number}: {error}") from None
    return found


def _check_round(where: str, number: int, spec: dict) -> None:
    """A round's mechanism can run in a round and takes every parameter the round sets."""
    name = spec["mechanism"]
    if name not in MECHANISMS or name == "svt":
        raise InputError(f"--rounds: mechanism {name!r} is not one of "
                         f"{', '.join(m for m in MECHANISMS if m != 'svt')}")
    for key in spec:
        if key in TAKEN_BY and name not in TAKEN_BY[key]:
            raise InputError(f"{where}: round {number}: {key} applies to "
                             f"{', '.join(TAKEN_BY[key])} rounds, not to a {name} round")


def _round(spec: dict, vote_set, defaults: dict, parameter_names) -> Round:
    name = spec["mechanism"]
    rows, student = round_inputs(spec, vote_set)
    parameters = {**defaults, **{key: value for key, value in spec.items()
                                 if key in parameter_names}}
    return Round(rows=rows, mechanism=mechanism_for(name, vote_set, parameters), student=student,
                 student_file=os.fspath(spec["student"]) if student is not None
                 and isinstance(spec["student"], str | os.PathLike) else None)
