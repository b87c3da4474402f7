"""An output that is one of the command's inputs is refused before any work (exit 2, one
line), so the input is never lost; a shard that is a dangling link is an error, never a
silently shorter vote matrix."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

from tests import SAMPLES


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    votes = np.load(SAMPLES / "mnist_250_votes.npy")[:300]
    labels = np.load(SAMPLES / "mnist_250_labels.npy")[:300]
    np.save("in.npy", votes)
    np.savetxt("in.csv", votes, fmt="%d", delimiter=",")
    np.savetxt("lab.csv", labels, fmt="%d")
    os.mkdir("sh")
    np.save("sh/part-00.npy", votes[:150])
    np.save("sh/part-01.npy", votes[150:])
    with open("rdp.csv", "w") as handle:
        handle.write("order,rdp\n2,0.01\n8,0.05\n")
    os.symlink("in.csv", "link.csv")
    return tmp_path


@pytest.mark.parametrize("args, kept, message", [
    (["in.npy", "-o", "in.npy"], "in.npy", "-o in.npy is the input in.npy"),
    (["in.csv", "-f", "csv", "-o", "./in.csv"], "in.csv", "is the input in.csv"),
    (["in.csv", "--per-query", "link.csv"], "in.csv", "--per-query link.csv is the input"),
    (["in.npy", "--labels", "lab.csv", "--per-query", "lab.csv"], "lab.csv",
     "is the input --labels lab.csv"),
    (["sh", "-o", "sh/part-01.npy"], "sh/part-01.npy", "-o sh/part-01.npy is the input sh"),
    (["sh/*.npy", "--write-rdp", "sh/part-00.npy"], "sh/part-00.npy", "is the input sh/*"),
    (["in.npy", "--add-rdp", "rdp.csv", "--write-rdp", "rdp.csv"], "rdp.csv",
     "is the input --add-rdp rdp.csv"),
    (["in.csv", "--write-decisions", "in.csv"], "in.csv", "is the input in.csv"),
])
def test_analyze_refuses_to_write_over_an_input(cli, files, args, kept, message):
    before = _digest(kept)
    done = cli.analyze(*args)
    assert done.code == 2 and message in done.err and "destroy the input" in done.err
    assert len(done.err.strip().splitlines()) == 1 and done.out == ""
    assert _digest(kept) == before


@pytest.mark.parametrize("args, kept", [
    (["in.csv", "-m", "gnmax", "--sigma", "40", "--out", "in.csv"], "in.csv"),
    (["in.npy", "--labels", "lab.csv", "-m", "gnmax", "--sigma", "40", "--out", "lab.csv"],
     "lab.csv"),
])
def test_sweep_refuses_to_write_over_an_input(cli, files, args, kept):
    before = _digest(kept)
    done = cli.sweep(*args, "-w", "1", "--no-progress")
    assert done.code == 2 and "destroy the input" in done.err
    assert _digest(kept) == before and not os.path.exists(kept + ".partial")


def test_outputs_beside_the_inputs_are_written(cli, files):
    done = cli.analyze("sh", "-o", "summary.json", "--per-query", "sh.csv")
    assert done.code == 0 and os.path.getsize("summary.json") and os.path.getsize("sh.csv")


def test_a_dangling_shard_link_is_an_error(cli, files):
    os.symlink("not-fetched.npy", "sh/part-02.npy")  # git-annex/DVC content not fetched
    for where in ("sh", "sh/part-*.npy"):
        done = cli.analyze(where)
        assert done.code == 2 and done.out == ""
        assert "shard sh/part-02.npy is a symbolic link to a file that does not exist" \
            in done.err
    assert cli.sweep("sh", "--sigma", "40", "-m", "gnmax", "-w", "1",
                     "--no-progress").code == 2
