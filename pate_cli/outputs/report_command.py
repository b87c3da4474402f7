"""The ``pate-analyze`` command that recomputes a statement's numbers (its Reproduction
section), rebuilt from the JSON summary. Recorded options are given exactly (paths
shell-quoted); a file the summary does not record is a capitalised placeholder with a
sentence saying so, unless the run that wrote the report gave it (``given``).
"""

from __future__ import annotations

import shlex

import numpy as np

from ..numerics import whole_int
from ..orders import AUTO, default_orders, orders_text
from .report_statement import tuning_law

DEFAULT_ORDERS = default_orders()
SKIPPED_PARAMS = ("target_epsilon",)  # the solved svt_scale is recorded


def option_value(value) -> str:
    """A number as an option's value, exactly (``40``, ``0.1``, ``1e-05``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    value = whole_int(value)
    return str(value) if isinstance(value, int) else repr(value)


class _Command:
    """The words of the command and the sentences on its placeholders."""

    def __init__(self, given: dict | None, files: dict | None):
        self.words: list[str] = ["pate-analyze"]
        self.notes: list[str] = []
        self.given = given or {}
        self.files = files if isinstance(files, dict) else {}

    def add(self, *words) -> None:
        self.words += [str(word) for word in words]

    def file(self, option: str, key: str, placeholder: str, what: str) -> None:
        """``option PATH`` as the run gave it or the summary records it, else ``option
        PLACEHOLDER`` and a note."""
        path = self.given.get(key)
        if path is None and isinstance(self.files.get(key), dict):
            path = self.files[key].get("path")
        if isinstance(path, str | bytes) or hasattr(path, "__fspath__"):
            self.add(option, str(path))
        else:
            self.add(option, placeholder)
            self.notes.append(f"{placeholder}: {what} (the summary does not record its "
                              "path).")

    def recorded(self, option: str, entry, key: str, placeholder: str, what: str) -> None:
        """A file the summary records as ``{path, sha256}`` (``entry``; None: not used):
        ``option PATH``, or :meth:`file`'s where its path is not recorded."""
        if not isinstance(entry, dict):
            return
        if entry.get("path"):
            self.add(option, entry["path"])
        else:
            self.file(option, key, placeholder, what)

    def text(self) -> str:
        return shlex.join(self.words)


def command_line(summary: dict, given: dict | None = None) -> tuple[str, list[str]]:
    """A ``pate-analyze`` command that recomputes ``summary``'s figures, and the sentences
    on the files it names by a placeholder (see the module docstring)."""
    command = _Command(given, summary.get("files"))
    _input(command, summary)
    _mechanism(command, summary)
    _accounting(command, summary)
    _budget(command, summary)
    _groups(command, summary)
    return command.text(), command.notes


def _input(command: _Command, summary: dict) -> None:
    source = summary.get("input") or {}
    path = source.get("path")
    multilabel = summary.get("multilabel")
    variant = multilabel.get("variant") if isinstance(multilabel, dict) else None
    given = command.given
    read = summary.get("read") if isinstance(summary.get("read"), dict) else None
    if given.get("predictions") is not None:
        command.add("--predictions", given["predictions"])
    elif given.get("votes") is not None:
        command.add(given["votes"])
    elif path and (read.get("predictions") if read is not None else (
            variant in ("tau", "powerset")  # a summary without read: these read
            or summary.get("individualized") in ("weighting", "vanishing")  # predictions
            or (summary.get("individualized")  # --teacher-groups needs them
                and isinstance(command.files.get("teacher_groups"), dict)))):
        command.add("--predictions", path)
    elif path:
        command.add(path)
        if read is None:  # an older summary
            command.notes.append(f"The summary does not record whether {path} was read as "
                                 "VOTES or as --predictions FILE (nor --predictions-layout, "
                                 "--classes, --columns or --index-col): give it as in the "
                                 "run.")
    else:
        command.add("VOTES")
        command.notes.append("VOTES: the votes were given as an array or on stdin, not "
                             "as a file.")
    for key in ("predictions_layout", "classes", "columns", "index_col"):
        value = given.get(key, None if read is None else read.get(key))
        if value is not None and (key != "predictions_layout" or value != "queries-first"):
            option = "--" + key.replace("_", "-")
            command.add(option, _columns(value) if key == "columns" else option_value(value))
    if isinstance(multilabel, dict):
        tau = multilabel.get("tau")
        command.add("--multilabel", variant if tau is None else f"{variant}:{option_value(tau)}")
    elif source.get("teachers") is not None:
        command.add("--teachers", option_value(source["teachers"]))
    if summary.get("label_accuracy") is not None:
        command.file("--labels", "labels", "LABELS.npy", "the true labels the label "
                     "accuracy was measured against")
    if summary.get("query_indices"):
        command.file("--query-indices", "query_indices", "INDICES.npy",
                     "the rows analysed, in their order")
    if summary.get("outputs") and (given.get("votes") is None or given.get("outputs")):
        # (a run given its votes without --outputs read the ids from the votes file)
        command.file("--outputs", "outputs", "OUTPUTS.npy",
                     "each row's output (generated sequence) id; leave it out where the "
                     "votes file carries its own")
    budget = summary.get("budget") or {}
    halted = budget.get("halted_at", budget.get("stopped_at"))
    if (not summary.get("rounds") and halted is None
            and (summary["queries"] != source.get("queries") or summary.get("query_indices"))):
        command.add("-n", summary["queries"])  # a halted run's count is where it halted
    elif (not summary.get("rounds") and halted is not None and not summary.get("query_indices")
          and budget.get("requested") not in (None, source.get("queries"))):
        command.add("-n", budget["requested"])  # a halted run's request (older: unknown)


def _columns(value) -> str:
    """``--columns`` as given (a mapping of roles to column names, or its text)."""
    if isinstance(value, dict):
        return ",".join(f"{role}={name}" for role, name in value.items())
    return str(value)


def _mechanism(command: _Command, summary: dict) -> None:
    if summary.get("rounds"):
        command.file("--rounds", "rounds", "ROUNDS.csv", "the rounds file (each "
                     "round's rows, mechanism, parameters and student)")
        return
    command.add("-m", summary.get("mechanism"))
    for key, value in (summary.get("params") or {}).items():
        if value is not None and key not in SKIPPED_PARAMS:
            command.add(f"--{key.replace('_', '-')}", option_value(value))
    if summary.get("mechanism") == "interactive":
        command.file("--student", "student", "STUDENT.npy", "the student's "
                     "probabilities")
    sampling = summary.get("sampling")
    if isinstance(sampling, dict):
        scheme = sampling.get("scheme")
        command.add("--sampling", f"poisson:{option_value(sampling.get('rate'))}"
                    if scheme == "poisson" else
                    f"{scheme}:{option_value(sampling.get('size'))}/"
                    f"{option_value(sampling.get('population'))}")
        if scheme == "poisson" and sampling.get("vote_change") not in (None, "move"):
            command.add("--vote-change", sampling["vote_change"])
        if sampling.get("steps") not in (None, "shared"):
            command.add("--sampling-steps", sampling["steps"])


def _accounting(command: _Command, summary: dict) -> None:
    command.add("--accounting", summary.get("accounting"), "--delta",
                option_value(summary["delta"]), "--conversion", summary.get("conversion"),
                "--seed", summary.get("seed"))
    _orders(command, summary.get("orders"))
    if summary.get("q_bound") not in (None, "union"):
        command.add("--q-bound", summary["q_bound"])
    tuning = summary.get("tuning")
    if isinstance(tuning, dict) and tuning.get("distribution") is not None:
        command.add("--tuning", tuning_law(tuning, option_value))
    command.recorded("--add-rdp", summary.get("add_rdp"), "add_rdp", "RDP.csv",
                     "the RDP curve added")
    command.recorded("--decisions", summary.get("decisions"), "decisions", "DECISIONS.csv",
                     "the run's decisions")
    if summary.get("smooth_sensitivity"):
        command.add("--smooth-sensitivity")


def _orders(command: _Command, orders) -> None:
    """The grid: nothing for the default one, ``--order`` for one order, else as given."""
    if not isinstance(orders, dict):
        return
    count, low, high = orders.get("count"), orders.get("min"), orders.get("max")
    if (count, low, high) == (DEFAULT_ORDERS.size, DEFAULT_ORDERS[0], DEFAULT_ORDERS.max()):
        return
    if count == 1:
        command.add("--order", option_value(low))
        return
    given = command.given.get("orders")
    if isinstance(given, str) and given == AUTO:
        command.add("--orders", AUTO)
    elif given is not None and np.size(given) > 0:  # as orders_text writes a grid
        command.add("--orders", orders_text(tuple(float(order) for order in np.ravel(given))))
    else:
        command.add("--orders", "ORDERS")
        command.notes.append(f"ORDERS: the run's {count} Rényi orders, from {option_value(low)} "
                             f"to {option_value(high)} (the summary does not record the grid).")


def _budget(command: _Command, summary: dict) -> None:
    budget = summary.get("budget")
    if not isinstance(budget, dict):
        return
    command.add("--budget", option_value(budget.get("limit")))
    if budget.get("halt_at") == "output":
        command.add("--halt-at", "output")


def _groups(command: _Command, summary: dict) -> None:
    variant = summary.get("individualized")
    if not variant:
        return
    command.add("--individualized", variant)
    command.file("--groups", "groups", "GROUPS.csv", "the privacy groups and their "
                 "budgets")
    given = command.given
    recorded = command.files.get("teacher_groups")
    teacher_groups = given.get("teacher_groups") or (
        recorded.get("path") if isinstance(recorded, dict) else None)
    if teacher_groups is not None:
        command.add("--teacher-groups", teacher_groups)
    knob = {"upsampling": "precision", "weighting": "weights", "vanishing": "power"}
    key = knob.get(variant)
    rule = summary.get("individualized_rule") or {}
    value = given.get(key) if given.get(key) is not None else rule.get(key)  # (as --from)
    if key is not None and value is not None:
        command.add(f"--{key}", option_value(value))
    elif given.get("groups") is None:
        command.notes.append(f"Give {'' if teacher_groups else '--teacher-groups, '}"
                             "--precision, --weights or --power as in the run: the summary "
                             "does not record them.")
