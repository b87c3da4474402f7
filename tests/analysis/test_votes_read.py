"""How often a run reads its votes (issue 44: once, and at most twice where a table's rows
need what the first pass finds): every analysed row is read by the first pass and, with a
per-query table, once more by the table's pass, for float votes too (whether every
plurality count is whole, the table's column type, is recorded by the first pass)."""

from __future__ import annotations

import json

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


class _Reads:
    """Rows the table's pass (``steps.rows_read_once``) and a release's own pass
    (``added_figures.AnalysedRows``) read, counted per vote-file row."""

    def __init__(self, monkeypatch, queries: int):
        from pate_cli.analysis import added_figures, steps

        self.table = np.zeros(queries, dtype=np.int64)
        self.release = 0
        once = steps.rows_read_once

        def table_rows(votes, positions, start, stop):
            self.table[np.asarray(positions[start:stop])] += 1
            return once(votes, positions, start, stop)

        reads = self

        class ReleaseRows(added_figures.AnalysedRows):
            def __getitem__(self, key):
                rows = super().__getitem__(key)
                reads.release += len(rows)
                return rows

        monkeypatch.setattr(steps, "rows_read_once", table_rows)
        monkeypatch.setattr(added_figures, "AnalysedRows", ReleaseRows)


@pytest.mark.parametrize("case", [
    dict(), dict(accounting="expected", budget=4.0, chunk_size=700),
    dict(mechanism="interactive", ss_every=900), dict(mechanism="gnmax", order=10.0),
    dict(query_indices=np.arange(2999, -1, -2))])
def test_a_streamed_table_forms_the_smooth_sensitivity_release(case, monkeypatch):
    """A run with a streamed table reads its votes twice, not three times (issue 44): the
    table's pass forms the release from its own chunks, the bits of the release's own
    pass; read before the table, the release has a pass of its own, and the table's pass
    is the same."""
    import pate_cli
    from tests.synthetic import synthetic_votes

    votes, _ = synthetic_votes(queries=3000, classes=5, teachers=50, seed=8)
    options = dict(teachers=50, threshold=30, sigma_threshold=10, sigma=8,
                   smooth_sensitivity=True, **case)
    name = options.pop("mechanism", "confident")
    if name == "interactive":
        options.update(student=np.full((3000, 5), 0.2), confidence=0.9)
    elif name == "gnmax":
        options.update(threshold=None, sigma_threshold=None, sigma=20)
    options = {key: value for key, value in options.items() if value is not None}
    own = pate_cli.analyze(votes, name, per_query=False, **options)
    reads = _Reads(monkeypatch, 3000)
    streamed = pate_cli.analyze(votes, name, per_query="stream", **options)
    before = reads.table.copy()  # (a budget run's walk reads its rows too)
    assert not reads.release  # left to the table's pass
    table = streamed.to_frame()
    assert reads.release == 0
    assert np.array_equal(reads.table - before, np.isin(np.arange(3000), table["query"]))
    assert streamed.smooth_sensitivity == own.smooth_sensitivity
    assert streamed.to_dict() == own.to_dict()
    again = _Reads(monkeypatch, 3000)
    first = pate_cli.analyze(votes, name, per_query="stream", **options)
    assert first.smooth_sensitivity == own.smooth_sensitivity  # a pass of its own
    assert again.release >= first.queries
    assert first.to_frame().equals(table)
    left = pate_cli.analyze(votes, name, per_query="stream", **options)
    next(iter(left.iter_frames()))  # a table's pass left unfinished: a pass of its own
    assert left.smooth_sensitivity == own.smooth_sensitivity


def test_pate_analyze_writes_the_summary_after_the_table_whose_pass_formed_the_release(
        tmp_path, monkeypatch):
    """pate-analyze with --smooth-sensitivity and --per-query: the votes are read by the
    run and by the table's pass only; the summary and the release's history, written
    after the table, are those of a run without a table."""
    from click.testing import CliRunner

    from pate_cli.cli.analyze import analyze as command
    from tests.synthetic import synthetic_votes

    votes, _ = synthetic_votes(queries=3000, classes=5, teachers=50, seed=8)
    np.save(tmp_path / "v.npy", votes)
    common = [str(tmp_path / "v.npy"), "--teachers", "50", "-T", "30",
              "--sigma-threshold", "10", "--sigma", "8", "--smooth-sensitivity",
              "--accounting", "expected", "-f", "json"]
    alone = CliRunner().invoke(command, [*common, "--ss-history", str(tmp_path / "h0.csv")])
    assert alone.exit_code == 0, alone.output
    reads = _Reads(monkeypatch, 3000)
    done = CliRunner().invoke(command, [*common, "--ss-history", str(tmp_path / "h.csv"),
                                        "--per-query", str(tmp_path / "q.csv"),
                                        "-o", str(tmp_path / "s.json")])
    assert done.exit_code == 0, done.output
    assert reads.release == 0 and reads.table.max() == 1
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary == json.loads(alone.stdout)
    assert (tmp_path / "h.csv").read_bytes() == (tmp_path / "h0.csv").read_bytes()
    # pate-report too: its figures' table first, then the statement
    from pate_cli.cli.report import report
    reads = _Reads(monkeypatch, 3000)
    done = CliRunner().invoke(report, [*common[:-2], "-o", str(tmp_path / "r.md")])
    assert done.exit_code == 0, done.output
    assert reads.release == 0 and reads.table.max() == 1
    assert f"{summary['smooth_sensitivity']['epsilon_after']:.4f}"[:5] in \
        (tmp_path / "r.md").read_text()


def test_rows_too_wide_for_the_releases_chunks_keep_the_tables_memory(monkeypatch):
    """Dense rows so wide that 4,096 of them exceed the table's chunk (``stream_rows``):
    the table keeps its own chunks and the release takes a pass of its own (three reads),
    with the same figures."""
    import pate_cli
    from pate_cli.work_sizes import STREAM_ELEMENTS

    classes = STREAM_ELEMENTS // 2048  # the table's chunks: 2,048 rows
    votes = np.zeros((2500, classes), dtype=np.int16)
    votes[:, 0] = 40
    votes[np.arange(2500), 1 + np.arange(2500) % 7] = 10
    options = dict(teachers=50, sigma=20, smooth_sensitivity=True, order=10.0)
    own = pate_cli.analyze(votes, "gnmax", per_query=False, **options)
    reads = _Reads(monkeypatch, 2500)
    streamed = pate_cli.analyze(votes, "gnmax", per_query="stream", **options)
    assert [len(frame) for frame in streamed.iter_frames()] == [2048, 452]
    assert streamed.smooth_sensitivity == own.smooth_sensitivity
    assert reads.release >= 2500 and reads.table.max() == 1
