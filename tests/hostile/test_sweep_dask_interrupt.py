"""Ctrl-C (SIGINT) stops ``pate-sweep --scheduler`` on a loopback Dask cluster, keeping
the rows finished so far (issue 17 item 4).

The run goes through the installed script against a ``LocalCluster`` (one worker process,
two threads) started here; once three rows are in ``OUT.partial`` the script gets SIGINT.
It must exit 130 before the grid is done (no wall-clock bound: a busy machine could break
one; a run that hangs fails on the ``communicate`` timeout), keep the finished rows (rows
of the full grid) in ``OUT.partial`` for ``--resume``, write no ``--out``, and the cluster
must stay usable (the stopped run's tasks are cancelled, not left running).
"""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from pate_cli.sweep.journal import read_journal
from pate_cli.sweep.table import read_sweep_rows
from tests.synthetic import synthetic_votes

HAS_DASK = importlib.util.find_spec("distributed") is not None
# 150 points of about 50 ms each on one 2-thread worker: several seconds in all, so that
# a loaded machine still has points left when Ctrl-C arrives.
GRID = ["-m", "confident", "--sigma", "1:150:1", "--repeats", "10", "-q"]
POINTS = 150
# How long the stopped script may take before the test calls it hung (closing the
# interpreter after a distributed Client alone takes 0.7-2 s, Dask's own).
HUNG_SECONDS = 120.0


@pytest.mark.skipif(not HAS_DASK, reason="needs the dask extra (CI installs it)")
def test_ctrl_c_stops_a_dask_sweep_keeping_the_rows(cli, tmp_path):
    from distributed import Client, LocalCluster

    votes, truth = synthetic_votes()
    path, labels = tmp_path / "votes.npy", tmp_path / "labels.npy"
    np.save(path, votes)
    np.save(labels, truth)
    full = tmp_path / "full.csv"
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", full).code == 0
    out = tmp_path / "out.csv"
    partial = Path(f"{out}.partial")
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                      dashboard_address=None) as cluster:
        process = subprocess.Popen(
            [cli.script("pate-sweep"), str(path), *GRID, "--labels", str(labels),
             "--scheduler", cluster.scheduler_address, "-o", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + HUNG_SECONDS  # a hang detector, not a speed bound
        while process.poll() is None:
            if partial.exists() and partial.read_bytes().count(b"\n") >= 3:
                break
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"no 3 rows in {HUNG_SECONDS:g} s: {process.communicate()}")
            time.sleep(0.01)
        if process.poll() is not None:
            pytest.fail(f"the sweep ended before it could be stopped: {process.communicate()}")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=HUNG_SECONDS)
        with Client(cluster.scheduler_address, timeout="10s") as client:
            assert client.submit(sum, [1, 2]).result(timeout=10) == 3  # still usable
    assert process.returncode == 130, err
    rows = read_journal(str(partial))
    assert err.splitlines()[-1] == (f"pate-sweep: interrupted: kept {len(rows)} of {POINTS} "
                                    f"rows in {partial} ({out} not written; rerun with "
                                    "--resume to finish)")
    assert 3 <= len(rows) < POINTS and "Traceback" not in err and not out.exists()
    reference = read_sweep_rows(str(full))
    assert all(row in reference for row in rows)
