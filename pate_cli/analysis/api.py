"""``analyze``: everything ``pate-analyze`` can do, with the same rules and messages.

The command line is parse -> ``analyze`` -> render -> write; a notebook calls ``analyze``
directly and can build no combination the command refuses. Inputs are paths (read by
``pate_cli.inputs``) or arrays. Notes about the result (an order at the edge of the grid,
an interpolated external RDP curve) are kept in ``result.warnings`` and issued as Python
warnings (``PateWarning``); the commands print each as one ``Warning:`` line.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..errors import InputError, OptionError, OrderGridWarning, PateWarning
from ..inputs import (
    PrivacyGroups,
    VoteSet,
    attach_labels,
    load_groups,
    load_predictions,
    load_query_indices,
    load_rdp_curve,
    load_student,
    load_teacher_groups,
    load_votes,
    votes_from_array,
)
from ..mechanisms import MECHANISMS, Mechanism, build_mechanism
from ..orders import AUTO, AUTO_ROUNDS, default_orders, extend_orders, validate_orders
from ..sparse_rows import is_sparse
from .bounds import check_q_bound, with_pld_figure
from .decisions import LabelDecisions, decisions_of, read_given_decisions
from .distributed import usable_executor
from .individualized import VARIANTS, GroupParameters, analyze_individualized, derive_parameters
from .multilabel import run_multilabel
from .option_rules import check_halt_at, check_multilabel_options, check_sparse_run
from .outputs import (
    check_outputs,
    halted_at_output,
    output_halt,
    outputs_summary,
)
from .per_query_stream import per_query_frames
from .result import AddedRdp, AnalysisResult
from .rounds import analyze_rounds, rounds_of
from .run import analyze_votes
from .sampling import SampledMechanism, declared_sampling, with_sampled_pld_figure
from .sanitization import sanitize_analysis
from .setting import DEFAULT_CHUNK, checked_queries, needs_integer_votes
from .tuning import tuning_distribution, tuning_part

MECHANISM_PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "confidence",
                        "svt_scale", "svt_cutoff", "svt_threshold", "target_epsilon", "eta",
                        "screening")


@dataclass(frozen=True)
class IndividualizedPlan:
    """What ``--individualized`` needs: each group's parameters, each teacher's group
    (with ``--teacher-groups``) and the raw predictions (with ``--predictions``)."""

    parameters: GroupParameters
    teacher_groups: np.ndarray | None
    predictions: np.ndarray | None


def read_votes(votes=None, *, predictions=None, classes: int | None = None, labels=None,
               teachers: float | None = None, index_col: int | None = None,
               queries: int | None = None,
               predictions_layout: str = "queries-first") -> VoteSet:
    """A ``VoteSet`` from a path, an array or a ``VoteSet`` (``votes``), or from a
    predictions file (``predictions``, stored ``predictions_layout``: ``queries-first``
    or ``teachers-first``); exactly one of the two.

    ``index_col`` drops that column of a CSV/TSV file (a pandas index); with ``queries``
    (the first N rows), ``labels`` may hold N labels instead of one per row."""
    if (votes is None) == (predictions is None):
        raise OptionError("give exactly one of VOTES or --predictions FILE")
    if classes is not None and predictions is None and not isinstance(votes, (str, os.PathLike)):
        raise OptionError("--classes only applies to --predictions and to long sparse tables "
                          "(query,class,count)")
    if predictions is not None:
        vote_set = load_predictions(predictions, classes=classes, labels=labels,
                                    index_col=index_col, queries=queries,
                                    layout=predictions_layout)
    elif isinstance(votes, VoteSet):
        vote_set = votes if labels is None else attach_labels(votes, labels, queries=queries,
                                                               index_col=index_col)
    elif not isinstance(votes, (str, os.PathLike)):  # an array, DataFrame or list of rows
        vote_set = votes_from_array(votes, teachers=teachers)
        if labels is not None:
            vote_set = attach_labels(vote_set, labels, queries=queries, index_col=index_col)
    else:
        vote_set = load_votes(votes, teachers=teachers, labels=labels, index_col=index_col,
                              queries=queries, classes=classes)
    if teachers is not None:
        vote_set = replace(vote_set, teachers=teachers)
    return vote_set


def individualized_plan(variant: str, vote_set: VoteSet, *, groups, teacher_groups=None,
                        predictions_given: bool = False, precision: int = 2,
                        weights: str = "budget", power: float = 2.0) -> IndividualizedPlan:
    """Group parameters of an individualized run (MATH.md s.9), checking the inputs."""
    if variant not in VARIANTS:
        raise OptionError(f"--individualized must be one of {', '.join(VARIANTS)}, "
                          f"got {variant!r}")
    if groups is None:
        raise OptionError("--individualized needs --groups FILE")
    privacy_groups = groups if isinstance(groups, PrivacyGroups) else load_groups(groups)
    if variant != "upsampling" and (not predictions_given or teacher_groups is None):
        raise OptionError(f"--individualized {variant} needs --predictions FILE and "
                          "--teacher-groups FILE")
    assigned, raw = None, None
    if teacher_groups is not None:
        if not predictions_given:
            raise OptionError("--teacher-groups needs --predictions FILE")
        raw = vote_set.predictions
        assigned = (np.asarray(teacher_groups) if isinstance(teacher_groups, np.ndarray)
                    else load_teacher_groups(teacher_groups, groups=privacy_groups,
                                             teachers=int(vote_set.teachers)))
    parameters = derive_parameters(privacy_groups, variant=variant, teacher_groups=assigned,
                                   precision=precision, weights=weights, power=power)
    return IndividualizedPlan(parameters, assigned, raw)


def analyze(votes=None, mechanism: str | Mechanism = "confident", *, predictions=None,
            classes: int | None = None, labels=None, teachers: float | None = None,
            queries: int | None = None, student=None, query_indices=None, rounds=None,
            add_rdp=None, individualized: str | None = None, groups=None,
            teacher_groups=None, precision: int = 2, weights: str = "budget",
            power: float = 2.0, smooth_sensitivity: bool = False,
            ss_every: int | None = None, accounting: str = "replay", delta: float = 1e-5,
            orders=None, order: float | None = None, conversion: str = "classic",
            seed: int = 0, budget: float | None = None, chunk_size: int | None = DEFAULT_CHUNK,
            index_col: int | None = None, tuning=None, decisions=None,
            progress: Callable[[int, int], object] | None = None, q_bound: str = "union",
            per_query: bool | str = True, workers: int | None = None, executor=None,
            multilabel: str | None = None, halt_at: str = "query",
            sampling=None, vote_change: str | None = None,
            predictions_layout: str = "queries-first",
            **parameters: Any) -> AnalysisResult:
    """Analyse votes as ``pate-analyze`` does; every option of the command is a keyword.

    ``votes`` is a path, a ``VoteSet`` or a ``(queries, K)`` array (or give
    ``predictions``). ``mechanism`` is a name (``lnmax``, ``gnmax``, ``confident``,
    ``interactive``, ``svt``) with parameters such as ``sigma=40`` or ``confidence=0.9``
    (unset ones default to the command's fractions of M), or a mechanism object.
    ``student``, ``query_indices``, ``rounds``, ``add_rdp``, ``groups`` and
    ``teacher_groups`` take paths or arrays; ``add_rdp`` as an array is one RDP value per
    order. ``index_col`` drops that column of a CSV/TSV ``votes``/``predictions`` file; with
    ``queries``, ``labels`` may hold one label per analysed row. ``smooth_sensitivity``
    adds the sanitised release (``ss_every`` queries between history checkpoints).
    ``tuning`` (``"poisson:20"``, ``"negbin:10,0.5"``...; MATH.md s.12) adds the cost of a
    random search whose every candidate costs at most this run (``result.tuning``).
    ``halt_at`` (``query`` or ``output``): with ``budget`` and an output grouping, halt
    before the first output whose tokens could exceed it (``analysis.outputs``).
    ``progress(done, total)`` is called after each chunk of queries of a single run
    (not for SVT-PATE, rounds or individualized runs); ``chunk_size`` (rows) defaults
    to a bound on rows x classes (``analysis.setting.chunk_rows``).
    ``orders="auto"`` starts from the paper's grid and extends it past an edge where the
    best order sits (``orders.extend_orders``), re-running the analysis.
    ``q_bound`` is the bound on GNMax's q: ``union`` (Prop. 7) or ``integral`` (MATH.md
    s.13, tighter and certified; Gaussian answers only, not with smooth sensitivity,
    ``rounds`` or ``individualized``). ``screening`` (``exact``, the default, or
    ``gaussian``): the threshold step's data-independent curve, MATH.md s.17's exact one
    (it also caps s.4's curve) or s.2's, the papers' (a mechanism object carries its own).
    Refused combinations raise ``OptionError`` (an
    ``InputError``, so a ``ValueError``) with the command's message. ``decisions``
    (``--decisions``): a path, a ``LabelDecisions`` or a ``.npy``-like array (0/1
    answered mask, or labels with -1 for none): those decisions are accounted instead of
    the seeded replay's (MATH.md s.7). ``per_query=False`` (totals only) keeps no
    per-query columns in a single LNMax/GNMax/Confident/Interactive run: memory stays
    flat however many queries, every figure of ``to_dict()`` is the same bytes, and
    ``to_frame()``/``label()`` raise; SVT-PATE, rounds, individualized runs and
    ``smooth_sensitivity`` (which reads the columns) keep them anyway.
    ``per_query="stream"``: totals only, and ``result.iter_frames()`` then gives the
    per-query table a chunk at a time by a second pass (bounded memory). ``workers``:
    threads that count chunks and evaluate cost curves (default: the cores this process
    may use); no figure depends on it. ``executor``: a ``distributed.Client`` (or any
    ``concurrent.futures`` executor) on which a totals-only single run counts its chunks
    (``analysis.distributed``; a budget run sums its blocks there,
    ``analysis.budget_run``); the same bytes as counted locally.
    Any other run is analysed here, with a ``PateWarning`` saying so.
    ``multilabel`` (``binary``, ``tau:TAU``, ``powerset``): ``votes`` are per-label
    counts ``(queries, labels, 2)`` or ``predictions`` are ``(queries, teachers,
    labels)`` 0/1 (``analysis.multilabel``); the run keeps its per-query columns.
    ``predictions_layout`` (``--predictions-layout``): ``teachers-first`` for a
    ``predictions`` file stored teachers x queries.
    ``sampling`` (``--sampling``, MATH.md s.16): ``"poisson:RATE"`` or
    ``"without-replacement:m/N"``, the way the voters of every query were drawn, with
    ``vote_change`` (``move``, the default, or ``add``): ``--accounting data-independent``
    only, for GNMax, Confident and LNMax; both steps' curves amplified
    (``analysis.sampling``), and for Poisson-sampled Gaussian steps the smaller of the RDP
    and PLD figures (``epsilon_method``).
    """
    unknown = sorted(set(parameters) - set(MECHANISM_PARAMETERS))
    if unknown:
        raise TypeError(f"analyze() got unexpected keyword arguments: {', '.join(unknown)}")
    queries = checked_queries(queries)
    if multilabel is not None:
        check_multilabel_options(
            budget=budget, rounds=rounds, individualized=individualized, groups=groups,
            smooth_sensitivity=smooth_sensitivity, decisions=decisions,
            query_indices=query_indices, student=student, executor=executor, classes=classes,
            teachers=teachers, index_col=index_col, sampling=sampling, halt_at=halt_at,
            predictions_layout=predictions_layout)
        result = _analyze_multilabel(
            multilabel, votes, predictions, mechanism, parameters, labels=labels,
            orders=orders, order=order, add_rdp=add_rdp, accounting=accounting,
            delta=delta, conversion=conversion, seed=seed, queries=queries,
            q_bound=q_bound, workers=workers)
        if tuning is not None:
            result = replace(result, tuning=tuning_part(result, tuning_distribution(tuning)))
        for note in result.warnings:
            warnings.warn(note, OrderGridWarning, stacklevel=2)
        return result
    if isinstance(orders, str) and orders.strip().lower() == AUTO and order is None:
        return _analyze_auto_orders(locals())
    if ss_every is not None and not smooth_sensitivity:
        raise OptionError("--ss-history needs --smooth-sensitivity")
    distribution = None if tuning is None else tuning_distribution(tuning)
    sampling = declared_sampling(sampling, vote_change, mechanism, accounting=accounting,
                                 rounds=rounds, individualized=individualized,
                                 smooth_sensitivity=smooth_sensitivity)
    if decisions is not None:
        if accounting == "expected":
            raise OptionError("--decisions gives the run's own decisions: it does not "
                              "combine with --accounting expected (use replay or "
                              "data-independent)")
        if rounds is not None or individualized is not None:
            raise OptionError("--decisions applies to single runs (not --rounds or "
                              "--individualized)")
        if parameters.get("svt_cutoff") == "auto":
            raise OptionError("--svt-cutoff auto chooses the cut-off by replaying; with "
                              "--decisions give the cut-off the run used")
    if groups is not None and individualized is None:
        raise OptionError("--groups and --show-parameters need --individualized")
    check_q_bound(q_bound, mechanism, smooth_sensitivity=smooth_sensitivity,
                   rounds=rounds, individualized=individualized)
    short_labels = queries if query_indices is None and rounds is None else None
    vote_set = read_votes(votes, predictions=predictions, classes=classes, labels=labels,
                          teachers=teachers, index_col=index_col, queries=short_labels,
                          predictions_layout=predictions_layout)
    if is_sparse(vote_set.votes):
        check_sparse_run(mechanism, individualized=individualized)
    if vote_set.outputs is not None:
        check_outputs(vote_set.outputs, vote_set.path)
    check_halt_at(halt_at, budget=budget, vote_set=vote_set, query_indices=query_indices,
                   rounds=rounds, individualized=individualized,
                   name=mechanism.lower() if isinstance(mechanism, str) else mechanism.name)
    plan = None
    if individualized is not None:
        plan = individualized_plan(individualized, vote_set, groups=groups,
                                   teacher_groups=teacher_groups,
                                   predictions_given=predictions is not None,
                                   precision=precision, weights=weights, power=power)
    grid = (np.array([float(order)]) if order is not None
            else default_orders() if orders is None else validate_orders(orders))
    initial_rdp, added = _added_rdp(add_rdp, grid)
    common: dict[str, Any] = dict(
        teachers=vote_set.teachers, accounting=accounting, delta=delta, orders=grid,
        conversion=conversion, seed=seed, labels=vote_set.labels, chunk_size=chunk_size,
        source=vote_set)
    name = mechanism.lower() if isinstance(mechanism, str) else mechanism.name
    if executor is not None:
        executor = usable_executor(executor, rounds=rounds, name=name,
                                   individualized=individualized,
                                   keeps_columns=per_query is True or smooth_sensitivity)
    student_rows = None
    if rounds is not None:
        if budget is not None or query_indices is not None or queries is not None:
            raise OptionError("--rounds sets the rows of each round: it does not combine "
                              "with --budget, --query-indices or --queries")
        if plan is not None:
            raise OptionError("--rounds does not combine with --individualized (each round "
                              "would need its own group accounting)")
        specs = rounds_of(rounds, vote_set, parameters, MECHANISM_PARAMETERS)
        result = analyze_rounds(vote_set.votes, specs, initial_rdp=initial_rdp, **common)
    else:
        if name == "svt" and parameters.get("svt_cutoff") == "auto" and (
                parameters.get("target_epsilon") is None
                or parameters.get("svt_scale") is not None):
            raise OptionError("--svt-cutoff auto needs --target-epsilon (each cut-off's "
                              "scale is solved for it), not --svt-scale")
        chosen = _mechanism(mechanism, vote_set, parameters)
        if sampling is not None:
            chosen = SampledMechanism(chosen, sampling)
        student_rows = _student_rows(name, student, vote_set)
        if plan is not None:
            if budget is not None or query_indices is not None:
                raise OptionError("--individualized has its own stopping rule: it does not "
                                  "combine with --budget or --query-indices")
            if initial_rdp is not None:
                raise OptionError("--add-rdp does not combine with --individualized yet "
                                  "(each group would need the curve added to its own sum)")
            result = analyze_individualized(
                vote_set.votes, chosen, plan.parameters, predictions=plan.predictions,
                teacher_groups=plan.teacher_groups, classes=vote_set.classes,
                queries=queries, student=student_rows, **common)
        else:
            if name == "svt" and parameters.get("svt_scale") is not None \
                    and parameters.get("target_epsilon") is not None:
                raise OptionError("give --svt-scale or --target-epsilon, not both")
            if name == "svt" and budget is not None:
                raise OptionError("--budget does not apply to -m svt (its cut-off bounds "
                                  "the cost)")
            indices = _query_indices(query_indices)
            available, where = ((vote_set.queries, vote_set.path) if indices is None
                                else (indices.size, _shown(query_indices)))
            if queries is not None and queries > available:
                raise OptionError(f"--queries {queries} is larger than the {available} "
                                  f"queries in {where}")
            given, part = None, None
            if decisions is not None:
                given, part = read_given_decisions(decisions, chosen, vote_set, indices, queries,
                                               partial=budget is not None,
                                               student=student_rows)
            run_queries, run_budget = queries, budget
            halted = None
            if halt_at == "output":  # the halt found over whole outputs, then the prefix run
                assert budget is not None and vote_set.outputs is not None  # _check_halt_at
                halted = output_halt(
                    SimpleNamespace(mechanism=chosen, **common), vote_set.votes,
                    vote_set.outputs[:queries or vote_set.queries], budget=budget,
                    initial_rdp=initial_rdp, q_bound=q_bound, decisions=given)
                # a halt at the first query: a budget no query fits, the limit put back below
                run_queries, run_budget = ((queries, None) if halted is None
                                           else (halted, None) if halted else (queries, 1e-300))
            try:
                result = analyze_votes(vote_set.votes, chosen, queries=run_queries,
                                       budget=run_budget,
                                       student=student_rows, query_indices=indices,
                                       initial_rdp=initial_rdp, decisions=given,
                                       progress=progress, q_bound=q_bound, workers=workers,
                                       executor=executor,
                                       **common, keep_columns=per_query is True
                                       or smooth_sensitivity,
                                       keep_pairs=per_query == "stream")
            except ValueError as error:
                if part is None or isinstance(error, InputError):
                    raise
                raise InputError(f"{part.path}: {error}") from None
            if part is not None:
                result = replace(result, decisions=part)
            result = replace(result, q_bound=q_bound)
            if halt_at == "output" and budget is not None:
                result = halted_at_output(result, budget, halted)
            if per_query == "stream" and result.counts is not None:
                result = replace(result, frames=partial(
                    per_query_frames, votes=vote_set.votes, query_indices=indices,
                    student=student_rows, decisions=given, q_bound=q_bound, workers=workers))
            if accounting == "data-independent" and initial_rdp is None:
                result = (with_sampled_pld_figure(result, chosen, delta)
                          if isinstance(chosen, SampledMechanism)
                          else with_pld_figure(result, chosen, delta))
            if vote_set.outputs is not None and name != "svt":
                result = replace(result, outputs=outputs_summary(
                    result, vote_set.votes, vote_set.outputs[:queries or vote_set.queries],
                    q_bound=q_bound, decisions=given, query_indices=indices))
    if smooth_sensitivity:
        if rounds is not None or plan is not None:
            raise OptionError("--smooth-sensitivity applies to single runs (not --rounds or "
                              "--individualized)")
        report = sanitize_analysis(result, vote_set.votes, student=student_rows, order=order,
                                   report_every=ss_every)
        result = replace(result, smooth_sensitivity=report)
    if tuning is not None:
        if name == "svt" or plan is not None:
            raise OptionError("--tuning needs the run's whole cost as one RDP curve: it does "
                              "not combine with -m svt or --individualized")
        result = replace(result, tuning=tuning_part(result, distribution))
    if added is not None:
        notes = result.warnings + ((added.note,) if added.note else ())
        result = replace(result, added_rdp=added, warnings=notes)
    for note in result.warnings:
        category = PateWarning if added is not None and note == added.note else OrderGridWarning
        if note.startswith(("SVT-PATE answered", "--svt-cutoff auto chose")):
            category = PateWarning  # SVT-PATE's notes (analysis.svt_advice): not the grid
        warnings.warn(note, category, stacklevel=2)
    return result


def label(votes=None, mechanism: str | Mechanism = "confident", *, seed: int = 0,
          **options: Any) -> LabelDecisions:
    """The labels a run releases, as arrays (what ``--write-decisions`` writes).

    Takes ``analyze``'s arguments; returns a frozen :class:`LabelDecisions` with one row
    per processed query in processing order: ``query`` (vote-file row), ``outcome``
    (``answered``/``refused``, ``student`` for Interactive, ``stable``/``unstable``/
    ``halted`` for SVT) and ``label`` (-1 for none). A budget or individualized run stops
    at its halt.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PateWarning)
        result = analyze(votes, mechanism, seed=seed, **options)
    return decisions_of(result)


def _analyze_multilabel(text: str, votes, predictions, mechanism, parameters: dict, *,
                        orders, order, add_rdp, **options) -> AnalysisResult:
    """``--multilabel``: the grid and added curve as for any run, then
    ``analysis.multilabel.run_multilabel``."""
    if isinstance(orders, str) and orders.strip().lower() == AUTO:
        raise OptionError("--orders auto does not combine with --multilabel")
    grid = (np.array([float(order)]) if order is not None
            else default_orders() if orders is None else validate_orders(orders))
    initial_rdp, added = _added_rdp(add_rdp, grid)
    result = run_multilabel(
        text, votes, predictions, mechanism, orders=grid, initial_rdp=initial_rdp,
        build=lambda teachers: _mechanism(mechanism, VoteSet(np.zeros((1, 2)), teachers,
                                                             None, None), parameters),
        **options)
    if added is not None:
        result = replace(result, added_rdp=added,
                         warnings=result.warnings + ((added.note,) if added.note else ()))
    return result


def _analyze_auto_orders(call: dict) -> AnalysisResult:
    """``orders="auto"``: the default grid, extended (``orders.extend_orders``) below 2 or
    above 500 and the analysis repeated while the best order sits at an edge (at most
    ``AUTO_ROUNDS`` times; a note remains if it still does)."""
    call.pop("unknown", None)
    call = {**call.pop("parameters"), **call}
    grid = default_orders()
    for _ in range(AUTO_ROUNDS + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PateWarning)
            result = analyze(**{**call, "orders": grid})
        best = int(np.flatnonzero(result.orders == result.order)[0])
        wider = None if result.epsilon <= 0 else extend_orders(result.orders, best)
        if wider is None:
            break
        grid = wider
    for note in result.warnings:
        warnings.warn(note, OrderGridWarning, stacklevel=3)
    return result


def _added_rdp(add_rdp, orders: np.ndarray) -> tuple[np.ndarray | None, AddedRdp | None]:
    """``--add-rdp``: a path (read at ``orders``, recorded) or one value per order."""
    if add_rdp is None:
        return None, None
    if isinstance(add_rdp, (str, os.PathLike)):
        curve, digest, note = load_rdp_curve(add_rdp, orders=orders)
        return curve, AddedRdp(path=os.fspath(add_rdp), sha256=digest, note=note)
    return np.asarray(add_rdp, dtype=np.float64), None


def _mechanism(mechanism, vote_set: VoteSet, parameters: dict) -> Mechanism:
    if isinstance(mechanism, str):
        name = mechanism.lower()
        if name not in MECHANISMS:
            raise OptionError(f"unknown mechanism {mechanism!r} (choose from "
                              f"{', '.join(MECHANISMS)})")
        return build_mechanism(name, teachers=vote_set.teachers, **parameters,
                               integer_votes=needs_integer_votes(name, parameters, vote_set))
    if any(value is not None for value in parameters.values()):
        raise TypeError(f"parameters {sorted(parameters)} apply to a mechanism given by name")
    return mechanism


def _student_rows(name: str, student, vote_set: VoteSet) -> np.ndarray | None:
    if name != "interactive":
        if student is not None:
            raise OptionError("--student only applies to -m interactive")
        return None
    if student is None:
        raise OptionError("-m interactive needs --student FILE")
    if isinstance(student, np.ndarray):
        if student.shape != vote_set.votes.shape:
            raise InputError(f"the student array has shape {student.shape}, the votes "
                             f"{vote_set.votes.shape}")
        return np.asarray(student, dtype=np.float64)
    return load_student(student, queries=vote_set.queries, classes=vote_set.classes)


def _query_indices(query_indices) -> np.ndarray | None:
    if query_indices is None or isinstance(query_indices, np.ndarray):
        return query_indices
    return load_query_indices(query_indices)


def _shown(value) -> str:
    return os.fspath(value) if isinstance(value, (str, os.PathLike)) else "the query indices"
