"""Option rules checked before any work: what a kind of input or run cannot combine with.

Each rule raises ``OptionError`` with one line naming the option and why (the command
line and the API share them).
"""

from __future__ import annotations

from ..errors import OptionError

# --multilabel's runs: GNMax or Confident over whole queries, none of these
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


def check_multilabel_options(**given) -> None:
    """One line for the first option a multi-label run does not take."""
    for key, option in _NOT_WITH_MULTILABEL:
        value = given.get(key)
        if value is not None and value != _UNSET.get(key, None):
            raise OptionError(f"--multilabel does not combine with {option} (multi-label "
                              "runs take GNMax or Confident over whole queries)")


def check_sparse_run(mechanism, *, individualized) -> None:
    """One line for what sparse (token) votes cannot run (MATH.md s.14)."""
    name = mechanism.lower() if isinstance(mechanism, str) else mechanism.name
    if name == "interactive":
        raise OptionError("-m interactive needs the student's probabilities over the whole "
                          "vocabulary (a dense queries x classes array): not available for "
                          "sparse votes")
    if individualized is not None:
        raise OptionError("--individualized needs each teacher's prediction (--predictions); "
                          "sparse votes hold only the counts")


def check_halt_at(halt_at: str, *, budget, vote_set, query_indices, rounds, individualized,
                   name: str) -> None:
    """One line for a ``--halt-at`` that cannot apply."""
    if halt_at not in ("query", "output"):
        raise OptionError(f"--halt-at must be query or output, got {halt_at!r}")
    if halt_at == "query":
        return
    if budget is None:
        raise OptionError("--halt-at output needs --budget EPS")
    if vote_set.outputs is None:
        raise OptionError("--halt-at output needs an output grouping (an 'output' array in "
                          "the sparse archive, or an output column in the long table)")
    if query_indices is not None or rounds is not None or individualized is not None \
            or name in ("svt", "interactive"):
        raise OptionError("--halt-at output applies to single lnmax, gnmax and confident runs "
                          "in file order (not --query-indices, --rounds, --individualized, "
                          "svt or interactive)")
