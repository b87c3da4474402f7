"""``calibrate``: the noise that meets a target epsilon (``pate-calibrate``, cli:pate-calibrate).

Solved for: ``gnmax`` ``sigma``, ``lnmax`` the Laplace scale, ``confident`` ``sigma`` with
``T``, ``sigma1`` as given (``scale_all``: one factor on all three), ``exponential`` and
``confident-exponential`` ``eta`` (math:exponential), searched as ``1 / eta``. Each candidate
is an ``analyze`` run (``data-independent`` or ``expected`` accounting).

From the default noise, double or halve until epsilon(low) > E >= epsilon(high) within
``[M / 1000, 1000 M]`` (factors ``[1e-3, 1e3]``), then bisect in log scale until ``high / low
<= 1 + tolerance`` (at most ``max_steps`` analyses). Values are snapped to 6 significant
digits, so ``pate-analyze`` reproduces the answer bit for bit. The answer is the smallest noise
analysed with epsilon <= E: never above E. A non-monotone pair is a note; no noise in range
meeting E an ``InputError``; the range's smallest meeting it, a ``Warning:``.
Size: one concept, the search: its keywords, the search, its answer (command and JSON).
"""

from __future__ import annotations

import math
import os
import shlex
import warnings
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .._version import __version__
from ..analysis import api
from ..analysis.added_figures import any_run_bound, published_epsilon
from ..analysis.result import AnalysisResult, InputFile
from ..analysis.run_spec import LAYOUT_ALONE, RunSpec, check_options
from ..errors import InputError, OptionError, PateWarning
from ..inputs.long_table import column_map
from ..inputs.readers import recorded_sha256
from ..inputs.votes import ReadSpec
from ..mechanisms.aggregators import DEFAULT_FRACTIONS
from ..mechanisms.exponential import DEFAULT_ETA_TIMES_M
from ..orders import orders_text
from ..outputs.summary_json import (
    epsilon_method,
    epsilon_rdp,
    plain_number,
    risk_dict,
    sampling_summary,
)
from ..rounding import ceil_text
from .calibration_target import CalibrationTarget

CALIBRATED = ("gnmax", "lnmax", "confident", "exponential", "confident-exponential")
# Per mechanism: the parameter solved for, and the parameters it takes.
SOLVED = {"gnmax": ("sigma", ("sigma",)), "lnmax": ("laplace_scale", ("laplace_scale",)),
          "confident": ("sigma", ("threshold", "sigma_threshold", "sigma")),
          "exponential": ("eta", ("eta",)),
          "confident-exponential": ("eta", ("threshold", "sigma_threshold", "eta"))}
# Mechanisms whose solved parameter is an inverse noise (eta): searched as 1 / eta.
INVERSE = ("exponential", "confident-exponential")
ACCOUNTINGS = ("data-independent", "expected")
RANGE = (1e-3, 1e3)
DEFAULT_TOLERANCE = 1e-3
MAX_STEPS = 80
EXPECTED_WARNING = ("--accounting expected calibrates on the private votes' data-dependent "
                    "epsilon: the chosen noise is itself a data-dependent release, not "
                    "covered by the epsilon reported (see "
"docs/explanation/tuning.md)")


@dataclass(frozen=True)
class Calibration:
    """What ``calibrate`` found: ``parameter`` the solved name (``sigma``, ``laplace_scale``,
    ``eta``, ``scale`` with ``scale_all``), its ``value``, the mechanism's ``params`` and the
    ``result`` there; ``above``: ``(value, figure)`` of the nearest value analysed missing
    the target (None if none); ``answered_expected``: the sum of ``pr_answered``."""

    mechanism: str
    parameter: str
    value: float
    params: dict
    target: CalibrationTarget
    result: AnalysisResult
    above: tuple[float, float] | None
    answered_expected: float
    analyses: int
    tolerance: float
    scale_all: bool
    step: float | None = None  # the final bracket's high / low - 1 (None: no bracket)
    options: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def epsilon(self) -> float:
        return published_epsilon(self.result)

    def command(self, votes_text: str | None = "VOTES") -> str:
        """The ``pate-analyze`` command reproducing the answer (``votes_text``: VOTES as typed;
        None with ``--predictions``)."""
        words = ["pate-analyze", *([] if votes_text is None else [votes_text]),
                 "-m", self.mechanism]
        for key in ("sigma", "threshold", "sigma_threshold", "laplace_scale", "eta"):
            if key in self.params:
                words += ["--" + key.replace("_", "-"), _text(self.params[key])]
        result = self.result
        words += ["--accounting", result.accounting, "--delta", _text(result.delta)]
        for key in ("predictions", "predictions_layout", "classes", "columns", "labels",
                    "teachers", "index_col", "queries", "orders", "order", "sampling",
                    "vote_change", "sampling_steps"):
            if self.options.get(key) is not None:
                words += ["-n" if key == "queries" else "--" + key.replace("_", "-"),
                          _text(self.options[key])]
        if result.conversion != "classic":
            words += ["--conversion", result.conversion]
        if self.options.get("screening") == "gaussian":
            words += ["--screening", "gaussian"]
        if result.seed:
            words += ["--seed", str(result.seed)]
        return shlex.join(words)

    def to_dict(self, votes_text: str | None = "VOTES") -> dict:
        """``pate-calibrate -f json``'s JSON (cli:pate-calibrate): provenance, answer, figures
        (``votes_text`` as in ``command``)."""
        result, bound = self.result, any_run_bound(self.result)
        source = result.source
        params = result.mechanism.params  # the threshold step's curve (math:screening)
        return {
            "tool": "pate-calibrate",
            "version": __version__,
            "input": {"path": getattr(source, "path", None),
                      "sha256": getattr(source, "sha256", None),
                      "queries": int(getattr(source, "queries", result.queries)),
                      "classes": result.classes, "teachers": plain_number(result.teachers)},
            "mechanism": self.mechanism,
            "target_epsilon": (self.target.value if self.target.quantity == "epsilon"
                               else None),
            "target": self.target.as_dict(),
            "reached": self.target.figure(result),  # the target's figure at the answer
            "solved": {"parameter": self.parameter, "value": plain_number(self.value),
                       "scale_all": self.scale_all},
            "params": {**{key: plain_number(value) for key, value in self.params.items()},
                       **({"screening": params["screening"]} if "screening" in params
                          else {})},
            "accounting": result.accounting,
            "conversion": result.conversion,
            "delta": result.delta,
            "seed": result.seed,
            "queries": result.queries,
            "epsilon": self.epsilon,
            # which accountant gave ``epsilon`` (cli:json); ``order`` is ``epsilon_rdp``'s
            "epsilon_method": epsilon_method(result) if bound is None else bound["method"],
            # the bound for any run, every query answered (added_figures.any_run_bound)
            "every_query_answered": bound is not None,
            "sampling": sampling_summary(result.mechanism),
            "order": plain_number(result.order if bound is None else bound["order"]),
            "epsilon_rdp": epsilon_rdp(result) if bound is None else bound["rdp"],
            "above": (None if self.above is None else
                      {"value": plain_number(self.above[0]),
                       "epsilon": (self.above[1] if self.target.quantity == "epsilon"
                                   else None),
                       "figure": self.above[1]}),
            "tolerance": self.tolerance,
            "relative_step": self.step,
            "analyses": self.analyses,
            "answered": (result.answered_total if result.accounting == "expected"
                         else int(round(result.answered_total))),
            "answered_expected": self.answered_expected,
            "label_accuracy": result.label_accuracy,
            "risk": risk_dict(result.risk),
            "command": self.command(votes_text),
            "warnings": list(self.warnings),
            "files": {entry.option: {"path": entry.path, "sha256": entry.sha256}
                      for entry in result.input_files} or None,
        }


def read_files(reading: dict) -> tuple[InputFile, ...]:
    """The ``--labels`` path read with the votes and its sha256 (the summary's ``files``)."""
    path = reading.get("labels")
    if not isinstance(path, str | os.PathLike) or os.fspath(path) == "-":
        return ()
    return (InputFile(option="labels", path=os.fspath(path), sha256=recorded_sha256(path)),)


@dataclass(frozen=True, kw_only=True)
class CalibrationSpec:
    """:func:`calibrate`'s own keywords (see the module); the others are ``analyze``'s."""

    target_epsilon: float | None = None
    target_tpr: float | None = None
    at_fpr: float | None = None
    target_advantage: float | None = None
    accounting: str = "data-independent"
    scale_all: bool = False
    tolerance: float = DEFAULT_TOLERANCE
    max_steps: int = MAX_STEPS
    sigma: float | None = None
    threshold: float | None = None
    sigma_threshold: float | None = None
    laplace_scale: float | None = None
    eta: float | None = None


def calibrate(votes=None, mechanism: str = "confident", **options: Any) -> Calibration:
    """Solve for the noise of ``mechanism`` meeting a target (see the module): an epsilon,
    or an attack risk (``sweep.calibration_target``).

    Args:
        votes: as for ``analyze``.
        mechanism: as for ``analyze``, a mechanism of ``CALIBRATED``.
        **options: :class:`CalibrationSpec`'s fields (one target: ``target_epsilon``,
            ``target_tpr`` with ``at_fpr``, or ``target_advantage``), and
            ``analyze``'s keywords shared by every candidate (``labels``, ``queries``...).

    Returns:
        The :class:`Calibration`: the smallest noise analysed that meets the target.

    Raises:
        OptionError: for a refused setting.
        InputError: for an unreachable target (none in the range, or within ``max_steps``).
    """
    spec = CalibrationSpec(**{item.name: options.pop(item.name)
                              for item in fields(CalibrationSpec) if item.name in options})
    accounting, scale_all = spec.accounting, spec.scale_all
    target = CalibrationTarget.of(epsilon=spec.target_epsilon, tpr=spec.target_tpr,
                                  at_fpr=spec.at_fpr, advantage=spec.target_advantage)
    mechanism = mechanism.lower()
    if mechanism not in CALIBRATED:
        raise OptionError(f"pate-calibrate solves -m {', '.join(CALIBRATED)}, "
                          f"not {mechanism!r}")
    if accounting not in ACCOUNTINGS:
        raise OptionError(f"--accounting must be one of {', '.join(ACCOUNTINGS)} "
                          f"(a replay's epsilon depends on its noise draw), got {accounting!r}")
    if not 0 < spec.tolerance < 1:
        raise OptionError(f"--tolerance must lie in (0, 1), got {spec.tolerance!r}")
    if (isinstance(spec.max_steps, bool) or not isinstance(spec.max_steps, int)
            or spec.max_steps < 1):
        raise OptionError(f"max_steps must be a whole number of at least 1, got "
                          f"{spec.max_steps!r}")
    given = {key: getattr(spec, key)
             for key in ("sigma", "threshold", "sigma_threshold", "laplace_scale", "eta")}
    # before any work: pate-analyze's option rules
    check_options(RunSpec.of(mechanism, accounting=accounting, **{
        key: value for key, value in {**given, **options}.items() if value is not None
        and key in ("sampling", "vote_change", "sampling_steps", "screening", *given)}))
    if scale_all and mechanism != "confident":
        raise OptionError("--scale-all applies to -m confident (T, sigma1 and sigma2)")
    if scale_all and spec.threshold is not None and not spec.threshold > 0:
        raise OptionError(f"--scale-all scales T with the noise: give a positive -T, got "
                          f"{spec.threshold:g}")
    solved, used = SOLVED[mechanism]
    if given[solved] is not None and not scale_all:
        raise OptionError(f"--{solved.replace('_', '-')} is what pate-calibrate solves for "
                          "(give it with --scale-all to scale from it)")
    shown_options = {key: options.get(key) for key in
                      ("predictions", "predictions_layout", "classes", "columns", "labels",
                       "teachers", "index_col", "queries", "orders", "order", "screening",
                       "sampling", "vote_change", "sampling_steps")}
    if shown_options["predictions_layout"] == "queries-first":
        shown_options["predictions_layout"] = None  # the default: not in the command
    elif shown_options["predictions_layout"] and not shown_options["predictions"]:
        raise OptionError(LAYOUT_ALONE)  # as pate-analyze refuses it
    shown_options["columns"] = str(column_map(shown_options["columns"])) or None
    reading = {item.name: options.pop(item.name) for item in fields(ReadSpec)
               if item.name != "queries" and item.name in options}  # queries: analyze's too
    vote_set = api.read_votes(votes, **reading, queries=options.get("queries"))
    teachers = vote_set.teachers
    base = {key: (_default(key, teachers) if given[key] is None else given[key])
            for key in used}
    inverse = mechanism in INVERSE  # the search's x is 1 / eta (see the module)
    notes: list[str] = []
    if accounting == "expected":
        notes.append(EXPECTED_WARNING)
        warnings.warn(EXPECTED_WARNING, PateWarning, stacklevel=2)

    def parameters(x: float) -> dict:
        if scale_all:
            return {key: _digits(value * x, 12) for key, value in base.items()}
        return {**base, solved: _snap(1.0 / x) if inverse else x}

    def run(x: float, how: str = accounting) -> AnalysisResult:
        # the expected answered count does not depend on how voters were sampled
        chosen = options if how == accounting else {
            key: value for key, value in options.items()
            if key not in ("sampling", "vote_change", "sampling_steps")}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return api.analyze(vote_set, mechanism, accounting=how, **chosen,
                               **parameters(x))

    seen: dict[float, float] = {}

    def meets(x: float) -> bool:
        if x not in seen:
            if len(seen) >= spec.max_steps:
                raise InputError(f"no answer within {spec.max_steps} analyses (raise "
                                  "--tolerance)")
            seen[x] = target.figure(run(x))
        return seen[x] <= target.value

    unit = 1.0 if scale_all else teachers
    smallest, largest = _snap(RANGE[0] * unit), _snap(RANGE[1] * unit)
    name = "scale" if scale_all else solved
    first = 1.0 / base[solved] if inverse else base[solved]
    start = _snap(min(max(1.0 if scale_all else first, smallest), largest))
    low, high = None, None
    if meets(start):
        high = start
        while low is None and high > smallest:
            x = max(_snap(high / 2.0), smallest)
            if meets(x):
                high = x
            else:
                low = x
    else:
        low = start
        while high is None and low < largest:
            x = min(_snap(low * 2.0), largest)
            if meets(x):
                high = x
            else:
                low = x
        if high is None:
            reason = ("the threshold step alone may cost that much: give a larger "
                      "--sigma-threshold or -T" + ("" if inverse else ", or use --scale-all")
                      if mechanism in ("confident", "confident-exponential") and not scale_all
                      else "raise the target")
            bound, where = ("down to", _snap(1.0 / largest)) if inverse else ("up to", largest)
            raise InputError(f"no {_shown(name)} {bound} {where:g} meets {target.text()} "
                              f"(at {where:g}: {ceil_text(seen[largest])}; {reason})")
    if low is not None:
        while high / low > 1.0 + spec.tolerance:
            middle = _snap(math.sqrt(low * high))
            if not low < middle < high:
                break
            if meets(middle):
                high = middle
            else:
                low = middle
    if low is None:  # met at the range's edge: a noise below it is not searched
        edge, limit = ((_snap(1.0 / smallest), "largest") if inverse
                       else (smallest, "smallest"))
        notes.append(f"{target.text()} is met at the search's {limit} {_shown(name)}, "
                     f"{edge:g} ({'1 / ' if inverse else ''}{RANGE[0]:g}"
                     f"{'' if scale_all else ' M'}): a {'larger' if inverse else 'smaller'} "
                     "one may meet it too, the search does not go past it")
    # the bracket's relative width reached: above --tolerance where snapping stopped it
    step = None if low is None else high / low - 1.0
    if step is not None and step > spec.tolerance:
        notes.append(f"--tolerance {spec.tolerance:g} is below what the search can reach: "
                     "the values analysed have 6 significant digits, so the bracket "
                     f"stopped at a relative step of {step:.2g}")
    # Never above E: the smallest noise analysed whose epsilon meets E.
    answer = min(x for x, value in seen.items() if value <= target.value)
    shown = {(_snap(1.0 / x) if inverse else x): value for x, value in seen.items()}
    notes += _monotone_notes(shown, name, inverse=inverse,
                             quantity=target.name())
    above_values = [x for x, value in seen.items() if value > target.value and x < answer]
    above = None
    if above_values:
        x = max(above_values)
        above = (_snap(1.0 / x) if inverse else x, seen[x])
    notes += _threshold_notes(parameters(answer), teachers, scale_all=scale_all)
    result = run(answer)
    # the labels read here (the run's own files recorded by analyze), as pate-analyze's
    result = replace(result, input_files=(*read_files(reading), *result.input_files))
    expected = result if accounting == "expected" else run(answer, "expected")
    for note in notes[1 if accounting == "expected" else 0:] + list(result.warnings):
        warnings.warn(note, PateWarning, stacklevel=2)
    shown_options.update(delta=options.get("delta"), conversion=options.get("conversion"),
                         seed=options.get("seed"))
    return Calibration(
        mechanism=mechanism, parameter=name, value=_snap(1.0 / answer) if inverse else answer,
        params={key: float(value) for key, value in parameters(answer).items()},
        target=target, result=result, above=above,
        answered_expected=float(expected.answered_total), analyses=len(seen),
        tolerance=spec.tolerance, step=step, scale_all=scale_all,
        options={key: _orders_text(value) if key == "orders" else value
                 for key, value in shown_options.items()
                 if isinstance(value, (str, int, float)) or key == "orders"},
        warnings=tuple(notes) + tuple(result.warnings))


def _threshold_notes(params: dict, teachers: float, *, scale_all: bool) -> list[str]:
    """A note when T (found with ``scale_all``, or given) is above M: no plurality reaches it,
    only the selection noise answers; the advice names the options given."""
    threshold = params.get("threshold")
    if threshold is None or threshold <= teachers:
        return []
    advice = ("give -T (at most M) and let pate-calibrate solve sigma instead of --scale-all"
              if scale_all else f"give a -T of at most M = {teachers:g}")
    return [f"the threshold T = {threshold:g} is above the {teachers:g} teachers: no "
            "query's plurality can reach it, so a query is answered only when the "
            f"selection noise lifts it there; {advice}"]


def _monotone_notes(seen: dict, name: str, *, inverse: bool = False,
                    quantity: str = "epsilon") -> list[str]:
    """A note where the target's figure (``quantity``) rose with the noise among the analysed
    values (``inverse``: values are eta, the figure should rise)."""
    points = sorted(seen.items(), reverse=inverse)
    for (x1, e1), (x2, e2) in zip(points, points[1:], strict=False):
        if e2 > e1 * (1 + 1e-12) + 1e-15:
            return [f"{quantity} is not monotone in the {_shown(name)} ({e1:.6g} at {x1:.6g}, "
                    f"{e2:.6g} at {x2:.6g}): the answer meets the target but a "
                    f"{'larger' if inverse else 'smaller'} value may too"]
    return []


def _default(key: str, teachers: float) -> float:
    """pate-analyze's default for ``key`` at ``teachers`` (``mechanisms.aggregators``)."""
    if key == "eta":
        return DEFAULT_ETA_TIMES_M / teachers
    return DEFAULT_FRACTIONS[key] * teachers


def _snap(x: float) -> float:
    """``x`` to 6 significant digits: every value analysed prints exactly (``%.6g``)."""
    return _digits(x, 6)


def _digits(x: float, digits: int) -> float:
    return float(f"{x:.{digits}g}")


def _shown(name: str) -> str:
    return {"sigma": "sigma", "laplace_scale": "Laplace scale",
            "scale": "scale factor"}.get(name, name)


def _text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:.12g}" if isinstance(value, float) else str(value)


def _orders_text(orders) -> str | None:
    """The reproducing command's ``--orders``: as typed, or a grid as ``a:b:s`` text
    (``orders_text``); None for math:conversion's grid."""
    if orders is None or isinstance(orders, str):
        return orders
    text = orders_text(tuple(float(x) for x in orders))
    return None if text == "default" else text
