"""How often a run reads its votes (issue 44: once, and at most twice where a table's rows
need what the first pass finds): every analysed row is read by the first pass and, with a
per-query table, once more by the table's pass, for float votes too (whether every
plurality count is whole, the table's column type, is recorded by the first pass)."""

from __future__ import annotations

import numpy as np
import pytest

from pate_cli.analysis import analyze_votes
from pate_cli.mechanisms import build_mechanism


class CountingRows:
    """A dense vote array that counts the rows read through it."""

    ndim = 2

    def __init__(self, array: np.ndarray):
        self.array, self.read = array, 0
        self.shape, self.dtype = array.shape, array.dtype

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        rows = self.array[key]
        self.read += 1 if np.ndim(rows) == 1 else rows.shape[0]
        return rows


def soft_votes(queries: int, whole: bool) -> np.ndarray:
    rng = np.random.default_rng(44)
    votes = rng.dirichlet(np.full(5, 0.4), size=queries) * 50.0
    return np.round(votes) if whole else votes


@pytest.mark.parametrize("budget", [None, 1e9])
@pytest.mark.parametrize("whole", [False, True])
def test_a_table_reads_float_votes_twice(whole, budget):
    votes = CountingRows(soft_votes(3000, whole))
    mechanism = build_mechanism("confident", teachers=50, threshold=30, sigma_threshold=10,
                                sigma=8)
    result = analyze_votes(votes, mechanism, teachers=50.0, per_query="stream",
                           budget=budget, chunk_size=500, workers=1)
    frames = list(result.iter_frames())
    assert sum(len(frame) for frame in frames) == 3000
    assert votes.read <= 2 * 3000 + 1  # the first row once more: M from its total
    # the column type as a scan of the votes finds it
    assert (frames[0]["plurality"].dtype.kind == "i") == whole


@pytest.mark.parametrize("whole", [False, True])
def test_svt_pate_reads_its_votes_for_its_distances_its_replay_and_its_table(whole):
    """SVT-PATE's distances to instability (a scratch column), its replay and its table:
    three reads with a table, the plurality counts' type recorded by the replay."""
    votes = CountingRows(soft_votes(3000, whole))
    mechanism = build_mechanism("svt", teachers=50, svt_scale=2.0, svt_cutoff=100)
    result = analyze_votes(votes, mechanism, teachers=50.0, per_query="stream",
                           chunk_size=500, workers=1)
    frames = list(result.iter_frames())
    assert votes.read <= 3 * 3000 + 1
    assert (frames[0]["plurality"].dtype.kind == "i") == whole


@pytest.mark.parametrize("whole", [False, True])
def test_svt_pate_reads_its_distances_only_to_suggest_a_scale(whole):
    """A fixed cut-off's run that answers enough needs no distances to instability: its
    replay and its table read the votes twice."""
    votes = CountingRows(soft_votes(3000, whole))
    mechanism = build_mechanism("svt", teachers=50, svt_scale=0.1, svt_cutoff=3000)
    result = analyze_votes(votes, mechanism, teachers=50.0, per_query="stream",
                           chunk_size=500, workers=1)
    assert result.answered_total > 1000 and not result.warnings
    assert sum(len(frame) for frame in result.iter_frames()) == 3000
    assert votes.read <= 2 * 3000 + 1


@pytest.mark.parametrize("whole", [False, True])
def test_a_multilabel_table_scans_the_counts_only_where_a_plurality_is_not_whole(
        whole, monkeypatch):
    """A binary multi-label table's plurality column (each query's smallest label
    plurality) is integer when every label's plurality count is whole, which the flattened
    run's first pass found: the counts are scanned again only where one is not."""
    import pate_cli
    from pate_cli.inputs.multilabel import MultilabelVotes

    positive = np.random.default_rng(9).random((400, 6)) * 40
    counts = np.stack([40 - positive, positive], axis=2)
    counts = np.round(counts) if whole else counts
    result = pate_cli.analyze(counts, "confident", multilabel="binary", threshold=30,
                              sigma_threshold=8, sigma=6, per_query="stream")
    scans: list[int] = []
    real = MultilabelVotes.rows
    monkeypatch.setattr(MultilabelVotes, "rows",
                        lambda self, *args, **kw: scans.append(1) or real(self, *args, **kw))
    frame = result.to_frame()
    assert (frame["plurality"].dtype.kind == "i") == whole
    assert bool(scans) == (not whole)


@pytest.mark.parametrize("every", [None, 700])
@pytest.mark.parametrize("name", ["confident", "interactive"])
def test_the_smooth_sensitivity_release_reads_each_row_once(name, every):
    """The release, its charges and Interactive's threshold counts read each chunk once,
    with a history too (its reports inside a chunk come from a copy of the sums): the run
    and its report read the votes twice in all."""
    from pate_cli.analysis.added_figures import sanitize_analysis

    votes = CountingRows(soft_votes(3000, True).astype(np.int64))
    student = np.full((3000, 5), 0.2)
    mechanism = build_mechanism(name, teachers=50, threshold=30, sigma_threshold=10,
                                sigma=8, confidence=0.9)
    given = {"student": student} if name == "interactive" else {}
    result = analyze_votes(votes, mechanism, teachers=50.0, per_query=False, chunk_size=500,
                           workers=1, **given)
    report = sanitize_analysis(result, votes, report_every=every, **given)
    assert votes.read <= 2 * 3000 + 1
    assert len(report.checkpoints) == (0 if every is None else 5)
