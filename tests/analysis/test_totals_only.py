"""Totals without tables (issue 14 item 1): ``analyze(..., per_query=False)`` /
``analyze_votes(..., per_query=False)`` keeps no per-query column and gives the same
figures, to the last bit, as the per-query run, whatever the chunk size or the number
of threads."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.analysis import analyze_votes, api
from pate_cli.analysis.per_query_stream import decisions_of
from pate_cli.analysis.result import NoColumnsError
from pate_cli.cli.analyze import analyze as analyze_command
from pate_cli.decisions import named_decisions
from pate_cli.mechanisms import build_mechanism
from pate_cli.orders import default_orders
from tests.memory import traced_peak
from tests.synthetic import synthetic_votes

MECHANISMS = ("gnmax", "lnmax", "confident", "interactive")
FIGURES = ("epsilon", "order", "answered_total", "epsilon_data_independent",
           "order_data_independent", "label_accuracy", "accuracy_by_outcome", "queries")


@st.composite
def runs(draw):
    """A random vote file with labels (and a student), and a run's settings."""
    queries = draw(st.integers(1, 250))
    classes = draw(st.integers(2, 8))
    teachers = draw(st.integers(5, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    concentration = draw(st.sampled_from([0.05, 0.3, 1.0, 5.0]))
    probs = rng.dirichlet(np.full(classes, concentration), size=queries)
    votes = np.array([rng.multinomial(teachers, p) for p in probs], dtype=np.float64)
    labels = rng.integers(classes, size=queries)
    student = rng.dirichlet(np.full(classes, 0.3), size=queries)
    name = draw(st.sampled_from(MECHANISMS))
    accounting = draw(st.sampled_from(["replay", "expected", "data-independent"]))
    options = dict(
        accounting=accounting, labels=labels, seed=draw(st.integers(0, 2**31)),
        chunk_size=draw(st.sampled_from([None, 1, 7, 64, 1000] if queries < 40
                                        else [None, 13, 64, 1000])),
        budget=draw(st.one_of(st.none(), st.floats(0.05, 30.0))),
        threshold=draw(st.floats(0.3, 0.95)) * teachers,
        sigma_threshold=draw(st.floats(0.05, 0.8)) * teachers,
        sigma=draw(st.floats(0.02, 0.5)) * teachers,
        laplace_scale=draw(st.floats(0.02, 0.5)) * teachers)
    if name == "gnmax":
        del options["threshold"], options["sigma_threshold"], options["laplace_scale"]
    elif name == "lnmax":
        del options["threshold"], options["sigma_threshold"], options["sigma"]
    else:
        del options["laplace_scale"]
    if name == "interactive":
        options["student"] = student
    if accounting != "expected" and draw(st.booleans()):  # --decisions: given labels
        given = rng.integers(classes, size=queries)
        if name not in ("gnmax", "lnmax"):  # these answer every query
            given = np.where(rng.random(queries) < 0.5, given, -1)
        outcome = np.where(given >= 0, "answered", "refused")
        options["decisions"] = named_decisions(name, np.arange(queries), outcome, given)
    return votes, name, options


def _analysed(votes, name, options, per_query):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(votes, name, per_query=per_query, **options)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), other_chunk=st.sampled_from([None, 5, 333]), workers=st.sampled_from([1, 2]))
def test_totals_only_equals_the_per_query_run_to_the_last_bit(run, other_chunk, workers):
    votes, name, options = run
    table = _analysed(votes, name, {**options, "chunk_size": other_chunk}, True)
    totals = _analysed(votes, name, {**options, "workers": workers}, False)
    for figure in FIGURES:
        assert getattr(totals, figure) == getattr(table, figure), figure
    assert totals.rdp_at_order == table.rdp_at_order
    np.testing.assert_array_equal(totals.rdp_total, table.rdp_total)
    assert totals.budget == table.budget and totals.warnings == table.warnings
    assert json.dumps(totals.to_dict()) == json.dumps(table.to_dict())
    # ... and it has no per-query table
    assert totals.frames is None and totals.table is None and totals.query_index is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), chunk=st.sampled_from([None, 5, 333]))
def test_the_per_query_run_is_the_same_on_one_thread_or_two(run, chunk):
    """A per-query run forms its chunks' curves ahead on threads: the same table and
    summary, bit for bit, as on one thread, whatever the chunks."""
    votes, name, options = run
    one = _analysed(votes, name, {**options, "chunk_size": chunk, "workers": 1}, True)
    two = _analysed(votes, name, {**options, "chunk_size": 3, "workers": 2}, True)
    assert one.to_frame().to_csv() == two.to_frame().to_csv()
    assert json.dumps(one.to_dict()) == json.dumps(two.to_dict())


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
@pytest.mark.parametrize("name", ["confident", "gnmax"])
def test_totals_do_not_depend_on_chunks_workers_or_mode(name, accounting):
    votes, truth = synthetic_votes(queries=900)
    mechanism = build_mechanism(name, teachers=50)
    result = analyze_votes(votes, mechanism, accounting=accounting, labels=truth,
                           chunk_size=128)
    # within rounding of the exact sums of the per-query columns
    assert math.isclose(result.rdp_at_order["answer"], math.fsum(result.rdp_answer),
                        rel_tol=1e-12)
    assert math.isclose(result.rdp_at_order["selection"], math.fsum(result.rdp_selection),
                        rel_tol=1e-12)
    assert math.isclose(result.answered_total, math.fsum(result.answered), rel_tol=1e-12)
    summary = json.dumps(result.to_dict())
    for chunk, workers in ((1, 1), (77, 2), (None, 3), (900, 2)):
        totals = analyze_votes(votes, mechanism, accounting=accounting, labels=truth,
                               chunk_size=chunk, per_query=False, workers=workers)
        np.testing.assert_array_equal(totals.rdp_total, result.rdp_total)
        assert json.dumps(totals.to_dict()) == summary, (chunk, workers)


@pytest.mark.parametrize("accounting", ["expected"])
def test_totals_are_the_same_bits_in_any_query_order(accounting):
    """The totals sum over distinct statistics: a permutation of the queries (whose
    decisions do not enter expected costs) changes no bit."""
    votes, _ = synthetic_votes(queries=600)
    mechanism = build_mechanism("confident", teachers=50)
    order = np.random.default_rng(3).permutation(600)
    plain = analyze_votes(votes, mechanism, accounting=accounting, per_query=False)
    shuffled = analyze_votes(votes, mechanism, accounting=accounting, per_query=False,
                             query_indices=order)
    np.testing.assert_array_equal(plain.rdp_total, shuffled.rdp_total)
    assert (plain.epsilon, plain.answered_total, plain.rdp_at_order) == (
        shuffled.epsilon, shuffled.answered_total, shuffled.rdp_at_order)


def test_interactive_outcomes_and_accuracy_by_outcome_match():
    votes, truth = synthetic_votes(queries=700)
    rng = np.random.default_rng(1)
    student = rng.dirichlet(np.full(5, 0.2), size=700)
    student[np.arange(700), truth] += 2.0
    student /= student.sum(axis=1, keepdims=True)
    options = dict(labels=truth, student=student, threshold=30, sigma_threshold=10, sigma=6,
                   confidence=0.8)
    table = _analysed(votes, "interactive", options, True)
    totals = _analysed(votes, "interactive", options, False)
    summary = totals.to_dict()
    assert summary == table.to_dict()
    assert summary["outcomes"]["student"] > 0 and summary["outcomes"]["teacher"] > 0
    assert totals.accuracy_by_outcome == table.accuracy_by_outcome


def test_query_indices_are_flagged_without_columns():
    votes, truth = synthetic_votes(queries=300)
    order = np.random.default_rng(2).permutation(300)[:200]
    table = _analysed(votes, "confident", dict(labels=truth, query_indices=order), True)
    totals = _analysed(votes, "confident", dict(labels=truth, query_indices=order), False)
    assert totals.to_dict() == table.to_dict() and totals.to_dict()["query_indices"]


def test_per_query_views_refuse_a_totals_only_result():
    votes, _ = synthetic_votes(queries=50)
    result = _analysed(votes, "confident", {}, False)
    with pytest.raises(NoColumnsError, match="analysed without its per-query table"):
        result.to_frame()
    with pytest.raises(NoColumnsError, match="the decisions is not available"):
        decisions_of(result)
    assert "50 queries" in repr(result)


@pytest.mark.parametrize("name, options", [
    ("confident", dict(accounting="expected")),
    ("confident", dict(budget=3.0, ss_every=40)),  # halts: the processed prefix only
    ("gnmax", dict(sigma=20, query_indices=np.arange(300)[::-2], queries=120)),
    ("interactive", dict(threshold=30, sigma_threshold=10, sigma=6, confidence=0.8))])
def test_smooth_sensitivity_needs_no_columns(name, options):
    """The release reads the run's charges again, a chunk at a time: the same report,
    bit for bit, with or without the per-query table."""
    votes, _ = synthetic_votes(queries=300)
    if name == "interactive":
        options = dict(options, student=np.random.default_rng(4).dirichlet(
            np.ones(votes.shape[1]), size=votes.shape[0]))
    options = dict(options, smooth_sensitivity=True)
    table = _analysed(votes, name, options, True)
    totals = _analysed(votes, name, options, False)
    assert totals.frames is None and table.frames is not None
    assert repr(totals.smooth_sensitivity) == repr(table.smooth_sensitivity)  # NaN too
    assert json.dumps(totals.to_dict()) == json.dumps(table.to_dict())
    if "budget" in options:
        assert totals.budget.halted_at is not None
        assert len(totals.smooth_sensitivity.checkpoints) > 1


@pytest.mark.parametrize("name, options, message", [
    ("svt", {}, "applies to gnmax, confident, interactive, not svt"),
    ("lnmax", {}, "applies to gnmax, confident, interactive, not lnmax"),
    ("gnmax", {"accounting": "data-independent"}, "needs replay or expected accounting")])
def test_smooth_sensitivity_names_what_it_does_not_apply_to(name, options, message):
    votes, _ = synthetic_votes(queries=50)
    with pytest.raises(ValueError, match=message):
        _analysed(votes, name, dict(options, smooth_sensitivity=True), False)


def test_sanitize_analysis_of_a_result():
    """The public ``sanitize_analysis(result, votes)``: the seeded replay's charges formed
    again over the result's analysed rows, the report ``analyze(...,
    smooth_sensitivity=True)`` gives, with or without the per-query table."""
    from pate_cli.analysis import sanitize_analysis

    votes, _ = synthetic_votes(queries=300)
    options = dict(accounting="expected", query_indices=np.arange(300)[::-3])
    run = _analysed(votes, "confident", dict(options, smooth_sensitivity=True), False)
    for per_query in (True, False):
        report = sanitize_analysis(_analysed(votes, "confident", options, per_query), votes)
        assert repr(report) == repr(run.smooth_sensitivity)


def test_smooth_sensitivity_memory_does_not_grow_with_the_queries(tmp_path):
    """Votes drawn from 200 distinct rows of a memory-mapped file (so the run's own tables
    stay small): the release over 2 x 10^5 queries peaks within 2 MB of the one over
    2 x 10^4, where the per-query columns it read before took some 20 MB more."""
    rng = np.random.default_rng(6)
    distinct = rng.multinomial(250, np.full(10, 0.1), size=200).astype(np.int16)

    def peak(queries):
        path = tmp_path / f"votes{queries}.npy"
        np.save(path, distinct[rng.integers(0, 200, size=queries)])
        return traced_peak(lambda: _analysed(str(path), "confident", dict(
            threshold=30, sigma_threshold=10, sigma=6, accounting="expected",
            smooth_sensitivity=True, chunk_size=1000), False))

    peak(2_000)  # first-call work
    small, large = peak(20_000), peak(200_000)
    assert large < small + 2 * 2**20, (small, large)


def test_no_run_holds_per_query_arrays():
    """2 x 10^5 queries: per-query columns alone would take some 20 MB; the run stays
    within its chunk's working set (chunks of 1,000 rows), with or without its table
    (a stream, formed when read)."""
    queries = 200_000
    rng = np.random.default_rng(5)
    votes = rng.multinomial(50, np.full(10, 0.1), size=queries).astype(np.float64)
    mechanism = build_mechanism("confident", teachers=50)
    orders = default_orders()

    def run(keep):
        return lambda: analyze_votes(votes, mechanism, accounting="expected", orders=orders,
                                     chunk_size=1000, per_query=keep)

    bound = 10 * 2**20
    run(False)()  # first-call work (imports, cached constants) outside the measure
    totals, table = traced_peak(run(False)), traced_peak(run(True))
    assert totals < bound and table < bound, (totals, table)


def _spy(monkeypatch) -> list[bool]:
    seen: list[bool] = []
    original = api.analyze_votes

    def spy(*args, **kwargs):
        seen.append(kwargs["per_query"])
        return original(*args, **kwargs)

    monkeypatch.setattr(api, "analyze_votes", spy)
    return seen


@pytest.mark.parametrize("extra, keep", [
    ([], False), (["--budget", "2"], False), (["--tuning", "poisson:3"], False),
    (["--per-query", "{dir}/q.csv"], True),  # a second pass streams the table
    (["--write-decisions", "{dir}/d.csv"], True),  # so are the decisions
    # the release reads the run's charges again, a chunk at a time
    (["--smooth-sensitivity", "--accounting", "expected"], False),
    (["--smooth-sensitivity", "--ss-history", "{dir}/h.csv", "--budget", "3"], False)])
def test_pate_analyze_asks_for_the_table_only_when_it_writes_it(monkeypatch, tmp_path, extra,
                                                                keep):
    seen = _spy(monkeypatch)
    args = ["sample_votes/mnist_250_votes.npy", "-n", "300", "-f", "json",
            *[arg.format(dir=tmp_path) for arg in extra]]
    done = CliRunner().invoke(analyze_command, args, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert seen == [keep]
    if not keep:  # the same summary as the per-query run prints
        monkeypatch.undo()
        with_table = CliRunner().invoke(
            analyze_command, [*args, "--per-query", str(tmp_path / "t.csv")])
        assert with_table.stdout == done.stdout
