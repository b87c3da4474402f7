"""Random combinations of ``analyze()``'s options on random small votes: the summary and the
per-query table are the same bytes for any chunk size and number of workers, the
data-dependent figure never exceeds the data-independent one, and sparse votes give the
dense numbers within the tolerance of two algorithms (docs/explanation/sparse-votes.md)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import scipy.sparse as sp
from hypothesis import event, given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.errors import InputError, OptionError, PateWarning

MECHANISMS = ("gnmax", "lnmax", "confident", "exponential", "confident-exponential", "svt")


@st.composite
def runs(draw):
    """Votes, a mechanism and options a user could give together (refused ones are
    skipped by the test)."""
    queries = draw(st.sampled_from([1, 6, 40]))
    classes = draw(st.sampled_from([2, 3, 10]))
    teachers = draw(st.sampled_from([5, 50, 250]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    spread = draw(st.sampled_from([0.05, 0.5, 3.0]))
    votes = np.array([rng.multinomial(teachers, p) for p in
                      rng.dirichlet(np.full(classes, spread), size=queries)], dtype=np.float64)
    mechanism = draw(st.sampled_from(MECHANISMS))
    options: dict = {"accounting": draw(st.sampled_from(["replay", "expected",
                                                         "data-independent"])),
                     "seed": draw(st.integers(0, 3)),
                     "conversion": draw(st.sampled_from(["classic", "improved"])),
                     "delta": draw(st.sampled_from([1e-5, 1e-8, 1e-3]))}
    if mechanism in ("gnmax", "confident"):
        options["sigma"] = draw(st.sampled_from([0.5, 2.0, 0.16 * teachers]))
    if mechanism.startswith("confident"):
        options["threshold"] = draw(st.sampled_from([0.3, 0.8])) * teachers
        options["sigma_threshold"] = draw(st.sampled_from([1.0, 0.6 * teachers]))
    extras = ["none", "indices"]
    extras += [] if mechanism == "svt" else ["budget", "outputs"]
    extras += ["sampling"] if mechanism in ("gnmax", "confident", "lnmax") else []
    extras += ["integral", "smooth"] if mechanism in ("gnmax", "confident") else []
    extra = draw(st.sampled_from(extras))
    if extra in ("integral", "smooth") and options["accounting"] == "data-independent":
        options["accounting"] = "replay"
    if extra in ("budget", "outputs"):
        options["budget"] = draw(st.sampled_from([0.5, 2.0, 10.0]))
    if extra == "outputs":
        options["outputs"] = np.sort(rng.integers(0, max(1, queries // 3), size=queries))
        options["halt_at"] = draw(st.sampled_from(["query", "output"]))
    if extra == "indices":
        options["query_indices"] = rng.permutation(queries)[: max(1, queries // 2)]
    if extra == "sampling":
        options["accounting"] = "data-independent"
        options["sampling"] = draw(st.sampled_from(["poisson:0.3", "without-replacement:3/10"]))
    if extra == "integral":
        options["q_bound"] = "integral"
    if extra == "smooth":
        options["smooth_sensitivity"] = True
    return votes, mechanism, options


def _bytes(votes, mechanism: str, options: dict, **how) -> tuple[str, str]:
    """The summary (without the input's record) and the per-query table, as text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PateWarning)
        warnings.simplefilter("ignore", UserWarning)
        result = pate_cli.analyze(votes, mechanism, **options, **how)
    summary = result.to_dict()
    summary.pop("input", None)
    return json.dumps(summary, sort_keys=True, default=str), result.to_frame().to_csv()


def _close(a, b) -> bool:
    """Equal, floats within 1e-12 relative (the tolerance of two algorithms)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@settings(max_examples=40, deadline=None)
@given(run=runs())
def test_any_option_combination_is_the_same_for_any_chunking(run):
    votes, mechanism, options = run
    try:
        summary, table = _bytes(votes, mechanism, options, chunk_size=None, workers=1)
    except (InputError, OptionError) as error:  # a combination the rules refuse
        event(f"refused: {type(error).__name__}")
        return
    except ValueError as error:  # smooth sensitivity's conditions (C5, C6, the order)
        assert "smooth sensitivity" in str(error), error
        event("refused: smooth sensitivity")
        return
    event("analysed")
    for how in ({"chunk_size": 1, "workers": 1}, {"chunk_size": 7, "workers": 2}):
        assert _bytes(votes, mechanism, options, **how) == (summary, table), how
    figures = json.loads(summary)
    if figures["epsilon_data_independent"] is not None:
        assert figures["epsilon"] <= figures["epsilon_data_independent"]
    assert math.isfinite(figures["epsilon"])


@settings(max_examples=25, deadline=None)
@given(run=runs())
def test_sparse_votes_give_the_dense_numbers(run):
    votes, mechanism, options = run
    # expected accounting: no replayed label enters a figure (a sparse replay draws its
    # zero block's noise otherwise, docs/explanation/sparse-votes.md)
    options = {key: value for key, value in options.items()
               if key not in ("budget", "outputs", "halt_at", "sampling")}
    options["accounting"] = "expected"
    try:
        dense = json.loads(_bytes(votes, mechanism, options)[0])
    except (InputError, OptionError):
        return
    except ValueError as error:  # smooth sensitivity's conditions
        assert "smooth sensitivity" in str(error), error
        return
    sparse = json.loads(_bytes(sp.csr_matrix(votes), mechanism, options)[0])
    different = {key for key in dense.keys() | sparse.keys()
                 if not _close(dense.get(key), sparse.get(key))}
    assert not different, {key: (dense.get(key), sparse.get(key)) for key in different}

