"""One analysis's frozen setting (``RunSpec``: ``analyze``'s keywords, every ``pate-analyze``
option) and the option rules of the API and every command: ``RULES`` (combinations refused
before any input is read, with the value parsing checks, ``check_options``) and
``INPUT_RULES`` (what a kind of input cannot run, checked once the votes are read).
Size: one concept, the one rule table: the spec's fields and every command's option rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from ..accounting.individualized import VARIANTS
from ..accounting.multilabel import parse_variant
from ..accounting.q_bound import Q_BOUNDS
from ..errors import OptionError
from ..inputs.query_indices import checked_queries
from ..mechanisms.aggregators import MECHANISMS, TAKEN_BY, not_taken
from ..mechanisms.multilabel import VARIANT_MECHANISMS
from ..mechanisms.sampled import SAMPLED_MECHANISMS, Sampling, parse_sampling
from ..numerics import real_number
from ..orders import AUTO, default_orders, validate_orders
from ..vote_rows import is_sparse
from ..work_sizes import DEFAULT_CHUNK
from .attack_risk import GAUSSIAN

MECHANISM_PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "confidence",
                        "svt_scale", "svt_cutoff", "svt_threshold", "target_epsilon", "eta",
                        "screening")


@dataclass(frozen=True, eq=False)
class RunSpec:
    """One analysis's setting (``analyze``'s keywords; see its docstring for each)."""

    mechanism: Any = None  # None: not given, confident (--rounds names each round's)
    parameters: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    predictions: Any = None
    classes: int | None = None
    columns: Any = None
    labels: Any = None
    teachers: float | None = None
    queries: int | None = None
    student: Any = None
    query_indices: Any = None
    rounds: Any = None
    add_rdp: Any = None
    individualized: str | None = None
    groups: Any = None
    teacher_groups: Any = None
    precision: int | None = None  # None: the variant's default (2, budget, 2.0)
    weights: str | None = None
    power: float | None = None
    smooth_sensitivity: bool = False
    ss_every: int | None = None
    accounting: str = "replay"
    delta: float = 1e-5
    orders: Any = None
    order: float | None = None
    conversion: str = "classic"
    seed: int = 0
    budget: float | None = None
    chunk_size: int | None = DEFAULT_CHUNK
    index_col: int | None = None
    tuning: str | None = None
    decisions: Any = None
    progress: Callable[[int, int], object] | None = None
    q_bound: str = "union"
    per_query: bool | str = True
    workers: int | None = None
    executor: Any = None
    multilabel: str | None = None
    halt_at: str = "query"
    sampling: str | None = None
    vote_change: str | None = None
    sampling_steps: str | None = None
    predictions_layout: str = "queries-first"
    outputs: Any = None

    @classmethod
    def of(cls, mechanism: Any = None, **options: Any) -> RunSpec:
        """The spec of ``analyze(votes, mechanism, **options)``; ``TypeError`` for a
        keyword that is neither an option nor a mechanism parameter."""
        known = {item.name for item in fields(cls)} - {"mechanism", "parameters"}
        unknown = sorted(set(options) - known - set(MECHANISM_PARAMETERS))
        if unknown:
            raise TypeError(f"analyze() got unexpected keyword arguments: {', '.join(unknown)}")
        parameters = {name: options.pop(name) for name in MECHANISM_PARAMETERS
                      if name in options}
        spec = cls(mechanism=mechanism, parameters=MappingProxyType(parameters), **options)
        return replace(spec, queries=checked_queries(spec.queries))

    @property
    def aggregator(self) -> Any:
        """The mechanism the run uses: its name or object (``confident`` when not given)."""
        return "confident" if self.mechanism is None else self.mechanism

    @property
    def name(self) -> str:
        name = getattr(self.aggregator, "name", self.aggregator)
        if not isinstance(name, str):
            raise TypeError(f"mechanism must be a name or a mechanism, got {self.mechanism!r}")
        return name.lower()

    @property
    def auto_orders(self) -> bool:
        return (isinstance(self.orders, str) and self.orders.strip().lower() == AUTO
                and self.order is None)

    def grid(self) -> np.ndarray:
        """The orders the run evaluates: ``order`` alone, the default grid, or ``orders``."""
        if self.order is not None:
            return np.array([float(self.order)])
        return default_orders() if self.orders is None else validate_orders(self.orders)

    def options(self) -> dict[str, Any]:
        """The keywords that give this spec back (``analyze(votes, **spec.options())``)."""
        given = {item.name: getattr(self, item.name) for item in fields(self)
                 if item.name != "parameters"}
        return {**given, **self.parameters}


@dataclass(frozen=True)
class Rule:
    """A refused combination: ``broken(spec)`` (or ``broken(spec, vote_set)``) and its message
    (a string, or a function of the spec naming a value)."""

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
    ("columns", "--columns"),
    ("teachers", "--teachers"), ("index_col", "--index-col"), ("sampling", "--sampling"),
    ("halt_at", "--halt-at output"), ("predictions_layout", "--predictions-layout teachers-first"),
    ("outputs", "--outputs"),
)
# --predictions-layout without --predictions (pate-calibrate reads its votes apart: the same)
LAYOUT_ALONE = "--predictions-layout applies to --predictions FILE (how that file is stored)"
# values that mean "not given"
_UNSET = {"smooth_sensitivity": False, "halt_at": "query", "predictions_layout": "queries-first",
          "screening": "exact"}


def _given(value, key: str) -> bool:  # arrays included
    return value is not None and not (key in _UNSET and value == _UNSET[key])


def _multilabel_rule(key: str, option: str) -> Rule:
    return Rule(lambda s: s.multilabel is not None and _given(getattr(s, key), key),
                f"--multilabel does not combine with {option} (multi-label runs take GNMax "
                "or Confident over whole queries)")


# The rules are tried in order: after the multilabel ones, a spec with --multilabel has none
# of _NOT_WITH_MULTILABEL's options, so only a rule reading others asks for _single.
def _variant(s: RunSpec) -> str:  # --multilabel's variant (OptionError for a bad one)
    return "binary" if s.multilabel is None else parse_variant(s.multilabel)[0]


def _single(s: RunSpec) -> bool:  # a run over single-label queries (not --multilabel)
    return s.multilabel is None


def _scheme(sampling) -> str:  # --sampling's scheme as given (a Sampling's, or the text's)
    return str(getattr(sampling, "scheme", sampling)).strip().lower().partition(":")[0]


def _one_run(s: RunSpec) -> bool:  # one run in file order: no rounds, no groups
    return s.rounds is None and s.individualized is None


def _parameter(s: RunSpec, key: str):  # a parameter given by name or carried by the object
    return s.parameters.get(key, getattr(s.aggregator, "params", {}).get(key))


_SELECTING = ("svt", "interactive")
# the sampled mechanisms with two steps, which --sampling-steps independent samples apart
_TWO_STEPS_SAMPLED = tuple(name for name in SAMPLED_MECHANISMS if name in TAKEN_BY["threshold"])


def _parameter_rule(key: str) -> Rule:
    """A parameter given to a named mechanism not taking it (a mechanism object carries its
    own; ``--rounds`` gives them to each round's)."""
    return Rule(lambda s: isinstance(s.aggregator, str) and s.rounds is None
                and s.name in MECHANISMS and _given(s.parameters.get(key), key)
                and not_taken(key, s.name) is not None,
                lambda s: not_taken(key, s.name) or "")


# each individualized variant's own knob
_KNOBS = (("precision", "upsampling", "it rounds the budget ratios"),
          ("weights", "weighting", "the rule for the teachers' weights"),
          ("power", "vanishing", "the exponent of the participation"))


def _knob_rule(key: str, variant: str, what: str) -> Rule:
    return Rule(lambda s: getattr(s, key) is not None and s.individualized != variant,
                f"--{key} applies to --individualized {variant} ({what})")


RULES: tuple[Rule, ...] = (  # (the API's keywords' types first: the CLI's are its types)
    Rule(lambda s: not (real_number(s.delta, positive=True) and s.delta < 1),
         lambda s: f"--delta must be one number in (0, 1), got {s.delta!r}"),
    Rule(lambda s: s.budget is not None and not real_number(s.budget, positive=True),
         lambda s: f"--budget must be a positive number, got {s.budget!r}"),
    Rule(lambda s: s.workers is not None and not real_number(s.workers, whole=True,
                                                               positive=True),
         lambda s: f"--workers must be a whole number of at least 1, got {s.workers!r}"),
    Rule(lambda s: s.chunk_size is not None and not real_number(s.chunk_size, whole=True,
                                                                   positive=True),
         lambda s: f"chunk size must be a positive integer, got {s.chunk_size!r}"),
    Rule(lambda s: s.progress is not None and not callable(s.progress),
         lambda s: f"progress must be a function of (done, total), got {s.progress!r}"),
    *(_multilabel_rule(key, option) for key, option in _NOT_WITH_MULTILABEL),
    Rule(lambda s: s.order is not None and not real_number(s.order),
         lambda s: f"--order must be one number above 1, got {s.order!r}"),
    Rule(lambda s: not (real_number(s.seed, whole=True) and s.seed >= 0),
         lambda s: f"--seed must be a whole number of at least 0, got {s.seed!r}"),
    Rule(lambda s: not isinstance(s.per_query, bool | np.bool_)
         and not (isinstance(s.per_query, str) and s.per_query == "stream"),
         lambda s: f"per_query must be True, False or 'stream', got {s.per_query!r}"),
    Rule(lambda s: s.order is not None and s.orders is not None,
         "give --order or --orders, not both (--order A is the grid of the one order A)"),
    Rule(lambda s: s.multilabel is not None and s.auto_orders,
         "--orders auto does not combine with --multilabel"),
    Rule(lambda s: s.multilabel is not None and _variant(s) != "binary"
         and s.predictions is None,
         lambda s: f"--multilabel {_variant(s)} needs --predictions FILE (queries, teachers, "
                   "labels): the per-label counts do not give each teacher's label set"),
    Rule(lambda s: s.multilabel is not None and s.name not in VARIANT_MECHANISMS[_variant(s)],
         lambda s: f"--multilabel {_variant(s)} runs -m "
                   f"{' or -m '.join(VARIANT_MECHANISMS[_variant(s)])}, not {s.name}"),
    Rule(lambda s: s.multilabel is not None and _variant(s) != "binary"
         and s.q_bound != "union",
         lambda s: f"--q-bound {s.q_bound} applies to --multilabel binary only"),
    Rule(lambda s: s.ss_every is not None and not real_number(s.ss_every, whole=True,
                                                                 positive=True),
         lambda s: f"--ss-every must be a whole number of at least 1, got {s.ss_every!r}"),
    Rule(lambda s: s.ss_every is not None and not s.smooth_sensitivity,
         "--ss-history needs --smooth-sensitivity"),
    Rule(lambda s: s.decisions is not None and s.accounting == "expected",
         "--decisions gives the run's own decisions: it does not combine with --accounting "
         "expected (use replay or data-independent)"),
    Rule(lambda s: s.decisions is not None and not _one_run(s),
         "--decisions applies to single runs (not --rounds or --individualized)"),
    Rule(lambda s: s.decisions is not None and s.parameters.get("svt_cutoff") == "auto",
         "--svt-cutoff auto chooses the cut-off by replaying; with --decisions give the "
         "cut-off the run used"),
    Rule(lambda s: s.groups is not None and s.individualized is None,
         "--groups and --show-parameters need --individualized"),
    Rule(lambda s: s.individualized not in (None, *VARIANTS),
         lambda s: f"--individualized must be one of {', '.join(VARIANTS)}, got "
                   f"{s.individualized!r}"),
    *(_knob_rule(*knob) for knob in _KNOBS),
    Rule(lambda s: s.individualized is not None and s.groups is None,
         "--individualized needs --groups FILE"),
    Rule(lambda s: s.individualized not in (None, "upsampling") and (
        s.predictions is None or s.teacher_groups is None),
         lambda s: f"--individualized {s.individualized} needs --predictions FILE and "
                   "--teacher-groups FILE"),
    Rule(lambda s: _single(s) and s.teacher_groups is not None and s.predictions is None,
         "--teacher-groups needs --predictions FILE"),
    Rule(lambda s: s.teacher_groups is not None and s.individualized is None,
         "--teacher-groups applies to --individualized (with --groups)"),
    Rule(lambda s: s.predictions is None and _given(s.predictions_layout, "predictions_layout"),
         LAYOUT_ALONE),
    Rule(lambda s: s.q_bound not in Q_BOUNDS,
         lambda s: f"--q-bound must be one of {', '.join(Q_BOUNDS)}, got {s.q_bound!r}"),
    Rule(lambda s: s.q_bound != "union" and s.smooth_sensitivity,
         "--smooth-sensitivity needs --q-bound union: its local-sensitivity walks are proven "
         "for the union bound only"),
    Rule(lambda s: _single(s) and s.q_bound != "union"
         and s.name not in ("gnmax", "confident", "interactive"),
         lambda s: f"--q-bound {s.q_bound} applies to Gaussian answers (gnmax, confident, "
                   f"interactive), not -m {s.name}"),
    Rule(lambda s: s.q_bound != "union" and not _one_run(s),
         lambda s: f"--q-bound {s.q_bound} applies to single runs (not --rounds or "
                   "--individualized)"),
    Rule(lambda s: s.q_bound != "union" and s.accounting == "data-independent",
         lambda s: f"--q-bound {s.q_bound} bounds the data-dependent q of each answer: it "
                   "does not apply to --accounting data-independent"),
    Rule(lambda s: s.halt_at not in ("query", "output"),
         lambda s: f"--halt-at must be query or output, got {s.halt_at!r}"),
    Rule(lambda s: s.halt_at == "output" and s.budget is None,
         "--halt-at output needs --budget EPS"),
    Rule(lambda s: s.halt_at == "output" and (
        s.query_indices is not None or not _one_run(s) or s.name in _SELECTING),
         "--halt-at output applies to single runs in file order (not --query-indices, "
         "--rounds, --individualized, -m svt or -m interactive)"),
    Rule(lambda s: s.outputs is not None and s.query_indices is not None,
         "an output grouping needs the queries in file order: --outputs does not combine "
         "with --query-indices"),
    Rule(lambda s: s.rounds is not None and (
        s.budget is not None or s.query_indices is not None or s.queries is not None),
         "--rounds sets the rows of each round: it does not combine with --budget, "
         "--query-indices or --queries"),
    Rule(lambda s: s.rounds is not None and s.mechanism is not None,
         lambda s: f"--rounds names each round's mechanism (its 'mechanism' field): it does "
                   f"not combine with -m (got -m {s.name})"),
    Rule(lambda s: s.rounds is not None and s.student is not None,
         "--rounds names each interactive round's student (its 'student' field): it does "
         "not combine with --student"),
    Rule(lambda s: s.rounds is not None and s.individualized is not None,
         "--rounds does not combine with --individualized (each round would need its own "
         "group accounting)"),
    Rule(lambda s: _single(s) and s.rounds is None and s.name == "svt"
         and s.parameters.get("svt_cutoff") == "auto"
         and (s.parameters.get("target_epsilon") is None
              or s.parameters.get("svt_scale") is not None),
         "--svt-cutoff auto needs --target-epsilon (each cut-off's scale is solved for it), "
         "not --svt-scale"),
    *(_parameter_rule(key) for key in TAKEN_BY),
    Rule(lambda s: s.rounds is None and s.name != "interactive" and s.student is not None,
         "--student only applies to -m interactive"),
    Rule(lambda s: _single(s) and s.rounds is None and s.name == "interactive"
         and s.student is None,
         "-m interactive needs --student FILE"),
    Rule(lambda s: s.individualized is not None and (  # --rounds with it: refused above
        s.budget is not None or s.query_indices is not None),
         "--individualized has its own stopping rule: it does not combine with --budget or "
         "--query-indices"),
    Rule(lambda s: s.individualized is not None and s.add_rdp is not None,
         "--add-rdp does not combine with --individualized yet (each group would need the "
         "curve added to its own sum)"),
    Rule(lambda s: _single(s) and _one_run(s) and s.name == "svt"
         and _parameter(s, "svt_scale") is not None
         and _parameter(s, "target_epsilon") is not None,
         "give --svt-scale or --target-epsilon, not both"),
    Rule(lambda s: s.name == "svt" and s.budget is not None,  # --rounds, groups: above
         "--budget does not apply to -m svt (its cut-off bounds the cost)"),
    Rule(lambda s: _single(s) and _one_run(s) and s.name == "svt" and s.add_rdp is None
         and (s.orders is not None or s.order is not None),
         "--orders and --order do not apply to -m svt: its guarantee is converted over a "
         "continuous order, not the grid (with --add-rdp, whose curve is known on the grid "
         "only, they do)"),
    Rule(lambda s: s.smooth_sensitivity and not _one_run(s),
         "--smooth-sensitivity applies to single runs (not --rounds or --individualized)"),
    Rule(lambda s: s.smooth_sensitivity and s.tuning is not None,
         "--smooth-sensitivity sanitises one run's epsilon, not a --tuning search's (whose "
         "data-dependent cost would stay unsanitised): run them apart"),
    Rule(lambda s: _single(s) and s.tuning is not None and (
        s.name == "svt" or s.individualized is not None),
         "--tuning needs the run's whole cost as one RDP curve: it does not combine with "
         "-m svt or --individualized"),
    Rule(lambda s: s.sampling is None and s.vote_change not in (None, "move"),
         "--vote-change applies to sampled voters (--sampling)"),
    Rule(lambda s: s.sampling is None and s.sampling_steps not in (None, "shared"),
         "--sampling-steps applies to sampled voters (--sampling)"),
    Rule(lambda s: s.vote_change == "add" and _scheme(s.sampling) == "without-replacement",
         "--vote-change add applies to --sampling poisson: sampling without replacement "
         "replaces one unit by another, whose vote moves (the default, move)"),
    Rule(lambda s: _single(s) and s.sampling is not None
         and s.accounting != "data-independent",
         lambda s: f"--sampling needs --accounting data-independent, not {s.accounting}: "
                   "the data-dependent bounds (docs/explanation/data-dependent.md) are for "
                   "a fixed histogram and no valid published bound combines them with "
                   "amplification by subsampling (docs/explanation/sampling.md)"),
    Rule(lambda s: _single(s) and s.sampling is not None and s.name not in SAMPLED_MECHANISMS,
         lambda s: f"--sampling applies to -m {', '.join(SAMPLED_MECHANISMS)}, not "
                   f"-m {s.name}"),
    Rule(lambda s: _single(s) and s.sampling is not None
         and s.sampling_steps not in (None, "shared") and s.name not in _TWO_STEPS_SAMPLED,
         lambda s: f"--sampling-steps {s.sampling_steps} applies to -m "
                   f"{', '.join(_TWO_STEPS_SAMPLED)} (a threshold step and an answer step "
                   f"that each sample the voters), not -m {s.name}"),
    Rule(lambda s: _single(s) and s.sampling is not None and (
        not _one_run(s) or s.smooth_sensitivity),
         "--sampling applies to single runs (not --rounds, --individualized or "
         "--smooth-sensitivity)"),
    Rule(lambda s: _single(s) and _one_run(s) and s.smooth_sensitivity
         and s.name not in GAUSSIAN,  # as added_figures.release_of (math:smooth)
         lambda s: f"--smooth-sensitivity applies to {', '.join(GAUSSIAN)}, not "
                   f"{s.name}"),
    Rule(lambda s: s.smooth_sensitivity and s.accounting == "data-independent",
         "--smooth-sensitivity needs replay or expected accounting (a data-independent "
         "epsilon is already public)"),
)

INPUT_RULES: tuple[Rule, ...] = (
    Rule(lambda s, v: is_sparse(v.votes) and s.name == "interactive",
         "-m interactive needs the student's probabilities over the whole vocabulary (a "
         "dense queries x classes array): not available for sparse votes"),
    Rule(lambda s, v: v.outputs is not None and s.query_indices is not None,
         "an output grouping needs the queries in file order: it does not combine with "
         "--query-indices"),
    Rule(lambda s, v: s.halt_at == "output" and v.outputs is None,
         "--halt-at output needs an output grouping (--outputs FILE, an 'output' array in "
         "the sparse archive, or an output column in the long table)"),
    Rule(lambda s, v: _sample_size(s) < float(v.teachers),
         lambda s: f"--sampling {s.sampling}: a query's votes come from at most "
                   f"{_sample_size(s):g} sampled voters, each casting one vote, but M "
                   "(--teachers, else the most votes a row holds) is larger (raise the sample "
                   "size to at least M)"),
)


def _sample_size(s: RunSpec) -> float:
    """The sample size ``m`` of ``--sampling without-replacement:m/N`` (else inf)."""
    if s.sampling is None or s.multilabel is not None:
        return float("inf")
    sampling = (s.sampling if isinstance(s.sampling, Sampling) else
                parse_sampling(s.sampling, s.vote_change or "move", s.sampling_steps or "shared"))
    return float("inf") if sampling.size is None else float(sampling.size)


def check_options(spec: RunSpec) -> Sampling | None:
    """The parsed ``--sampling`` (with ``--vote-change``, ``--sampling-steps``) or None;
    ``OptionError`` for a bad value, then for the first broken ``RULES`` rule."""
    sampling = (None if spec.multilabel is not None or spec.sampling is None
                else parse_sampling(spec.sampling, spec.vote_change or "move",
                                    spec.sampling_steps or "shared"))
    for rule in RULES:
        if rule.broken(spec):
            raise OptionError(rule.text(spec))
    return sampling


def check_input(spec: RunSpec, vote_set) -> None:
    """The first broken rule of ``INPUT_RULES`` for the votes read, as an ``OptionError``."""
    for rule in INPUT_RULES:
        if rule.broken(spec, vote_set):
            raise OptionError(rule.text(spec))
