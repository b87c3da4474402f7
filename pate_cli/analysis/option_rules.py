"""The option rules: one table, checked against a ``RunSpec`` before any work.

``RULES`` holds what options cannot combine with (each rule a test of the spec and the
one line ``OptionError`` gives); ``INPUT_RULES`` what a kind of input cannot run (sparse
token votes, votes without outputs), checked as soon as the votes are read and before
anything is computed. ``analyze`` and so every command (which pass their options to it by
name) share them. Checks that parse a value (``--sampling``, ``--tuning``, the order grid)
live with the parser and run in the same step (``check_options``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..accounting.q_bound import Q_BOUNDS
from ..errors import OptionError
from ..sparse_rows import is_sparse
from .individualized import VARIANTS
from .run_spec import RunSpec
from .sampling import declared_sampling


@dataclass(frozen=True)
class Rule:
    """A refused combination: ``broken(spec)`` (or ``broken(spec, vote_set)``) and what
    the user reads (a string, or a function of the spec for a message that names a value)."""

    broken: Callable[..., bool]
    message: str | Callable[[RunSpec], str]

    def text(self, spec: RunSpec) -> str:
        return self.message if isinstance(self.message, str) else self.message(spec)


# --multilabel's runs take GNMax or Confident over whole queries, none of these
_NOT_WITH_MULTILABEL = (
    ("budget", "--budget"), ("rounds", "--rounds"), ("individualized", "--individualized"),
    ("groups", "--groups"), ("smooth_sensitivity", "--smooth-sensitivity"),
    ("decisions", "--decisions"), ("query_indices", "--query-indices"),
    ("student", "--student"), ("executor", "--scheduler"), ("classes", "--classes"),
    ("teachers", "--teachers"), ("index_col", "--index-col"), ("sampling", "--sampling"),
    ("halt_at", "--halt-at output"), ("predictions_layout", "--predictions-layout teachers-first"),
)
# values that mean "not given"
_UNSET = {"smooth_sensitivity": False, "halt_at": "query", "predictions_layout": "queries-first"}


def _given(value, key: str) -> bool:
    """An option given a value (arrays included), not left at its default."""
    return value is not None and not (key in _UNSET and value == _UNSET[key])


def _multilabel_rule(key: str, option: str) -> Rule:
    return Rule(lambda s: s.multilabel is not None and _given(getattr(s, key), key),
                f"--multilabel does not combine with {option} (multi-label runs take GNMax "
                "or Confident over whole queries)")


def _single(s: RunSpec) -> bool:
    """A run over single-label queries (not --multilabel)."""
    return s.multilabel is None


def _one_run(s: RunSpec) -> bool:
    """One run in file order: no rounds, no groups."""
    return s.rounds is None and s.individualized is None


_SELECTING = ("svt", "interactive")

RULES: tuple[Rule, ...] = (
    *(_multilabel_rule(key, option) for key, option in _NOT_WITH_MULTILABEL),
    Rule(lambda s: s.multilabel is not None and s.auto_orders,
         "--orders auto does not combine with --multilabel"),
    Rule(lambda s: s.ss_every is not None and not s.smooth_sensitivity,
         "--ss-history needs --smooth-sensitivity"),
    Rule(lambda s: _single(s) and s.decisions is not None and s.accounting == "expected",
         "--decisions gives the run's own decisions: it does not combine with --accounting "
         "expected (use replay or data-independent)"),
    Rule(lambda s: _single(s) and s.decisions is not None and not _one_run(s),
         "--decisions applies to single runs (not --rounds or --individualized)"),
    Rule(lambda s: _single(s) and s.decisions is not None
         and s.parameter("svt_cutoff") == "auto",
         "--svt-cutoff auto chooses the cut-off by replaying; with --decisions give the "
         "cut-off the run used"),
    Rule(lambda s: _single(s) and s.groups is not None and s.individualized is None,
         "--groups and --show-parameters need --individualized"),
    Rule(lambda s: _single(s) and s.individualized not in (None, *VARIANTS),
         lambda s: f"--individualized must be one of {', '.join(VARIANTS)}, got "
                   f"{s.individualized!r}"),
    Rule(lambda s: _single(s) and s.individualized is not None and s.groups is None,
         "--individualized needs --groups FILE"),
    Rule(lambda s: _single(s) and s.individualized not in (None, "upsampling") and (
        s.predictions is None or s.teacher_groups is None),
         lambda s: f"--individualized {s.individualized} needs --predictions FILE and "
                   "--teacher-groups FILE"),
    Rule(lambda s: _single(s) and s.teacher_groups is not None and s.predictions is None,
         "--teacher-groups needs --predictions FILE"),
    Rule(lambda s: s.q_bound not in Q_BOUNDS,
         lambda s: f"--q-bound must be one of {', '.join(Q_BOUNDS)}, got {s.q_bound!r}"),
    Rule(lambda s: _single(s) and s.q_bound != "union" and s.smooth_sensitivity,
         "--smooth-sensitivity needs --q-bound union: its local-sensitivity walks are proven "
         "for the union bound only"),
    Rule(lambda s: _single(s) and s.q_bound != "union"
         and s.name not in ("gnmax", "confident", "interactive"),
         lambda s: f"--q-bound {s.q_bound} applies to Gaussian answers (gnmax, confident, "
                   f"interactive), not -m {s.name}"),
    Rule(lambda s: _single(s) and s.q_bound != "union" and not _one_run(s),
         lambda s: f"--q-bound {s.q_bound} applies to single runs (not --rounds or "
                   "--individualized)"),
    Rule(lambda s: s.halt_at not in ("query", "output"),
         lambda s: f"--halt-at must be query or output, got {s.halt_at!r}"),
    Rule(lambda s: _single(s) and s.halt_at == "output" and s.budget is None,
         "--halt-at output needs --budget EPS"),
    Rule(lambda s: _single(s) and s.halt_at == "output" and (
        s.query_indices is not None or not _one_run(s) or s.name in _SELECTING),
         "--halt-at output applies to single lnmax, gnmax and confident runs in file order "
         "(not --query-indices, --rounds, --individualized, svt or interactive)"),
    Rule(lambda s: _single(s) and s.rounds is not None and (
        s.budget is not None or s.query_indices is not None or s.queries is not None),
         "--rounds sets the rows of each round: it does not combine with --budget, "
         "--query-indices or --queries"),
    Rule(lambda s: _single(s) and s.rounds is not None and s.individualized is not None,
         "--rounds does not combine with --individualized (each round would need its own "
         "group accounting)"),
    Rule(lambda s: _single(s) and s.rounds is None and s.name == "svt"
         and s.parameter("svt_cutoff") == "auto" and (
             s.parameter("target_epsilon") is None or s.parameter("svt_scale") is not None),
         "--svt-cutoff auto needs --target-epsilon (each cut-off's scale is solved for it), "
         "not --svt-scale"),
    Rule(lambda s: _single(s) and s.rounds is None and s.name != "interactive"
         and s.student is not None,
         "--student only applies to -m interactive"),
    Rule(lambda s: _single(s) and s.rounds is None and s.name == "interactive"
         and s.student is None,
         "-m interactive needs --student FILE"),
    Rule(lambda s: _single(s) and s.rounds is None and s.individualized is not None and (
        s.budget is not None or s.query_indices is not None),
         "--individualized has its own stopping rule: it does not combine with --budget or "
         "--query-indices"),
    Rule(lambda s: _single(s) and s.rounds is None and s.individualized is not None
         and s.add_rdp is not None,
         "--add-rdp does not combine with --individualized yet (each group would need the "
         "curve added to its own sum)"),
    Rule(lambda s: _single(s) and _one_run(s) and s.name == "svt"
         and s.parameter("svt_scale") is not None
         and s.parameter("target_epsilon") is not None,
         "give --svt-scale or --target-epsilon, not both"),
    Rule(lambda s: _single(s) and _one_run(s) and s.name == "svt" and s.budget is not None,
         "--budget does not apply to -m svt (its cut-off bounds the cost)"),
    Rule(lambda s: _single(s) and s.smooth_sensitivity and not _one_run(s),
         "--smooth-sensitivity applies to single runs (not --rounds or --individualized)"),
    Rule(lambda s: _single(s) and s.tuning is not None and (
        s.name == "svt" or s.individualized is not None),
         "--tuning needs the run's whole cost as one RDP curve: it does not combine with "
         "-m svt or --individualized"),
)

INPUT_RULES: tuple[Rule, ...] = (
    Rule(lambda s, v: is_sparse(v.votes) and s.name == "interactive",
         "-m interactive needs the student's probabilities over the whole vocabulary (a "
         "dense queries x classes array): not available for sparse votes"),
    Rule(lambda s, v: s.halt_at == "output" and v.outputs is None,
         "--halt-at output needs an output grouping (an 'output' array in the sparse "
         "archive, or an output column in the long table)"),
)


def check_options(spec: RunSpec) -> Any:
    """The first broken rule of ``RULES`` as an ``OptionError``; then ``--sampling`` and
    ``--vote-change`` parsed and checked against the run (the parsed sampling, or None)."""
    for rule in RULES:
        if rule.broken(spec):
            raise OptionError(rule.text(spec))
    if spec.multilabel is not None:
        return None
    return declared_sampling(spec.sampling, spec.vote_change, spec.mechanism,
                             accounting=spec.accounting, rounds=spec.rounds,
                             individualized=spec.individualized,
                             smooth_sensitivity=spec.smooth_sensitivity)


def check_input(spec: RunSpec, vote_set) -> None:
    """The first broken rule of ``INPUT_RULES`` for the votes read, as an ``OptionError``."""
    for rule in INPUT_RULES:
        if rule.broken(spec, vote_set):
            raise OptionError(rule.text(spec))
