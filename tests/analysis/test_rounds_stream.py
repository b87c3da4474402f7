"""``--rounds`` in bounded memory (issue 27 item 1): each round analysed totals-only, the
composed summary the same bytes in every ``per_query`` mode, the streamed table and
decisions those of the rounds' columns held in memory, and memory that does not grow
with the queries."""

from __future__ import annotations

import json
import math
import warnings
from functools import partial

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.analysis import analyze_votes, api
from pate_cli.analysis.per_query_stream import decisions_of
from pate_cli.analysis.rounds import Round
from pate_cli.cli.analyze import analyze as analyze_command
from pate_cli.inputs.votes import read_votes
from pate_cli.mechanisms import build_mechanism
from pate_cli.orders import default_orders
from pate_cli.outputs.files import per_query_stream_chunks
from tests.decision_files import decisions_bytes
from tests.memory import traced_peak

SAMPLES = "sample_votes/"
PARAMETERS = {"gnmax": ("sigma",), "lnmax": ("laplace_scale",),
              "confident": ("threshold", "sigma_threshold", "sigma"),
              "interactive": ("threshold", "sigma_threshold", "sigma")}


@st.composite
def round_runs(draw):
    """A small random vote file (counts, or soft votes in some rows), 1-3 rounds over
    ranges or lists of its rows, and a run's settings."""
    queries = draw(st.integers(2, 160))
    classes = draw(st.integers(2, 6))
    teachers = draw(st.integers(5, 200))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    probs = rng.dirichlet(np.full(classes, draw(st.sampled_from([0.1, 1.0, 5.0]))),
                          size=queries)
    votes = np.array([rng.multinomial(teachers, p) for p in probs], dtype=np.float64)
    soft = draw(st.booleans())
    if soft:  # some rows' plurality counts not whole: the table writes them as floats
        moved = rng.random(queries) < 0.3
        votes[moved] = votes[moved] * 0.5 + teachers * 0.5 / classes
    student = rng.dirichlet(np.full(classes, 0.3), size=queries)
    cuts = sorted(draw(st.lists(st.integers(1, queries - 1), max_size=2, unique=True)))
    rounds = []
    for number, (lo, hi) in enumerate(zip([0, *cuts], [*cuts, queries], strict=True)):
        rows = np.arange(lo, hi)
        shape = draw(st.sampled_from(["range", "range", "shuffled", "other rows"]))
        if shape == "shuffled":
            rows = rng.permutation(rows)
        elif shape == "other rows":  # any rows of the file, in any order
            rows = rng.choice(queries, size=hi - lo, replace=False)
        name = draw(st.sampled_from(sorted(PARAMETERS)))
        values = {key: draw(st.floats(0.05, 0.9)) * teachers for key in PARAMETERS[name]}
        mechanism = build_mechanism(name, teachers=teachers, integer_votes=not soft, **values,
                                    **({"confidence": 0.5} if name == "interactive" else {}))
        rounds.append(Round(rows=rows, mechanism=mechanism,
                            student=student if name == "interactive" else None))
        del number
    options = dict(accounting=draw(st.sampled_from(["replay", "expected", "data-independent"])),
                   seed=draw(st.integers(0, 2**31)),
                   labels=rng.integers(classes, size=queries) if draw(st.booleans()) else None,
                   conversion=draw(st.sampled_from(["classic", "improved"])))
    if draw(st.booleans()):  # --add-rdp: RDP spent before the first round
        options["add_rdp"] = default_orders() * draw(st.floats(1e-4, 0.05))
    return votes, rounds, options


def _analysed(votes, rounds, options, per_query, **extra):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(votes, rounds=rounds, per_query=per_query, **options, **extra)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=round_runs(), chunk=st.sampled_from([None, 1, 7, 1000]))
def test_every_mode_gives_the_same_summary_table_and_decisions(run, chunk):
    votes, rounds, options = run
    held = _analysed(votes, rounds, options, True)
    totals = _analysed(votes, rounds, options, False, chunk_size=chunk, workers=2)
    streamed = _analysed(votes, rounds, options, "stream", chunk_size=chunk)
    summary = json.dumps(held.to_dict())
    assert json.dumps(totals.to_dict()) == summary
    assert json.dumps(streamed.to_dict()) == summary
    assert totals.counts is not None and totals.frames is None  # nothing per query
    for path in ("t.csv", "t.jsonl", "t.parquet"):
        assert b"".join(per_query_stream_chunks(streamed.iter_frames(), path, rows=50)) \
            == b"".join(per_query_stream_chunks([held.to_frame()], path, rows=50)), path
    for path in ("d.csv", "d.jsonl"):
        assert decisions_bytes(decisions_of(streamed), path) == \
            decisions_bytes(decisions_of(held), path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=round_runs())
def test_the_composition_is_the_rounds_run_one_after_another(run):
    """Against the rounds analysed here one after another with their columns (the
    carry, salt k, each round's rows as query indices): the total curve and every figure
    of the summary; ``rdp_at_order`` within rounding of the exact sums of the per-query
    columns at the composed order."""
    votes, rounds, options = run
    result = _analysed(votes, rounds, options, "stream")
    orders = default_orders()
    carry = np.zeros(orders.size) + options.get("add_rdp", 0.0)
    parts = []
    for number, spec in enumerate(rounds):
        parts.append(analyze_votes(votes, spec.mechanism, query_indices=spec.rows,
                                   student=spec.student, initial_rdp=carry, salt=number,
                                   **{k: v for k, v in options.items() if k != "add_rdp"}))
        carry = parts[-1].rdp_total
    np.testing.assert_array_equal(result.rdp_total, carry)
    epsilon, order = rdp_to_epsilon(carry, orders=orders, delta=1e-5,
                                    conversion=options["conversion"])
    rdp_figure = result.epsilon  # under data-independent accounting the PLD one where smaller
    if result.data_independent_method == "pld":
        assert result.epsilon == result.epsilon_data_independent_pld < result.epsilon_rdp
        rdp_figure = result.epsilon_rdp
    assert (rdp_figure, result.order) == (float(epsilon), float(order))
    label = np.concatenate([part.label for part in parts])
    summary = result.to_dict()
    assert summary["labels_output"] == np.count_nonzero(label >= 0)
    assert math.isclose(result.answered_total, math.fsum(p.answered_total for p in parts),
                        rel_tol=1e-12)
    truth = options["labels"]
    if truth is not None and np.any(label >= 0):
        rows = np.concatenate([part.query_index for part in parts])
        output = label >= 0
        assert result.label_accuracy == float(np.mean(label[output] == truth[rows][output]))
    if any(spec.mechanism.uses_student for spec in rounds):
        outcome = np.concatenate([part.outcome if part.outcome is not None
                                  else (part.label >= 0).astype(np.int8) for part in parts])
        assert list(summary["outcomes"].values()) == np.bincount(outcome, minlength=3).tolist()
    table = result.to_frame()
    assert table["round"].tolist() == [k for k, p in enumerate(parts) for _ in range(p.queries)]
    for step in ("selection", "answer"):
        assert math.isclose(result.rdp_at_order[step], math.fsum(table[f"rdp_{step}"]),
                            rel_tol=1e-12, abs_tol=1e-300)


def test_one_round_is_the_single_run_to_the_last_bit():
    votes = np.load(SAMPLES + "mnist_250_votes.npy")[:2000]
    mechanism = build_mechanism("confident", teachers=250, integer_votes=True)
    single = pate_cli.analyze(votes, mechanism, per_query=False)
    rounds = pate_cli.analyze(votes, rounds=[Round(np.arange(2000), mechanism)],
                              per_query=False)
    for figure in ("epsilon", "order", "rdp_at_order", "answered_total",
                   "epsilon_data_independent", "epsilon_data_independent_pld",
                   "epsilon_data_independent_worst", "epsilon_data_independent_worst_pld"):
        assert getattr(rounds, figure) == getattr(single, figure), figure
    assert rounds.epsilon_data_independent_worst_pld is not None
    assert rounds.risk_data_independent == single.risk_data_independent


@pytest.mark.parametrize("accounting", ["data-independent", "replay", "expected"])
def test_a_run_split_into_rounds_keeps_its_pld_figures(accounting):
    """The same Confident-GNMax queries in one run or in two rounds: the same privacy loss
    distribution figures (every round's Gaussian steps composed), and so the same
    data-independent headline (it was the RDP figure for rounds, 24% higher; review R11)."""
    votes = np.load(SAMPLES + "mnist_250_votes.npy")[:400]
    mechanism = build_mechanism("confident", teachers=250, integer_votes=True)
    single = pate_cli.analyze(votes, mechanism, accounting=accounting, per_query=False)
    split = pate_cli.analyze(votes, accounting=accounting, per_query=False, rounds=[
        Round(np.arange(200), mechanism), Round(np.arange(200, 400), mechanism)])
    def same(value):  # (mu^2 summed over four steps, not two)
        return pytest.approx(value, rel=1e-12, abs=0.0)
    assert split.epsilon_data_independent_worst_pld == same(
        single.epsilon_data_independent_worst_pld)
    assert split.epsilon_data_independent_worst_pld < split.epsilon_data_independent_worst
    if accounting != "replay":  # (a replay's answers differ: each round has its own noise)
        assert split.epsilon_data_independent_pld == same(single.epsilon_data_independent_pld)


def test_an_svt_round_keeps_its_columns_and_streams_them():
    """SVT-PATE (a round given as a ``Round``; the command refuses it) keeps its columns
    whatever is asked: its queries join the summary and the table as before."""
    votes = np.load(SAMPLES + "mnist_250_votes.npy")[:1200]
    labels = np.load(SAMPLES + "mnist_250_labels.npy")[:1200]
    rounds = [Round(np.arange(600), build_mechanism("confident", teachers=250)),
              Round(np.arange(600, 1200), build_mechanism("svt", teachers=250, svt_scale=5.0,
                                                          svt_cutoff=5)),
              Round(np.arange(1200), build_mechanism("interactive", teachers=250),
                    student=np.eye(10)[labels] * 0.9 + 0.01)]
    held = _analysed(votes, rounds, dict(labels=labels), True)
    for mode in (False, "stream"):
        assert json.dumps(_analysed(votes, rounds, dict(labels=labels), mode).to_dict()) \
            == json.dumps(held.to_dict())
    streamed = _analysed(votes, rounds, dict(labels=labels), "stream")
    assert b"".join(per_query_stream_chunks(streamed.iter_frames(), "t.csv")) == \
        b"".join(per_query_stream_chunks([held.to_frame()], "t.csv"))
    assert held.to_dict()["labels_output"] == np.count_nonzero(held.label >= 0)


def test_rounds_given_an_executor_say_they_are_analysed_here():
    from concurrent.futures import ThreadPoolExecutor

    from pate_cli.errors import PateWarning
    options = dict(rounds=SAMPLES + "mnist_250_rounds.csv", per_query=False)
    with ThreadPoolExecutor(2) as pool, pytest.warns(
            PateWarning, match="a run with --rounds is analysed in this process"):
        here = pate_cli.analyze(SAMPLES + "mnist_250_votes.npy", executor=pool, **options)
    assert here.to_dict() == pate_cli.analyze(SAMPLES + "mnist_250_votes.npy",
                                              **options).to_dict()


def _spy(monkeypatch) -> list[bool]:
    seen: list[bool] = []
    from pate_cli.analysis import rounds as rounds_module
    original = rounds_module.analyze_votes

    def spy(*args, **kwargs):
        seen.append(kwargs.get("per_query", True))
        return original(*args, **kwargs)

    monkeypatch.setattr(rounds_module, "analyze_votes", spy)
    return seen


@pytest.mark.parametrize("extra", [[], ["--per-query", "{dir}/q.csv"],
                                   ["--per-query", "{dir}/q.parquet"],
                                   ["--write-decisions", "{dir}/d.csv"],
                                   ["--write-decisions", "{dir}/d.jsonl"]])
def test_pate_analyze_rounds_keep_no_columns_and_write_the_same_bytes(monkeypatch, tmp_path,
                                                                      extra):
    """pate-analyze --rounds analyses each round totals-only (and streams its table with
    --per-query or --write-decisions); its summary, table and decisions are the API's."""
    seen = _spy(monkeypatch)
    args = [SAMPLES + "mnist_250_votes.npy", "--rounds", SAMPLES + "mnist_250_rounds.csv",
            "--labels", SAMPLES + "mnist_250_labels.npy", "-f", "json",
            *[arg.format(dir=tmp_path) for arg in extra]]
    done = CliRunner().invoke(analyze_command, args, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert seen == [bool(extra)] * 2
    held = api.analyze(SAMPLES + "mnist_250_votes.npy", rounds=SAMPLES + "mnist_250_rounds.csv",
                       labels=SAMPLES + "mnist_250_labels.npy")
    assert json.loads(done.output) == json.loads(json.dumps(held.to_dict()))
    if extra:
        path = extra[1].format(dir=tmp_path)
        expected = (b"".join(per_query_stream_chunks([held.to_frame()], path))
                    if "per-query" in extra[0] else decisions_bytes(decisions_of(held), path))
        if path.endswith(".parquet"):
            import pandas as pd
            pd.testing.assert_frame_equal(pd.read_parquet(path), held.to_frame())
        assert open(path, "rb").read() == expected


def test_rounds_memory_does_not_grow_with_the_queries(tmp_path):
    """Votes drawn from 200 distinct rows of a memory-mapped file, a Confident round then
    an Interactive one (a memory-mapped student): 2 x 10^5 queries peak within 2 MB of
    2 x 10^4 (the rounds' columns held took 42 MB against 11 MB)."""
    rng = np.random.default_rng(7)
    distinct = rng.multinomial(250, np.full(10, 0.1), size=200).astype(np.int16)
    confident = build_mechanism("confident", teachers=250, threshold=30, sigma_threshold=10,
                                sigma=6, integer_votes=True)
    interactive = build_mechanism("interactive", teachers=250, threshold=30,
                                  sigma_threshold=10, sigma=6, confidence=0.9,
                                  integer_votes=True)

    def peak(queries):
        path, student_path = tmp_path / f"votes{queries}.npy", tmp_path / f"s{queries}.npy"
        np.save(path, distinct[rng.integers(0, 200, size=queries)])
        np.save(student_path, rng.dirichlet(np.full(10, 0.3), size=queries))
        cut = queries // 4
        rounds = [Round(np.arange(cut), confident),
                  Round(np.arange(cut, queries), interactive,
                        student=np.load(student_path, mmap_mode="r"))]
        vote_set = read_votes(str(path))  # reading checks the file: not the analysis
        return traced_peak(lambda: _analysed(vote_set, rounds, dict(chunk_size=1000, workers=1),
                                             False))

    peak(2_000)  # first-call work
    small, large = peak(20_000), peak(200_000)
    assert large < small + 2 * 2**20, (small, large)


def test_the_streamed_rounds_table_is_written_in_memory_that_does_not_grow(
        tmp_path, small_stream_chunks):
    """Four times the queries, the same peak while the table of two rounds is formed and
    written (the chunks made small, one thread, as in test_per_query_stream), and the
    bytes of the table held in memory."""
    rng = np.random.default_rng(3)
    gnmax = build_mechanism("gnmax", teachers=50, sigma=5.0, integer_votes=True)
    confident = build_mechanism("confident", teachers=50, threshold=30.0,
                                sigma_threshold=10.0, sigma=5.0, integer_votes=True)
    peaks = []
    for queries in (2_000, 20_000, 80_000):
        path = tmp_path / f"votes{queries}.npy"
        np.save(path, rng.multinomial(50, [0.7, 0.1, 0.1, 0.1], size=queries).astype(np.int16))
        vote_set = read_votes(str(path))
        rounds = [Round(np.arange(queries // 2), gnmax),
                  Round(np.arange(queries // 2, queries), confident)]
        out = str(tmp_path / f"q{queries}.csv")

        peaks.append(traced_peak(partial(_written, vote_set, rounds, out)))
    assert peaks[2] < peaks[1] + 4e6, peaks
    held = _analysed(vote_set, rounds, {}, True)
    assert open(out, "rb").read() == b"".join(per_query_stream_chunks([held.to_frame()], out))


def _written(vote_set, rounds, out: str) -> None:
    """The streamed table of ``rounds`` written to ``out`` as pate-analyze writes it."""
    result = _analysed(vote_set, rounds, dict(workers=1), "stream")
    with open(out, "wb") as sink:
        for piece in per_query_stream_chunks(result.iter_frames(), out):
            sink.write(piece)
