"""SVT-PATE a chunk at a time (issue 27 item 1): the replay from a carried unstable count
decides what the whole run decides, the streamed table and the joined columns are the
bytes of the previous in-memory code's table for any chunk size, the summary is the same
bytes in every ``per_query`` mode, and the advice's passes over the distances give the
old bisection's very bits."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.accounting import svt_tuning
from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.svt import rdp_svt_rounds, svt_epsilon
from pate_cli.accounting.svt_tuning import largest_threshold_for, noiseless_answers
from pate_cli.analysis import analyze_votes
from pate_cli.analysis.svt import svt_frames
from pate_cli.decisions import SVT_UNSTABLE
from pate_cli.inputs.rows import ScratchColumn
from pate_cli.mechanisms import SVTPATE, NoiseSource, distance_to_instability
from pate_cli.orders import default_orders
from pate_cli.outputs.files import per_query_stream_chunks
from pate_cli.query_table import per_query_frame

ORDERS = default_orders()


def old_table(votes: np.ndarray, result, initial_rdp):
    """The table of the previous in-memory code: every column of the whole run at once
    (the replay over the whole sequence, the rounds' epsilons for every query)."""
    svt = result.svt
    mechanism = replace(result.mechanism, threshold=svt.threshold)
    distance = distance_to_instability(votes)
    plurality_class = np.argmax(votes, axis=1)
    made = mechanism.replay_distances(distance, plurality_class,
                                      noise=NoiseSource(result.seed))
    unstable = made.code == SVT_UNSTABLE
    rounds = np.minimum(svt.cutoff, np.cumsum(unstable) + 1)
    if initial_rdp is None:
        epsilon, order, _ = svt_epsilon(scale=svt.scale, rounds=rounds, delta=svt.delta1,
                                        conversion=result.conversion)
    else:
        epsilon, order = rdp_to_epsilon(
            initial_rdp + rdp_svt_rounds(scale=svt.scale, rounds=rounds, orders=ORDERS),
            orders=ORDERS, delta=svt.delta1, conversion=result.conversion)
    per_round = rdp_svt_rounds(scale=svt.scale, rounds=1, orders=[result.order])[0]
    count = votes.shape[0]
    return per_query_frame(SimpleNamespace(
        accounting=result.accounting, queries=count, query_index=np.arange(count),
        plurality=votes.max(axis=1).astype(np.float64), plurality_class=plurality_class,
        answered=made.answered.astype(np.float64), label=made.label,
        log_q=np.full(count, np.nan), log_pr_answered=np.zeros(count),
        epsilon_query=np.full(count, np.nan), epsilon_cumulative=epsilon,
        order_cumulative=order, rdp_selection=np.where(unstable, per_round, 0.0),
        rdp_answer=np.zeros(count), outcome=None,
        columns={"distance": distance, "unstable": unstable.astype(np.int64)}))


def csv_bytes(frames) -> bytes:
    return b"".join(per_query_stream_chunks(iter(frames), "t.csv"))


@st.composite
def svt_runs(draw):
    queries = draw(st.integers(1, 300))
    classes = draw(st.integers(2, 5))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    votes = rng.integers(0, draw(st.integers(1, 40)), (queries, classes)).astype(np.float64)
    if draw(st.booleans()):  # a few soft rows: the plurality column written as floats
        votes[rng.random(queries) < 0.1] += 0.5
    mechanism = SVTPATE(scale=draw(st.floats(0.05, 5.0)), cutoff=draw(st.integers(1, 25)),
                        threshold=draw(st.sampled_from([None, 3.0, 8.0])))
    initial = (rng.random(ORDERS.size) * 0.5) if draw(st.booleans()) else None
    return dict(votes=votes, mechanism=mechanism, seed=seed % 7, initial_rdp=initial,
                conversion=draw(st.sampled_from(["classic", "improved"])),
                chunks=(draw(st.integers(1, queries + 3)), draw(st.integers(1, queries + 3))))


def _analysed(run, *, chunk_size, per_query):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze_votes(run["votes"], run["mechanism"], seed=run["seed"],
                             initial_rdp=run["initial_rdp"], conversion=run["conversion"],
                             orders=ORDERS, delta=1e-3, chunk_size=chunk_size,
                             per_query=per_query)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=svt_runs())
def test_every_mode_and_chunk_size_gives_the_old_tables_bytes(run):
    try:
        held = _analysed(run, chunk_size=run["chunks"][0], per_query=True)
    except ValueError as error:  # a fixed threshold that leaves no delta: refused alike
        with pytest.raises(ValueError, match=str(error)[:30]):
            _analysed(run, chunk_size=run["chunks"][1], per_query=False)
        return
    totals = _analysed(run, chunk_size=run["chunks"][1], per_query=False)
    assert totals.counts is not None and totals.frames is None and totals.table is None
    assert json.dumps(totals.to_dict()) == json.dumps(held.to_dict())
    expected = csv_bytes([old_table(run["votes"], held, run["initial_rdp"])])
    assert csv_bytes([held.to_frame()]) == expected
    assert csv_bytes(held.iter_frames()) == expected
    pieces = list(svt_frames(totals, votes=run["votes"], positions=np.arange(totals.queries),
                             chunk_size=run["chunks"][0]))
    assert len(pieces) == math.ceil(totals.queries / run["chunks"][0])
    assert csv_bytes(pieces) == expected


def test_a_chunk_replayed_from_the_carried_count_decides_as_the_whole_run():
    rng = np.random.default_rng(3)
    distance = rng.integers(0, 12, 5000).astype(np.float64)
    classes = rng.integers(0, 10, 5000)
    for cutoff in (1, 40, 400, 10**6):
        mechanism = SVTPATE(scale=2.0, cutoff=cutoff, threshold=6.0)
        whole = mechanism.replay_distances(distance, classes, noise=NoiseSource(5))
        noise, met, parts = NoiseSource(5), 0, []
        cuts = [0, *sorted(rng.choice(np.arange(1, 5000), 30, replace=False)), 5000]
        for start, stop in zip(cuts[:-1], cuts[1:], strict=True):
            part = mechanism.replay_distances(distance[start:stop], classes[start:stop],
                                              noise=noise, start=start, met=met)
            met += int(np.count_nonzero(part.code == SVT_UNSTABLE))
            parts.append(part)
        for field in ("answered", "label", "code"):
            assert np.array_equal(np.concatenate([getattr(p, field) for p in parts]),
                                  getattr(whole, field)), (cutoff, field)


def old_largest_threshold(distance: np.ndarray, cutoff: int, goal: int) -> float | None:
    """The previous code: 100 bisection steps, each counting over the whole column."""
    def answers(threshold):
        unstable = distance <= threshold
        halt = int(np.searchsorted(np.cumsum(unstable), cutoff))
        return int(np.count_nonzero(~unstable[:halt]))

    low, high = 0.0, float(distance.max(initial=0.0))
    if answers(low) < goal:
        return None
    for _ in range(100):
        middle = 0.5 * (low + high)
        if answers(middle) >= goal:
            low = middle
        else:
            high = middle
    return low


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 300), min_size=1, max_size=400),
       cutoff=st.integers(1, 60), goal=st.integers(1, 50), piece=st.integers(1, 64))
def test_the_bisection_over_pieces_gives_the_old_bits(values, cutoff, goal, piece):
    distance = np.array(values, dtype=np.float64)
    before = svt_tuning.DISTANCE_ROWS
    svt_tuning.DISTANCE_ROWS = piece  # (not a fixture: hypothesis runs many examples)
    try:
        found = largest_threshold_for(distance, cutoff, goal)
        answers = [noiseless_answers(distance, t, cutoff) for t in (0.0, 2.5, 17.0, 1e9)]
    finally:
        svt_tuning.DISTANCE_ROWS = before
    old = old_largest_threshold(distance, cutoff, goal)
    assert (found is None and old is None) or found == old
    for threshold, count in zip((0.0, 2.5, 17.0, 1e9), answers, strict=True):
        unstable = distance <= threshold
        halt = int(np.searchsorted(np.cumsum(unstable), cutoff))
        assert count == int(np.count_nonzero(~unstable[:halt]))


def test_the_distance_file_holds_each_querys_distance_and_is_removed(monkeypatch):
    monkeypatch.setattr(svt_tuning, "DISTANCE_ROWS", 1000)
    votes = np.random.default_rng(1).integers(0, 50, (4321, 7))
    positions = np.random.default_rng(2).permutation(4321)[:3000]
    with ScratchColumn(votes, positions, 3000, chunk_size=777, of=distance_to_instability,
                       name="SVT distances") as distances:
        for _ in range(2):  # written once, read again
            column = np.concatenate(list(svt_tuning.distance_pieces(distances)))
            assert np.array_equal(column, distance_to_instability(votes[positions]))
        handle = distances._file
    assert handle is not None and handle.closed


def test_smooth_sensitivity_with_svt_is_refused_as_before(cli):
    done = cli.analyze("sample_votes/mnist_250_votes.npy", "-n", "500", "-m", "svt",
                       "--svt-scale", "2", "--smooth-sensitivity")
    assert done.code == 2 and done.out == ""
    assert done.err == ("Error: --smooth-sensitivity applies to gnmax, confident, "
                        "interactive, not svt (see pate-analyze --help)\n")  # a rule


@pytest.mark.parametrize("options", [
    dict(svt_scale=0.5, svt_cutoff=20), dict(target_epsilon=20.0, svt_cutoff="auto"),
    dict(svt_scale=5.0, svt_cutoff=3), dict(target_epsilon=8.0, svt_cutoff=20,
                                            conversion="improved"),
    dict(svt_scale=0.5, svt_cutoff=20, query_indices=np.arange(16000, 0, -7), queries=2000),
    dict(svt_scale=0.5, svt_cutoff=30, decisions="given"),
])
def test_the_summary_is_the_same_bytes_in_every_mode(options):
    path = "sample_votes/adult_250_votes.npy"
    labels = "sample_votes/adult_250_labels.npy"
    if options.get("decisions") == "given":  # another seed's decisions, accounted
        options = {**options, "decisions": pate_cli.label(path, "svt", seed=3, **{
            key: value for key, value in options.items() if key != "decisions"})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = {mode: pate_cli.analyze(path, "svt", labels=labels, per_query=mode, **options)
                for mode in (True, False, "stream")}
    assert json.dumps(runs[False].to_dict()) == json.dumps(runs[True].to_dict())
    assert json.dumps(runs["stream"].to_dict()) == json.dumps(runs[True].to_dict())
    assert b"".join(per_query_stream_chunks([runs[True].to_frame()], "t.csv")) == csv_bytes(
        runs["stream"].iter_frames())
