"""The one decisions type (``pate_cli.decisions``): what a replay outputs, what ``label()``
gives and what ``--decisions`` reads are the same ``Decisions``, and its outcome names
and codes convert both ways."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pate_cli
from pate_cli.decisions import (
    INTERACTIVE_NAMES,
    OUTCOME_NAMES,
    SVT_STABLE,
    SVT_UNSTABLE,
    Decisions,
    codes_of,
    named_decisions,
)
from pate_cli.inputs.decisions import check_decisions, load_decisions
from pate_cli.mechanisms import NoiseSource, build_mechanism
from tests.synthetic import synthetic_votes


@given(st.lists(st.integers(0, len(OUTCOME_NAMES) - 1), max_size=50))
def test_codes_and_names_convert_both_ways(codes):
    code = np.asarray(codes, dtype=np.int8)
    decisions = Decisions.of_codes(code, np.full(code.size, -1))
    assert decisions.outcome.tolist() == [OUTCOME_NAMES[c] for c in codes]
    np.testing.assert_array_equal(codes_of(decisions.outcome, OUTCOME_NAMES), code)
    assert decisions.answered.tolist() == [OUTCOME_NAMES[c] in ("answered", "stable")
                                           for c in codes]


def test_a_name_that_is_no_outcome_has_no_code():
    names = ["teacher", "zzz", "", "abstain", "aaa", "student"]
    assert codes_of(names, INTERACTIVE_NAMES).tolist() == [1, -1, -1, 0, -1, 2]
    with pytest.raises(ValueError, match="row 2: outcome 'zzz' is not one of"):
        named_decisions("gnmax", None, ["answered", "zzz"], [1, -1])


def test_a_piece_keeps_every_field():
    decisions = named_decisions("svt", np.arange(10, 16),
                                ["stable", "unstable", "stable", "halted", "halted", "halted"],
                                [3, -1, 4, -1, -1, -1], path="d.csv", sha256="ab")
    piece = decisions.piece(1, 3)
    assert (piece.query.tolist(), piece.outcome.tolist(), piece.label.tolist()) == (
        [11, 12], ["unstable", "stable"], [-1, 4])
    assert (piece.mechanism, piece.path, piece.sha256) == ("svt", "d.csv", "ab")
    assert piece.code.tolist() == [SVT_UNSTABLE, SVT_STABLE]
    assert len(decisions.head(4)) == 4 and len(decisions.head(40)) == 6


@pytest.mark.parametrize("name", ["confident", "interactive", "svt", "gnmax"])
def test_a_replay_a_label_call_and_a_read_file_give_the_one_type(name, tmp_path):
    votes, _ = synthetic_votes(queries=120)
    options = {}
    if name == "interactive":
        options["student"] = np.random.default_rng(1).dirichlet(np.ones(votes.shape[1]),
                                                                size=votes.shape[0])
    if name == "svt":
        options.update(svt_scale=2.0, svt_cutoff=20)
    labelled = pate_cli.label(votes, name, seed=3, **options)
    assert type(labelled) is pate_cli.Decisions is Decisions
    mechanism = build_mechanism(name, teachers=int(votes[0].sum()))
    if not mechanism.sequential:
        replayed = mechanism.replay(votes, noise=NoiseSource(0),
                                    student=options.get("student"))
        assert type(replayed) is Decisions
        assert (replayed.code is None) == (name not in ("interactive", "svt"))
    path = tmp_path / "decisions.csv"
    path.write_text(f"# mechanism: {name}\nquery,outcome,label\n" + "".join(
        f"{q},{o},{'' if y < 0 else y}\n"
        for q, o, y in zip(labelled.query, labelled.outcome, labelled.label, strict=True)))
    read = check_decisions(load_decisions(path), mechanism=name, classes=votes.shape[1],
                           positions=np.arange(votes.shape[0]), rows_total=votes.shape[0])
    assert type(read) is Decisions
    for key in ("query", "outcome", "label", "answered"):
        np.testing.assert_array_equal(getattr(read, key), getattr(labelled, key))
    assert (read.code is None) == (labelled.code is None)


def test_the_earlier_constructor_name_still_builds_decisions():
    made = pate_cli.LabelDecisions("confident", [0, 1], ["answered", "refused"], [2, -1])
    assert isinstance(made, pate_cli.Decisions)
    assert made.outcome.tolist() == ["answered", "refused"]
    assert repr(made) == "<Decisions confident: 2 queries (1 answered, 1 refused)>"
    bare = build_mechanism("gnmax", teachers=3).replay(np.array([[3.0, 0.0]]),
                                                        noise=NoiseSource(0))
    assert repr(bare) == "<Decisions: 1 queries (1 answered)>"


def test_named_decisions_refuses_fields_of_different_lengths():
    """Three outcomes, one label and two rows made ``<Decisions: 1 queries (2 answered, 1
    refused)>`` whose ``to_frame()`` failed inside pandas (review R41)."""
    with pytest.raises(ValueError, match=r"got outcome \(3,\), label \(1,\), query \(2,\)"):
        named_decisions("confident", [0, 1], ["answered", "refused", "answered"], [3])
    with pytest.raises(ValueError, match="one-dimensional"):
        named_decisions("confident", None, "answered", 3)
    made = named_decisions("confident", [4, 7], ["answered", "refused"], [3, -1])
    assert len(made.to_frame()) == 2
