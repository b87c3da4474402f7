"""The fast per-point totals of a sweep (``analyze_totals``) equal the full analysis, seed
by seed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.analysis import analyze_totals, analyze_votes
from pate_cli.analysis.added_figures import with_pld_figure
from pate_cli.mechanisms import build_mechanism
from tests.synthetic import synthetic_votes


@pytest.mark.parametrize("name", ["lnmax", "gnmax", "confident"])
@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
def test_totals_are_bit_identical_to_the_full_analysis(name, accounting):
    votes, truth = synthetic_votes()
    mechanism = build_mechanism(name, teachers=50)
    totals = analyze_totals(votes, mechanism, seeds=[4, 5, 6], accounting=accounting,
                            labels=truth, chunk_size=97)
    for run in totals:
        full = analyze_votes(votes, mechanism, accounting=accounting, labels=truth,
                             seed=run.seed)
        if accounting == "data-independent":  # pate-analyze's exact figure too
            full = with_pld_figure(full, mechanism, full.delta)
        assert run.epsilon_method == full.data_independent_method == (
            "pld" if accounting == "data-independent" else "rdp")
        assert run.epsilon == full.epsilon and run.order == full.order
        assert run.answered == full.answered_total
        assert run.epsilon_data_independent == full.epsilon_data_independent
        assert run.label_accuracy == full.label_accuracy
        assert run.labels_output == np.count_nonzero(full.label >= 0)


@settings(max_examples=15, deadline=None)
@given(chunk=st.integers(1, 700), seed=st.integers(0, 2**31), queries=st.integers(1, 600))
def test_totals_do_not_depend_on_the_chunk_size(chunk, seed, queries):
    votes, truth = synthetic_votes()
    mechanism = build_mechanism("confident", teachers=50, threshold=30, sigma_threshold=15,
                                sigma=8)
    one = analyze_totals(votes, mechanism, seeds=[seed], labels=truth, queries=queries,
                         chunk_size=chunk)
    other = analyze_totals(votes, mechanism, seeds=[seed], labels=truth, queries=queries)
    assert one == other


def test_budget_runs_in_a_sweep_equal_budget_analyses():
    votes, truth = synthetic_votes()
    mechanism = build_mechanism("gnmax", teachers=50, sigma=10)
    (run,) = analyze_totals(votes, mechanism, seeds=[2], budget=3.0, labels=truth)
    full = analyze_votes(votes, mechanism, budget=3.0, labels=truth, seed=2)
    assert run.answered == full.answered_total < 600
    assert run.epsilon == full.epsilon
