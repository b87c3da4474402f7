"""Votes in shards (issue 14 item 5): a directory or glob of ``.npy`` pieces read as one
matrix, giving the numbers of the single file."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.errors import InputError
from pate_cli.inputs.shards import ShardedVotes, is_shard_set, shard_paths


def split(votes: np.ndarray, folder, cuts) -> list:
    """``votes`` saved as pieces cut at ``cuts`` in ``folder``; the paths in order."""
    folder.mkdir(exist_ok=True)
    edges = [0, *cuts, votes.shape[0]]
    paths = []
    for number, (lo, hi) in enumerate(zip(edges, edges[1:], strict=False)):
        path = folder / f"part-{number:03d}.npy"
        np.save(path, votes[lo:hi])
        paths.append(path)
    return paths


@pytest.fixture
def sample(tmp_path):
    rng = np.random.default_rng(3)
    votes = rng.multinomial(60, [0.55, 0.25, 0.1, 0.1], size=2_500).astype(np.int16)
    np.save(tmp_path / "all.npy", votes)
    np.save(tmp_path / "labels.npy", rng.integers(4, size=2_500))
    split(votes, tmp_path / "parts", [700, 701, 1900])
    return tmp_path


def _summary(result) -> dict:
    summary = result.to_dict()
    summary["input"] = {key: value for key, value in summary["input"].items()
                        if key not in ("path", "sha256")}
    return summary


@pytest.mark.parametrize("options", [
    dict(), dict(accounting="expected"), dict(budget=2.0), dict(per_query=False),
    dict(mechanism="svt", target_epsilon=40.0, svt_cutoff=50),
    dict(queries=600, accounting="expected", smooth_sensitivity=True),
    dict(query_indices=np.arange(2_499, -1, -3))])
def test_shards_give_the_numbers_of_the_single_file(sample, options):
    options = dict(options)
    mechanism = options.pop("mechanism", "confident")
    labels = str(sample / "labels.npy")
    whole = pate_cli.analyze(str(sample / "all.npy"), mechanism, labels=labels, **options)
    for shards in (sample / "parts", str(sample / "parts" / "part-*.npy")):
        pieces = pate_cli.analyze(str(shards), mechanism, labels=labels, **options)
        assert json.dumps(_summary(pieces)) == json.dumps(_summary(whole))
        if options.get("per_query", True) is True:
            assert pieces.to_frame().equals(whole.to_frame())


def test_pate_analyze_reads_a_directory_and_a_glob(cli, sample):
    whole = cli.analyze(sample / "all.npy", "-f", "json", "--per-query", sample / "a.csv")
    folder = cli.analyze(sample / "parts", "-f", "json", "--per-query", sample / "b.csv")
    pattern = cli.analyze(str(sample / "parts" / "part-00*.npy"), "-f", "json")
    assert whole.code == folder.code == pattern.code == 0
    assert (sample / "a.csv").read_bytes() == (sample / "b.csv").read_bytes()
    one, two, three = (json.loads(result.out) for result in (whole, folder, pattern))
    assert one["epsilon"] == two["epsilon"] == three["epsilon"]
    # the input's sha256 is that of the pieces' bytes one after another, in name order
    joined = b"".join(path.read_bytes() for path in sorted((sample / "parts").glob("*.npy")))
    assert two["input"]["sha256"] == three["input"]["sha256"] == \
        hashlib.sha256(joined).hexdigest()
    assert two["input"]["path"] == str(sample / "parts")
    assert two["input"]["queries"] == 2_500


def test_pate_sweep_reads_shards(cli, sample):
    rows = [cli.sweep(source, "-m", "gnmax", "--sigma", "10,30", "-f", "csv")
            for source in (sample / "all.npy", sample / "parts")]
    assert rows[0].code == rows[1].code == 0
    epsilon = [[line.split(",")[13] for line in result.out.splitlines()[1:]]
               for result in rows]
    assert epsilon[0] == epsilon[1] and len(epsilon[0]) == 2


def test_bad_shard_sets_are_one_line_errors(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    np.save(mixed / "a.npy", np.ones((3, 4)))
    np.save(mixed / "b.npy", np.ones((3, 5)))
    flat = tmp_path / "flat"
    flat.mkdir()
    np.save(flat / "a.npy", np.ones(4))
    other = tmp_path / "other"
    other.mkdir()
    np.save(other / "a.npy", np.ones((3, 4)))
    (other / "b.csv").write_text("1,2\n")
    cases = [(tmp_path / "empty", "is a directory with no .npy shards in it"),
             (str(tmp_path / "nothing-*.npy"), "no .npy shards found for this pattern"),
             (mixed, "b.npy: has 5 classes but"),
             (flat, "a shard must be a 2-D"),
             (str(other / "*"), "b.csv is not a .npy file")]
    for source, message in cases:
        result = cli.analyze(source)
        assert result.code == 2, source
        assert message in result.err and len(result.err.strip().splitlines()) == 1, result.err


def test_what_counts_as_shards(tmp_path):
    np.save(tmp_path / "v.npy", np.ones((2, 2)))
    assert is_shard_set(tmp_path) and is_shard_set(str(tmp_path / "*.npy"))
    assert not is_shard_set(tmp_path / "v.npy") and not is_shard_set("-")
    assert not is_shard_set(None) and not is_shard_set(np.ones((2, 2)))
    assert shard_paths(tmp_path) == [str(tmp_path / "v.npy")]
    with pytest.raises(InputError):
        shard_paths(str(tmp_path / "none*.npy"))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), rows=st.integers(1, 60), pieces=st.integers(1, 5))
def test_sharded_votes_index_as_the_joined_matrix(data, rows, pieces):
    rng = np.random.default_rng(rows * 7 + pieces)
    joined = rng.integers(0, 9, size=(rows, 3)).astype(np.int16)
    cuts = sorted(data.draw(st.lists(st.integers(0, rows), min_size=pieces - 1,
                                     max_size=pieces - 1)))
    edges = [0, *cuts, rows]
    votes = ShardedVotes([f"p{i}" for i in range(pieces)],
                         [joined[lo:hi] for lo, hi in zip(edges, edges[1:], strict=False)])
    assert votes.shape == joined.shape and len(votes) == rows
    np.testing.assert_array_equal(np.asarray(votes), joined)
    lo = data.draw(st.integers(-rows - 2, rows + 2))
    hi = data.draw(st.integers(-rows - 2, rows + 2))
    np.testing.assert_array_equal(votes[lo:hi], joined[lo:hi])
    row = data.draw(st.integers(-rows, rows - 1))
    np.testing.assert_array_equal(votes[row], joined[row])
    picked = np.asarray(data.draw(st.lists(st.integers(0, rows - 1), max_size=20)),
                        dtype=np.int64)
    np.testing.assert_array_equal(votes[picked], joined[picked])
    np.testing.assert_array_equal(votes[:, 1], joined[:, 1])
    with pytest.raises(IndexError):
        votes[rows]
