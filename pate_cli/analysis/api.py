"""``analyze``: all ``pate-analyze`` does, same rules and messages (the command is parse ->
``analyze`` -> render -> write). Notes (an order at the grid's edge, an interpolated external
RDP curve) are kept in ``result.warnings`` and issued as ``PateWarning``.
Size: the one entry point of every run, its docstring the reference of every keyword."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

import numpy as np

from ..accounting.conversion import GRID_EDGE_ADVICE
from ..accounting.tuning import tuning_distribution
from ..decisions import Decisions
from ..errors import InputError, OptionError, OrderGridWarning, PateWarning
from ..inputs import VoteSet, load_rdp_curve, load_student
from ..inputs.decisions import read_decisions
from ..inputs.long_table import column_map
from ..inputs.npy_files import npz_holds
from ..inputs.output_ids import (
    attach_outputs,
    check_outputs,
    kept_note,
    output_starts,
    whole_outputs_kept,
)
from ..inputs.query_indices import analysed_positions, read_query_indices
from ..inputs.rdp_curve import checked_curve
from ..inputs.readers import recorded_sha256, votes_state
from ..inputs.rows import FirstRows
from ..inputs.votes import ReadSpec, read_votes
from ..mechanisms import MECHANISMS, Mechanism
from ..mechanisms.aggregators import mechanism_for, needs_integer_votes
from ..mechanisms.rounds import rounds_of
from ..mechanisms.sampled import SampledMechanism
from ..orders import AUTO_ROUNDS, default_orders, extend_orders
from ..rounding import ceil_text
from .added_figures import (
    PendingRelease,
    release_notes,
    secret_seed_note,
    smooth_release,
    tuning_part,
    with_pld_figure,
)
from .attack_risk import with_risk
from .budget_run import outputs_figures
from .individualized import analyze_individualized, individualized_plan
from .multilabel import run_multilabel
from .per_query_stream import decisions_of
from .result import AddedRdp, AnalysisResult, DecisionsPart, InputFile
from .rounds import analyze_rounds
from .run import analyze_votes
from .run_spec import MECHANISM_PARAMETERS, RunSpec, check_input, check_options


def analyze(votes=None, mechanism: str | Mechanism | None = None,
            **options: Any) -> AnalysisResult:
    """Analyse votes as ``pate-analyze`` does: every option of the command is a keyword.

    The keywords are ``RunSpec``'s fields, checked against ``run_spec.RULES`` before any input
    is read. No run keeps a per-query array: memory stays flat however many queries.

    Args:
      votes: a path, a ``VoteSet``, a ``(queries, K)`` array or a SciPy sparse matrix (or give
        ``predictions``).
      mechanism: ``lnmax``, ``gnmax``, ``confident`` (None, the default), ``interactive``,
        ``svt``, ``exponential`` or ``confident-exponential`` with its parameters as keywords
        (``sigma=40``, ``confidence=0.9``; unset ones default to the command's fractions of M),
        or a mechanism object; none with ``rounds`` (each round names its own).
      **options: ``RunSpec``'s fields: ``accounting``, ``delta``, ``conversion``, ``seed``,
        ``budget``, ``teachers``, ``queries``, ``order``, ``individualized``... as the
        command's options (cli:pate-analyze), and:
        predictions_layout: ``"teachers-first"`` for a file stored teachers x queries.
        index_col: drops that column of a CSV/TSV file.
        labels: with ``queries``, may hold one label per analysed row.
        classes, columns: a sparse long table's vocabulary size (required), and its columns
          in any order or under other names: ``"query=position,class=token,count=n"`` (or a
          mapping of those roles, and ``output``, to names).
        predictions, student, query_indices, add_rdp: paths, or arrays (lists, DataFrames)
          checked as the files are (``add_rdp``: a DataFrame ``order,rdp``, a mapping
          ``{order: rdp}``, or one RDP value per order).
        rounds: a path or a list of mappings, one per round (the file's keys).
        groups: a path or a table of its columns (a DataFrame, a list of mappings);
          teacher_groups: a path, a DataFrame of its columns, or each teacher's group name in
          teacher order.
        decisions: a path, a ``Decisions`` or a ``.npy``-like array or list (0/1 answered
          mask, or labels with -1 for none), accounted instead of the seeded replay's
          (math:costs).
        smooth_sensitivity: the sanitised release (``ss_every`` queries between history
          checkpoints); with ``per_query="stream"`` it is formed when read or at the end of
          ``iter_frames()``, its budget note issued then, not in ``result.warnings``
          (``added_figures.smooth_release``).
        tuning: ``"poisson:20"``, ``"negbin:10,0.5"``... (math:tuning): the cost of a random
          search whose every candidate costs at most this run (``result.tuning``).
        outputs: the output (generated sequence) of each row of the votes (``--outputs``: a
          ``.npy`` or one-column ``.csv`` path, or an array; each output's rows consecutive;
          refused unless equal to a grouping the votes hold, and with ``query_indices``):
          gives ``result.outputs`` and the per-query ``output`` column; ``queries`` ending
          inside an output keep the outputs before it, whole (a note says so).
        halt_at: ``query`` or ``output``: with ``budget`` and an output grouping, halt before
          the first output whose tokens could exceed it (``accounting.output_sums``).
        orders: a grid, or ``"auto"``: the paper's grid, extended past an edge where the best
          order sits (``orders.extend_orders``) and the analysis re-run.
        q_bound: GNMax's q bound, ``union`` (Prop. 7) or ``integral`` (math:integral, tighter
          and certified; Gaussian answers only, not with smooth sensitivity, ``rounds`` or
          ``individualized``).
        screening: the threshold step's data-independent curve, ``exact`` (the default,
          math:screening's; it also caps math:threshold's curve) or ``gaussian``
          (math:independent's, the papers'); a mechanism object carries its own.
        sampling: (math:sampling) ``"poisson:RATE"`` or ``"without-replacement:m/N"``, how
          every query's voters were drawn; ``accounting="data-independent"`` and GNMax,
          Confident or LNMax only: both steps' curves amplified (``mechanisms.sampled``), and
          for Poisson-sampled Gaussian steps the smaller of the RDP and PLD figures
          (``epsilon_method``).
        vote_change: ``move`` (the default) or ``add`` (Poisson sampling only: without
          replacement a replaced unit always moves a vote).
        sampling_steps: ``shared`` (the default: Confident's two steps read one subset per
          query, charged as one sampled Gaussian per answered query) or ``independent``.
        multilabel: ``binary``, ``tau:TAU`` or ``powerset``: per-label counts ``(queries,
          labels, 2)`` or 0/1 ``predictions`` ``(queries, teachers, labels)``
          (``analysis.multilabel``).
        per_query: True (the default); ``"stream"``: the same but ``result.iter_frames()``
          gives the table a chunk at a time; ``to_frame()`` and ``pate_cli.label`` join the pieces.
          Either way the table is a second pass over the votes when it is read: an array
          written or a vote file rewritten since raises ``InputError`` then (the totals
          stay). False: totals only (those raise), the same summary.
        progress: ``progress(done, total)``, called after each chunk of a single run (not
          SVT-PATE, rounds or individualized).
        chunk_size: rows per chunk; defaults to a bound on rows x classes
          (``work_sizes.chunk_rows``).
        workers: threads that count chunks and evaluate cost curves (default: the cores this
          process may use); no figure depends on it.
        executor: a ``distributed.Client`` or ``concurrent.futures`` executor on which a
          totals-only single run counts its chunks (``grouped_run.count_queries``; a budget
          run its blocks, ``analysis.budget_run``), the same bytes as locally; any other run
          is analysed here, with a ``PateWarning``.

    Returns:
      The frozen :class:`AnalysisResult`; its notes are also issued as ``PateWarning``
      (``OrderGridWarning`` for a best order at the grid's edge).

    Raises:
      OptionError: a refused combination, with the command's message (an ``InputError``).
      InputError: a bad input file or value (a ``ValueError``).
      ValueError: a parameter outside its domain (sigma, delta, seed, a name): every user
        mistake is a ``ValueError``, as the command reports them (exit status 2).
      TypeError: a keyword that is neither an option nor a mechanism parameter.
    """
    spec = RunSpec.of(mechanism, **options)
    if spec.name == "interactive" and spec.student is None and npz_holds(votes, "student"):
        spec = replace(spec, student=votes)  # the archive's own student array
    sampling = check_options(spec)
    distribution = None if spec.tuning is None else tuning_distribution(spec.tuning)
    if spec.auto_orders:
        return _analyze_auto_orders(votes, spec)
    grid = spec.grid()  # checked before any input is read
    initial_rdp, added = _added_rdp(spec.add_rdp, grid)
    if spec.multilabel is not None:
        def build(teachers: float) -> Mechanism:  # M is the file's (analysis.multilabel)
            return _mechanism(spec.aggregator, VoteSet(np.zeros((1, 2)), teachers, None, None),
                              dict(spec.parameters))
        result = run_multilabel(spec, votes, orders=grid, initial_rdp=initial_rdp, build=build)
    else:
        result = _analyze_spec(votes, spec, sampling, grid, initial_rdp)
    if added is not None:
        result = replace(result, added_rdp=added,
                         warnings=result.warnings + ((added.note,) if added.note else ()))
    if distribution is not None:
        result = replace(result, tuning=tuning_part(result, distribution))
    result = replace(result, warnings=result.warnings + _over_budget(result, spec.budget))
    files = _input_files((name, getattr(spec, name)) for name in FILE_OPTIONS)  # then the run's
    result = replace(with_risk(result), input_files=files + result.input_files,
                     read_options=read_options(spec))
    if result.frames is not None:  # the table's pass reads the votes again: as they are now
        result = replace(result, source_state=votes_state(getattr(result.source, "votes", None)))
    _warn(result)
    return result


# Files a run reads besides the votes, with their sha256 (decisions, added RDP: own parts).
FILE_OPTIONS = ("labels", "student", "query_indices", "outputs", "rounds", "groups",
                "teacher_groups")


def read_options(spec: RunSpec) -> dict[str, Any]:
    """How the votes were read (cli:json's ``read``): as ``predictions`` or not, and
    ``predictions_layout``, ``classes``, ``columns`` (as ``--columns`` takes it) and
    ``index_col`` as given (None where not)."""
    columns = spec.columns if spec.columns is None or isinstance(spec.columns, str) else str(
        column_map(spec.columns))
    return {"predictions": spec.predictions is not None,
            "predictions_layout": spec.predictions_layout if spec.predictions is not None
            else None, "classes": spec.classes, "columns": columns, "index_col": spec.index_col}


def _input_files(paths) -> tuple[InputFile, ...]:
    """Each ``(option, path)`` given as a path (not ``-``), with the sha256 of its bytes."""
    return tuple(InputFile(option=name, path=os.fspath(path), sha256=recorded_sha256(path))
                 for name, path in paths
                 if isinstance(path, str | os.PathLike) and os.fspath(path) != "-")


def read_spec_votes(votes, spec: RunSpec, queries: int | None) -> VoteSet:
    """The votes as ``spec`` reads them (:func:`read_votes`), labels cut to ``queries``."""
    return read_votes(votes, **{item.name: getattr(spec, item.name) for item in fields(ReadSpec)
                                if item.name != "queries"}, queries=queries)


def _analyze_spec(votes, spec: RunSpec, sampling, grid: np.ndarray,
                  initial_rdp: np.ndarray | None) -> AnalysisResult:
    """A single-label run of ``spec``: read and check the votes, run."""
    short_labels = spec.queries if spec.query_indices is None and spec.rounds is None else None
    vote_set = read_spec_votes(votes, spec, short_labels)
    if vote_set.outputs is not None:
        check_outputs(vote_set.outputs, vote_set.path)
    vote_set = attach_outputs(vote_set, spec.outputs)  # --outputs: checked against its own
    check_input(spec, vote_set)
    kept, cut = whole_outputs_kept(output_starts(vote_set.outputs), spec.queries,
                                   vote_set.queries)
    if cut is not None and kept is not None:  # (the labels read for -n rows)
        spec = replace(spec, queries=kept)
        if short_labels is not None and vote_set.labels is not None:
            vote_set = replace(vote_set, labels=vote_set.labels[:kept])
        try:
            result = _analyze_read(spec, vote_set, grid, initial_rdp, sampling)
        except InputError as error:  # (decisions for the N rows asked, say): where N went
            raise type(error)(f"{error} ({cut})") from None
        return replace(result, warnings=(kept_note(cut, kept),) + result.warnings)
    return _analyze_read(spec, vote_set, grid, initial_rdp, sampling)


def _analyze_read(spec: RunSpec, vote_set: VoteSet, grid: np.ndarray,
                  initial_rdp: np.ndarray | None, sampling) -> AnalysisResult:
    """A single-label run of ``spec`` over the votes read and checked."""
    plan = None if spec.individualized is None else individualized_plan(spec, vote_set)
    common: dict[str, Any] = dict(
        teachers=vote_set.teachers, accounting=spec.accounting, delta=spec.delta, orders=grid,
        conversion=spec.conversion, seed=spec.seed, labels=vote_set.labels,
        chunk_size=spec.chunk_size, source=vote_set)
    if spec.executor is not None and (spec.rounds is not None or plan is not None):
        usable_executor(spec.executor, spec)  # a PateWarning: analysed in this process
    if spec.rounds is not None:
        rounds = rounds_of(spec.rounds, vote_set, dict(spec.parameters), MECHANISM_PARAMETERS)
        result = analyze_rounds(vote_set.votes, rounds, initial_rdp=initial_rdp,
                                per_query=spec.per_query, workers=spec.workers, **common)
        return replace(result, input_files=_input_files(  # beside the rounds file, as given
            (f"rounds_student_{number}", each.student_file)
            for number, each in enumerate(rounds)))
    chosen = _mechanism(spec.aggregator, vote_set, dict(spec.parameters))
    if sampling is not None:
        chosen = SampledMechanism(chosen, sampling)
    student_rows = None if spec.student is None else load_student(  # Interactive's (the rules)
        spec.student, queries=vote_set.queries, classes=vote_set.classes)
    if plan is None:
        return _single_run(spec, vote_set, chosen, student_rows, initial_rdp, common)
    return analyze_individualized(
        vote_set.votes, chosen, plan.parameters, predictions=plan.predictions,
        teacher_groups=plan.teacher_groups, classes=vote_set.classes, queries=spec.queries,
        student=student_rows, per_query=spec.per_query, workers=spec.workers, **common)


def _single_run(spec: RunSpec, vote_set: VoteSet, chosen, student_rows, initial_rdp,
                common: dict) -> AnalysisResult:
    """One run in file order (or over ``query_indices``): given decisions, output halt,
    streamed table, PLD figure, outputs."""
    executor = None if spec.executor is None else usable_executor(spec.executor, spec)
    queries = spec.queries
    indices = read_query_indices(spec.query_indices, vote_set, queries)
    given, part = None, None
    if spec.decisions is not None:
        try:
            analysed = analysed_positions(vote_set.queries, indices, queries)
        except ValueError as error:
            raise OptionError(str(error)) from None
        given = read_decisions(spec.decisions, mechanism=chosen.name, classes=vote_set.classes,
                               positions=analysed, rows_total=vote_set.queries,
                               partial=spec.budget is not None, student=student_rows,
                               confidence=float(getattr(chosen, "confidence", 0.0)))
        part = DecisionsPart(path=given.path, sha256=given.sha256 or None, rows=len(given))
    # SVT-PATE has no per-query costs: its table keeps the output column, no more
    outputs = (None if vote_set.outputs is None or chosen.name == "svt"
               else vote_set.outputs[:queries or vote_set.queries])
    try:
        result = analyze_votes(vote_set.votes, chosen, queries=queries, budget=spec.budget,
                               student=student_rows, query_indices=indices,
                               initial_rdp=initial_rdp, decisions=given, progress=spec.progress,
                               q_bound=spec.q_bound, workers=spec.workers, executor=executor,
                               **common, per_query=bool(spec.per_query), outputs=outputs,
                               halt_at=spec.halt_at)
    except ValueError as error:
        if part is None or isinstance(error, InputError):
            raise
        raise InputError(f"{part.path}: {error}") from None
    result = replace(result, decisions=part, q_bound=spec.q_bound)
    ids = vote_set.outputs
    if outputs is not None and ids is not None and result.outputs is not None \
            and indices is None and outputs.size < ids.size:  # -n kept the first outputs
        halted = None if result.budget is None else result.budget.halted_at
        result = replace(result, outputs=_every_output(
            result.outputs, ids, outputs.size if halted is None else halted))
    if spec.smooth_sensitivity:  # a single run's (the option rules)
        positions = FirstRows(result.queries) if indices is None else indices[:result.queries]
        result = replace(result, release=smooth_release(
            result, vote_set.votes, stream=spec.per_query == "stream", budget=spec.budget,
            positions=positions, student=student_rows, order=spec.order,
            report_every=spec.ss_every, decisions=given),
            warnings=result.warnings + (secret_seed_note(result.seed),))
    if initial_rdp is not None:  # the PLD composes the Gaussian steps alone
        return result
    return with_pld_figure(result, chosen, spec.delta)


def _every_output(figures: Mapping, ids: np.ndarray, processed: int) -> dict:
    """``result.outputs`` (cli:json), ``count``/``tokens_per_output``/``completed`` over every
    output in ``ids``, not only the rows ``--queries`` kept."""
    whole = outputs_figures(ids, processed, [])
    return {**figures, **{key: whole[key] for key in ("count", "tokens_per_output",
                                                     "completed")}}


def _over_budget(result: AnalysisResult, budget: float | None) -> tuple[str, ...]:
    """Notes where a figure the budget does not halt on exceeds it: ``--tuning``'s search's and
    the release's (``release_notes``; a pending one's when formed)."""
    tuned = None if result.tuning is None else result.tuning.epsilon_tuned
    notes = () if budget is None or tuned is None or not tuned > budget else (
        f"--budget {budget:g} halts the run's epsilon, not the search's: with --tuning it "
        f"is {ceil_text(tuned)}, above the budget",)
    release = result.release
    return notes + release_notes(None if isinstance(release, PendingRelease) else release,
                                 budget)


def _warn(result: AnalysisResult) -> None:
    """Each note as an OrderGridWarning (best order at the grid's edge), else a PateWarning."""
    for note in result.warnings:
        grid = note.endswith(GRID_EDGE_ADVICE)
        warnings.warn(note, OrderGridWarning if grid else PateWarning, stacklevel=3)


def label(votes=None, mechanism: str | Mechanism | None = None, *, seed: int = 0,
          **options: Any) -> Decisions:
    """The labels a run releases, as arrays (what ``--write-decisions`` writes).

    Args:
      votes: as for :func:`analyze`.
      mechanism: as for :func:`analyze`.
      seed: the replay's seed (default 0).
      **options: :func:`analyze`'s keywords (its notes are not issued as warnings).

    Returns:
      The frozen :class:`pate_cli.decisions.Decisions` of every processed query in processing
      order: ``query`` (vote-file row), ``outcome`` (``answered``/``refused``, ``student`` for
      Interactive, ``stable``/``unstable``/``halted`` for SVT) and ``label`` (-1 for none); a
      budget or individualized run stops at its halt.

    Raises:
      OptionError, InputError, TypeError: as :func:`analyze` (a multi-label run: OptionError).
      ValueError: with ``per_query=False`` (no per-query table to read).
    """
    if options.get("multilabel") is not None:  # as pate-analyze --write-decisions
        raise OptionError("label() does not apply to multi-label runs (to_frame() has them)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PateWarning)
        result = analyze(votes, mechanism, seed=seed, **options)
        return decisions_of(result)  # (a streamed release's note too)


def _analyze_auto_orders(votes, spec: RunSpec) -> AnalysisResult:
    """``orders="auto"``: re-run on a grid extended (``orders.extend_orders``) while the best
    order is at an edge, at most ``AUTO_ROUNDS`` times (then a note remains)."""
    grid = default_orders()
    for _ in range(AUTO_ROUNDS + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PateWarning)
            result = analyze(votes, **{**spec.options(), "orders": grid})
        best = int(np.flatnonzero(result.orders == result.order)[0])
        if result.epsilon <= 0 or (wider := extend_orders(result.orders, best)) is None:
            break
        grid = wider
    _warn(result)  # each note in its own category, as on a fixed grid
    return result


def _added_rdp(add_rdp, orders: np.ndarray) -> tuple[np.ndarray | None, AddedRdp | None]:
    """``--add-rdp``: a path (read at ``orders``, recorded), a DataFrame ``order,rdp`` (or a
    mapping ``{order: rdp}``), or one value per order."""
    if add_rdp is None:
        return None, None
    if isinstance(add_rdp, (str, os.PathLike)):
        curve, digest, note = load_rdp_curve(add_rdp, orders=orders)
        return curve, AddedRdp(path=os.fspath(add_rdp), sha256=digest, note=note)
    if hasattr(add_rdp, "columns") or isinstance(add_rdp, Mapping):  # order,rdp as a file's
        curve, _, note = load_rdp_curve(add_rdp, orders=orders)
        return curve, AddedRdp(path=None, sha256=None, note=note)
    return checked_curve(add_rdp, orders), None


def _mechanism(mechanism, vote_set: VoteSet, parameters: dict) -> Mechanism:
    if isinstance(mechanism, str):
        name = mechanism.lower()
        if name not in MECHANISMS:
            raise OptionError(f"unknown mechanism {mechanism!r} (choose from "
                              f"{', '.join(MECHANISMS)})")
        return mechanism_for(name, vote_set, parameters)
    if any(value is not None for value in parameters.values()):
        raise TypeError(f"parameters {sorted(parameters)} apply to a mechanism given by name")
    if getattr(mechanism, "screening", None) == "exact" and mechanism.teachers is None:
        exact = needs_integer_votes(mechanism.name, {"screening": "exact"}, vote_set)
        return replace(mechanism, teachers=vote_set.teachers, integer_votes=exact)  # as by name
    return mechanism


def usable_executor(target, spec: RunSpec):
    """``target``'s executor (a ``distributed.Client``'s ``get_executor()``, or ``target``) for
    a single run's totals (budget halt, per-query pass, release stay local); None with a
    ``PateWarning`` for rounds, individualized and SVT-PATE, analysed in this process
    (docs/explanation/numerics.md#one-analysis-on-several-cores-or-a-cluster)."""
    reason = ("--rounds" if spec.rounds is not None
              else "--individualized" if spec.individualized is not None
              else "-m svt" if spec.name == "svt" else None)
    if reason is not None:
        warnings.warn(PateWarning(
            f"--scheduler splits the totals of single runs; a run with {reason} is "
            f"analysed in this process"), stacklevel=3)
        return None
    get_executor = getattr(target, "get_executor", None)
    executor = get_executor() if callable(get_executor) else target
    if not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must be a concurrent.futures executor or a "
                        f"distributed.Client, got {target!r}")
    return executor
