"""One analysis counted elsewhere (issue 14 item 5): ``analyze(..., executor=...)`` and
``pate-analyze --scheduler`` / ``--workers`` give the bytes of the run counted here."""

from __future__ import annotations

import json
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.analysis import budget_run, grouped_run
from pate_cli.errors import InputError, PateWarning
from pate_cli.inputs.shards import NpyRows, task_source
from tests.analysis.test_totals_only import runs


def _totals(votes, name, options, **where):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(votes, name, per_query=False, **options, **where)


class CountingExecutor(ThreadPoolExecutor):
    """A thread pool that counts the tasks it is given (so a test sees they went there)."""

    def __init__(self):
        super().__init__(max_workers=2)
        self.tasks = 0

    def submit(self, *args, **kwargs):
        self.tasks += 1
        return super().submit(*args, **kwargs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), chunk=st.sampled_from([None, 3, 50]))
def test_chunks_counted_on_an_executor_give_the_local_bytes(run, chunk):
    votes, name, options = run
    options = {**options, "budget": None, "chunk_size": chunk}
    local = _totals(votes, name, options, workers=1)
    with CountingExecutor() as executor:
        remote = _totals(votes, name, options, executor=executor)
    assert json.dumps(remote.to_dict()) == json.dumps(local.to_dict())
    np.testing.assert_array_equal(remote.rdp_total, local.rdp_total)
    assert executor.tasks >= 1


def test_a_npy_file_is_read_by_the_workers_themselves(tmp_path, monkeypatch):
    """Worker processes (every argument pickled) read their rows from the file by path;
    the tasks carry no votes. Small chunks (512 rows: a power of two) and tasks (two
    chunks), so that there are many of both."""
    monkeypatch.setattr(grouped_run, "READ_VALUES", 3 * 700)
    monkeypatch.setattr(grouped_run, "TASK_VALUES", 3 * 1024)
    rng = np.random.default_rng(5)
    votes = rng.multinomial(60, [0.7, 0.2, 0.1], size=5_000).astype(np.int16)
    path = tmp_path / "votes.npy"
    np.save(path, votes)
    labels = rng.integers(3, size=5_000)
    read = []
    real = NpyRows.block

    def spy(self, rows, lo=0, hi=None, *, votes=None):
        read.append((rows, lo, hi))
        return real(self, rows, lo, hi, votes=votes)

    for accounting in ("replay", "expected"):
        options = dict(accounting=accounting, labels=labels)
        local = _totals(str(path), "confident", options)
        with ProcessPoolExecutor(max_workers=2) as executor:
            remote = _totals(str(path), "confident", options, executor=executor)
        assert json.dumps(remote.to_dict()) == json.dumps(local.to_dict()), accounting
    # in this process (threads), the rows read are the chunks of slices of the file
    monkeypatch.setattr(NpyRows, "block", spy)
    with ThreadPoolExecutor(max_workers=2) as executor:
        _totals(str(path), "gnmax", dict(sigma=20.0), executor=executor)
    assert all(isinstance(rows, slice) and rows.stop - rows.start <= 1024
               for rows, _, _ in read)
    covered = sorted((rows.start + lo, rows.start + hi) for rows, lo, hi in read)
    assert covered == [(lo, min(lo + 512, 5_000)) for lo in range(0, 5_000, 512)]


def test_what_a_task_reads_from(tmp_path):
    votes = np.arange(12, dtype=np.int32).reshape(6, 2)
    path = tmp_path / "v.npy"
    np.save(path, votes)
    mapped = np.load(path, mmap_mode="r")
    source = task_source(mapped, str(path))
    assert source == NpyRows(str(path), (6, 2))
    np.testing.assert_array_equal(source.block(slice(1, 3)), votes[1:3].astype(float))
    np.testing.assert_array_equal(source.block(np.array([4, 0])), votes[[4, 0]].astype(float))
    np.testing.assert_array_equal(source.block(slice(1, 5), 1, 3), votes[2:4].astype(float))
    np.testing.assert_array_equal(source.block(np.array([5, 4, 0]), 1, 3),
                                  votes[[4, 0]].astype(float))
    # arrays in memory, CSV inputs: the votes go with each task
    assert task_source(np.asarray(votes), str(path)) is None
    assert task_source(mapped, str(tmp_path / "v.csv")) is None
    # a worker that sees another file, or none, says so in one line
    np.save(path, votes[:4])
    with pytest.raises(InputError, match="shape .4, 2., not .6, 2.: the workers see another"):
        source.block(slice(0, 2))
    path.unlink()
    with pytest.raises(InputError, match="a worker cannot read .*under the same name"):
        source.block(slice(0, 2))


@pytest.fixture
def sample(tmp_path):
    rng = np.random.default_rng(11)
    votes = rng.multinomial(80, [0.6, 0.2, 0.1, 0.1], size=3_000).astype(np.int16)
    np.save(tmp_path / "votes.npy", votes)
    np.savetxt(tmp_path / "votes.csv", votes, fmt="%d", delimiter=",")
    np.save(tmp_path / "labels.npy", rng.integers(4, size=3_000))
    (tmp_path / "parts").mkdir()
    for number, (lo, hi) in enumerate([(0, 1_000), (1_000, 1_001), (1_001, 3_000)]):
        np.save(tmp_path / "parts" / f"part-{number}.npy", votes[lo:hi])
    return tmp_path


@pytest.mark.parametrize("workers", ["1", "3"])
def test_pate_analyze_workers_change_no_byte(cli, sample, workers):
    common = (sample / "votes.npy", "-f", "json", "--labels", sample / "labels.npy")
    default = cli.analyze(*common)
    chosen = cli.analyze(*common, "--workers", workers)
    assert default.code == chosen.code == 0 and chosen.out == default.out


def test_pate_analyze_on_a_local_dask_cluster_gives_the_same_bytes(cli, sample, tmp_path,
                                                                   dask_timeout, monkeypatch):
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    runs = [("votes.npy", ()), ("votes.npy", ("--accounting", "expected")),
            ("votes.csv", ("-m", "gnmax", "--sigma", "20")),
            ("votes.npy", ("--per-query", "TABLE")),
            ("parts", ("--accounting", "expected"))]  # shards, read by the workers
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                      dashboard_address=None) as cluster:
        for name, extra in runs:
            outputs = []
            for where in ((), ("--scheduler", cluster.scheduler_address)):
                table = tmp_path / f"table{len(where)}.csv"
                args = [str(table) if value == "TABLE" else value for value in extra]
                result = cli.analyze(sample / name, "-f", "json", "--labels",
                                     sample / "labels.npy", *args, *where)
                assert result.code == 0, result.err
                assert "Warning: --scheduler" not in result.err
                outputs.append((result.out, table.read_bytes() if "TABLE" in extra else b""))
            assert outputs[0] == outputs[1], (name, extra)
        # a budget run sums its blocks (here of 100 queries) on the workers, halts here
        monkeypatch.setattr(budget_run, "BUDGET_BLOCK", 100)
        for budget in ("20", "1e9"):
            options = ("--budget", budget, "-f", "json", "--per-query", "TABLE")
            outputs = []
            for where in ((), ("--scheduler", cluster.scheduler_address)):
                table = tmp_path / f"budget{len(where)}.csv"
                args = [str(table) if value == "TABLE" else value for value in options]
                result = cli.analyze(sample / "votes.npy", *args, *where)
                assert result.code == 0 and "Warning" not in result.err, result.err
                outputs.append((result.out, table.read_bytes()))
            assert outputs[0] == outputs[1], budget
            halted_at = json.loads(outputs[0][0])["budget"]["halted_at"]
            assert halted_at is None if budget == "1e9" else 100 < halted_at < 3_000
        # the smooth-sensitivity release reads the charges again, chunk by chunk, here;
        # decisions are written by the second pass: the totals are split either way
        smooth = [cli.analyze(sample / "votes.npy", "--smooth-sensitivity", "--accounting",
                              "expected", "-f", "json", *where)
                  for where in ((), ("--scheduler", cluster.scheduler_address))]
        streamed = cli.analyze(sample / "votes.npy", "--write-decisions", tmp_path / "d.csv",
                               "--scheduler", cluster.scheduler_address)
        # a run with its per-query table: its totals there, the table's pass here
        with Client(cluster.scheduler_address) as client, warnings.catch_warnings():
            warnings.simplefilter("error", PateWarning)
            kept = pate_cli.analyze(str(sample / "votes.npy"), per_query=True,
                                    executor=client)
    assert smooth[0].code == smooth[1].code == streamed.code == 0, smooth[1].err + streamed.err
    secret = "Warning: the sanitised release protects the votes only while its noise is secret"
    assert smooth[0].out == smooth[1].out and smooth[1].err.startswith(secret)
    assert "Warning" not in smooth[1].err.replace(secret, "", 1) + streamed.err
    assert len(kept.to_frame()) == kept.queries > 0


def test_an_unreachable_scheduler_is_a_one_line_error(cli, sample, dask_timeout):
    result = cli.analyze(sample / "votes.npy", "--scheduler", "tcp://127.0.0.1:9")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    try:
        import distributed  # noqa: F401
    except ImportError:
        assert "pate_cli[dask]" in result.err
    else:
        assert "cannot reach the Dask scheduler tcp://127.0.0.1:9" in result.err
    malformed = cli.analyze(sample / "votes.npy", "--scheduler", "nowhere")
    assert malformed.code == 2 and "not a Dask scheduler address" in malformed.err


SAMPLE = "sample_votes/mnist_250_votes.npy"


@pytest.mark.parametrize(("options", "reason"), [
    (dict(individualized="upsampling", groups="sample_votes/mnist_250_groups.csv"),
     "--individualized"),
    (dict(rounds="sample_votes/mnist_250_rounds.csv"), "--rounds"),
])
def test_runs_analysed_here_say_so_once_and_give_the_local_figures(options, reason):
    """The README's "Clusters": rounds and individualized groups run in this process with
    one warning (an individualized run used to drop the executor silently), and their
    figures are the local run's."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = {key: os.path.join(root, value) if isinstance(value, str) and "/" in value
             else value for key, value in options.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = pate_cli.analyze(os.path.join(root, SAMPLE), per_query=False, **paths)
    with ThreadPoolExecutor(2) as executor, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        remote = pate_cli.analyze(os.path.join(root, SAMPLE), per_query=False,
                                  executor=executor, **paths)
    notes = [str(item.message) for item in seen if issubclass(item.category, PateWarning)
             and "--scheduler" in str(item.message)]
    assert notes == [f"--scheduler splits the totals of single runs; a run with {reason} "
                     "is analysed in this process"]
    assert json.dumps(remote.to_dict()) == json.dumps(local.to_dict())
