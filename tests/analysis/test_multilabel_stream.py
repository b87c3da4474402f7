"""Multi-label votes read a chunk of queries at a time: any chunk size gives the same bits
(summary and per-query table; powerset's noise and zero block take the file's width), the
table is a stream, and memory does not grow with the queries."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pate_cli
from pate_cli.analysis.result import NoColumnsError
from pate_cli.errors import PateWarning
from tests.memory import traced_peak

CASES = [("binary", "confident", {}), ("binary", "gnmax", {"q_bound": "integral"}),
         ("tau:1.5", "gnmax", {}), ("powerset", "gnmax", {})]


def predictions(queries: int, teachers: int = 12, labels: int = 4, seed: int = 3):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, (queries, 1, labels))
    flip = rng.random((queries, teachers, labels)) < rng.uniform(0.02, 0.4, (queries, 1, 1))
    return (truth ^ flip).astype(np.int8), truth[:, 0]


def analysed(variant, mechanism, options, votes, truth, **more):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        positive, counts = votes.sum(axis=1), more.pop("counts", False)
        given = ({"votes": np.stack([votes.shape[1] - positive, positive], 2)} if counts
                 else {"predictions": votes})
        selection = ({} if mechanism == "gnmax"  # GNMax has no threshold step
                     else dict(threshold=9.0, sigma_threshold=3.0))
        return pate_cli.analyze(given.pop("votes", None), mechanism, multilabel=variant,
                                labels=truth, sigma=3.0, **selection, **options, **given,
                                **more)


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
@pytest.mark.parametrize(("variant", "mechanism", "options"), CASES)
def test_any_chunk_size_gives_the_same_bits(variant, mechanism, options, accounting):
    if "q_bound" in options and accounting == "data-independent":
        pytest.skip("--q-bound integral is refused under data-independent accounting")
    votes, truth = predictions(150)
    options = dict(options, accounting=accounting)
    whole = analysed(variant, mechanism, options, votes, truth)
    table = whole.to_frame()
    assert len(table) == 150 and table["query"].tolist() == list(range(150))
    for chunk in (1, 7, 64):
        for counts in (False, True) if variant == "binary" else (False,):
            run = analysed(variant, mechanism, options, votes, truth, chunk_size=chunk,
                           counts=counts)
            assert run.to_dict() == whole.to_dict() | ({key: run.to_dict()[key] for key
                                                        in ("input", "read")} if counts else {})
            pd.testing.assert_frame_equal(run.to_frame(), table, check_exact=True)


def test_powerset_replay_keeps_the_files_width():
    """The queries after a chunk with fewer distinct label sets than the file's widest
    query draw the noise of the file's width: their labels do not depend on the chunk."""
    votes, truth = predictions(40, teachers=12, labels=5)
    votes[:20] = votes[:20, :1]  # every teacher agrees on the first 20 queries
    whole = analysed("powerset", "gnmax", {}, votes, truth).to_frame()
    for chunk in (1, 20):
        pd.testing.assert_frame_equal(
            analysed("powerset", "gnmax", {}, votes, truth, chunk_size=chunk).to_frame(),
            whole, check_exact=True)


@pytest.mark.parametrize("variant", ["binary", "tau:1", "powerset"])
def test_totals_only_keep_no_table(variant):
    votes, truth = predictions(30)
    mechanism = "confident" if variant == "binary" else "gnmax"
    totals = analysed(variant, mechanism, {}, votes, truth, per_query=False)
    assert totals.table is None and totals.frames is None
    assert totals.to_dict() == analysed(variant, mechanism, {}, votes, truth).to_dict()
    with pytest.raises(NoColumnsError):
        totals.to_frame()


def test_a_bad_chunk_size_is_refused():
    votes, truth = predictions(5)
    with pytest.raises(ValueError, match="chunk size must be a positive integer, got 0"):
        analysed("tau:1", "gnmax", {}, votes, truth, chunk_size=0)


@pytest.mark.parametrize(("variant", "mechanism"),
                         [("binary", "confident"), ("tau:1", "gnmax"), ("powerset", "gnmax")])
def test_memory_does_not_grow_with_the_queries(tmp_path, variant, mechanism):
    """Memory-mapped predictions and labels, chunks of 1,000 queries: the totals and the
    table streamed over 1.2 x 10^5 queries peak within 2 MB of 1.2 x 10^4 (the votes,
    labels and per-query columns held whole took some 20 MB more)."""
    def peak(queries: int) -> int:
        votes, truth = predictions(queries, teachers=6, labels=3, seed=queries)
        np.save(tmp_path / "p.npy", votes)
        np.save(tmp_path / "t.npy", truth)

        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PateWarning)
                result = pate_cli.analyze(
                    None, mechanism, multilabel=variant, predictions=str(tmp_path / "p.npy"),
                    labels=str(tmp_path / "t.npy"), sigma=2.0, chunk_size=1000, workers=1,
                    **({} if mechanism == "gnmax" else dict(threshold=4.0,
                                                            sigma_threshold=1.0)))
                for _ in result.iter_frames():
                    pass
        return traced_peak(run)

    peak(2_000)  # first-call work
    small, large = peak(12_000), peak(120_000)
    assert large < small + 2 * 2**20, (small, large)


@pytest.mark.parametrize("variant", ["tau:1.5", "powerset"])
def test_label_set_runs_report_their_pld_bound_under_every_accounting(variant):
    """A label-set run's data-independent PLD figure (every query one Gaussian step of its
    sensitivity) is reported under replay and expected accounting too, as the bound the
    data-independent run publishes (it had been null there, and in the JSON of
    data-independent runs, whose epsilon it was)."""
    from pate_cli.accounting.pld import gaussian_exact_epsilon

    votes, truth = predictions(60)
    bound = analysed(variant, "gnmax", {"accounting": "data-independent"}, votes, truth)
    part = bound.multilabel
    exact = gaussian_exact_epsilon([(part.sensitivity_squared ** 0.5, 3.0, 60)], 1e-5)
    assert bound.epsilon == bound.epsilon_data_independent_pld == exact
    for accounting in ("replay", "expected"):
        run = analysed(variant, "gnmax", {"accounting": accounting}, votes, truth)
        if variant.startswith("tau"):  # data-independent in every mode: it publishes it
            assert run.epsilon == run.epsilon_data_independent_pld == exact < run.epsilon_rdp
            continue
        assert run.epsilon_data_independent_pld == exact < run.epsilon_data_independent
