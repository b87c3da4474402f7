"""pate-sweep against what a CI job gates on (review R28): ``--best`` and ``--pareto`` rank
this grid's rows only (not other grids' rows kept in ``--out``), rows of votes with an
output grouping equal pate-analyze's (whole outputs for ``-n``, the same sums), ``--resume``
tells 63-bit seeds apart, ``--best``'s command gives the order grid exactly, and a row that
output no label does not switch ``--pareto`` from accuracy to answered."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
LABELS = str(SAMPLES / "mnist_250_labels.npy")
TOKENS = str(SAMPLES / "tokens_zipf.npz")


def test_resume_best_ranks_this_grid_only(cli, tmp_path):
    """A replay run's rows kept in --out (1.3846 at sigma 40) must not pass this
    data-independent grid's gate (smallest 2.502): exit 3 as without --resume; the kept rows
    stay in the file."""
    out = str(tmp_path / "bt.csv")
    grid = (VOTES, "-m", "gnmax", "--sigma", "20,40", "-n", "300", "-w", "1")
    assert cli.sweep(*grid, "-q", "-o", out).code == 0
    done = cli.sweep(*grid, "--accounting", "data-independent", "-o", out, "--resume",
                     "--best", "2")
    assert done.code == 3, done.err
    assert "no configuration stays within epsilon 2" in done.err
    kept = pd.read_csv(out)
    assert sorted(kept["accounting"]) == ["data-independent"] * 2 + ["replay"] * 2


def test_resume_pareto_keeps_other_grids_rows(cli, tmp_path):
    out = str(tmp_path / "pt.csv")
    grid = (VOTES, "-m", "gnmax", "--sigma", "20:80:20", "-n", "300", "-w", "1", "--labels",
            LABELS)
    assert cli.sweep(*grid, "-q", "-o", out).code == 0
    done = cli.sweep(*grid, "-q", "-o", out, "--resume", "--accounting", "data-independent",
                     "--pareto")
    assert done.code == 0, done.err
    kept = pd.read_csv(out)
    assert (kept["accounting"] == "replay").sum() == 4  # the earlier grid's rows, all
    assert (kept["accounting"] == "data-independent").sum() >= 1


def _rows(done) -> list[dict]:
    assert done.code == 0, done.err
    return [json.loads(line) for line in done.out.splitlines()]


@pytest.mark.parametrize("mechanism", [("-m", "gnmax", "--sigma", "10"),
                                       ("-m", "lnmax", "--laplace-scale", "5"),
                                       ("-T", "30", "--sigma-threshold", "10", "--sigma", "10")])
def test_rows_of_output_grouped_votes_equal_pate_analyze(cli, mechanism):
    """tokens_zipf.npz carries its outputs: -n 300 ends inside output 4 (queries 296 to
    364), so both commands analyse 296 queries, summed by output alike (the sweep analysed
    300, and its sums were up to 1.3e-12 below pate-analyze's)."""
    for queries in ("300", None):
        limit = () if queries is None else ("-n", queries)
        done = cli.sweep(TOKENS, *mechanism, *limit, "-w", "1", "-f", "json")
        row, = _rows(done)
        summary = json.loads(cli.analyze(TOKENS, *mechanism, *limit, "-f", "json").out)
        assert (row["queries"], row["epsilon"]) == (summary["queries"], summary["epsilon"])
        assert row["answered"] == summary["answered"]
        if queries is not None:
            assert row["queries"] == 296
            assert "-n 300 ends inside output 4 (queries 296 to 364)" in done.err


def test_a_queries_grid_meeting_at_an_output_is_one_point(cli):
    rows = _rows(cli.sweep(TOKENS, "-m", "gnmax", "--sigma", "10", "-n", "296,300", "-w",
                           "1", "-f", "json"))
    assert [row["queries"] for row in rows] == [296]


def test_resume_tells_63_bit_seeds_apart(cli, tmp_path):
    """2^62 and 2^62 + 1 are one float: the second run reused the first's row."""
    out = str(tmp_path / "sd.csv")
    grid = (VOTES, "-m", "confident", "-n", "300", "-w", "1", "-q", "-o", out)
    assert cli.sweep(*grid, "--seed", str(2**62)).code == 0
    assert cli.sweep(*grid, "--seed", str(2**62 + 1), "--resume").code == 0
    seeds = pd.read_csv(out, dtype={"seed": "int64"})["seed"].tolist()
    assert sorted(seeds) == [2**62, 2**62 + 1]


def test_the_best_command_gives_the_orders_exactly(cli):
    done = cli.sweep(VOTES, "-m", "gnmax", "-n", "300", "-w", "1", "--orders",
                     "1.0000001,12.3456789,40", "--best", "50")
    assert done.code == 0, done.err
    assert done.err.rstrip().endswith("--orders 1.0000001,12.3456789,40")


def test_a_row_without_labels_output_does_not_switch_pareto_to_answered(cli):
    """T = 1000 answers nothing (no accuracy): the frontier stays the accuracy one, where
    T = 150 is dominated by T = 200 (it came back on the answered frontier)."""
    grid = (VOTES, "-m", "confident", "--sigma", "40", "--sigma-threshold", "50", "-n", "200",
            "-w", "1", "--labels", LABELS, "--pareto", "-q", "-f", "json")
    both = _rows(cli.sweep(*grid, "-T", "150,200"))
    three = _rows(cli.sweep(*grid, "-T", "150,200,1000"))
    assert [row["threshold"] for row in both] == [row["threshold"] for row in three] == [200.0]


def test_the_best_line_prints_the_limit_and_the_figure_at_the_limit_s_decimals(cli):
    """--best 1.0000001: the row within it printed "within epsilon 1 ... at epsilon 1.0001",
    a figure above its limit in the text."""
    done = cli.sweep(VOTES, "-m", "svt", "--svt-scale", "1.9999999", "--svt-cutoff", "1", "-n",
                     "50", "-w", "1", "-q", "--best", "1.0000001")
    assert done.code == 0, done.err
    assert "best within epsilon 1.0000001 by answered: 0 at epsilon 1.0000001\n" in done.err


def test_a_table_leaves_an_unused_text_cell_empty(cli):
    """GNMax has no screening: its cell printed <NA> where unused numbers are blank."""
    done = cli.sweep(VOTES, "-m", "confident", "-m", "gnmax", "--sigma", "40", "-T", "200",
                     "--sigma-threshold", "100", "-n", "400", "-w", "1", "-q", "-f", "table")
    assert done.code == 0, done.err
    assert "<NA>" not in done.out and "exact" in done.out


def test_a_sidecar_that_cannot_be_opened_is_said_once(cli, tmp_path):
    """A directory where the sidecar goes: no row is kept as it finishes (a kill would lose
    them all), which the run said nowhere."""
    out = tmp_path / "o.csv"
    (tmp_path / "o.csv.partial").mkdir()
    done = cli.sweep(VOTES, "-m", "gnmax", "--sigma", "20,40", "-n", "100", "-w", "1", "-q",
                     "-o", str(out))
    assert done.code == 0 and out.exists()
    assert done.err == (f"Warning: cannot keep rows in {out}.partial as they finish (Is a "
                        f"directory): a run killed before the end loses them; {out} is "
                        "written at the end\n")


def test_an_archive_s_own_student_serves_interactive_as_in_pate_analyze(cli, tmp_path):
    import numpy as np

    bundle = str(tmp_path / "bundle.npz")
    np.savez(bundle, votes=np.load(VOTES)[:500], labels=np.load(LABELS)[:500],
             student=np.load(SAMPLES / "mnist_250_student.npy")[:500])
    row, = _rows(cli.sweep(bundle, "-m", "interactive", "-n", "300", "-w", "1", "-q", "-f",
                           "json"))
    summary = json.loads(cli.analyze(bundle, "-m", "interactive", "-n", "300", "-f",
                                     "json").out)
    assert row["epsilon"] == summary["epsilon"] and row["student_sha256"] is not None


def test_best_among_svt_rows_names_the_choice_not_a_data_dependent_epsilon(cli):
    """SVT-PATE's epsilon is pure DP (c eps0), not the votes': --best warned that it ranked
    rows by a data-dependent epsilon; what reads the votes is the answered count."""
    done = cli.sweep(VOTES, "-m", "svt", "--svt-scale", "5", "--svt-cutoff", "10,20", "-n",
                     "300", "-w", "1", "-q", "--best", "10")
    assert done.code == 0, done.err
    assert "depends on the private votes: choosing by it leaks" not in done.err
    assert "Warning: --best chose among 2 rows by what their replays answered" in done.err


def test_best_over_a_grid_with_data_dependent_rows_warns_whatever_it_chose(cli):
    """SVT-PATE chosen from a grid whose GNMax row was dropped for its replay epsilon: the
    ranking read a data-dependent figure all the same (review R30)."""
    done = cli.sweep(VOTES, "-m", "svt", "-m", "gnmax", "--svt-scale", "20", "--svt-cutoff",
                     "10", "--sigma", "10", "-n", "300", "-w", "1", "-q", "--best", "2.5")
    assert done.code == 0, done.err
    assert "epsilon, which depends on the private votes" in done.err
    assert "--svt-cutoff 10" in done.err.splitlines()[-1]


def test_an_unused_whole_number_cell_is_empty_in_the_table(cli):
    done = cli.sweep(VOTES, "-m", "svt", "-m", "gnmax", "--svt-scale", "5", "--svt-cutoff",
                     "10", "--sigma", "40", "-n", "300", "-w", "1", "-q", "-f", "table")
    assert done.code == 0 and "<NA>" not in done.out


def test_a_queries_value_inside_a_first_output_names_its_file(cli):
    done = cli.sweep(TOKENS, "-m", "gnmax", "--sigma", "10", "-n", "10", "-w", "1", "-q")
    assert done.code == 2
    assert done.err.startswith(f"Error: {TOKENS}: -n 10 ends inside output ")


def test_decisions_for_the_rows_asked_say_where_n_went(cli, tmp_path):
    """Decisions written for -n 931 (whole outputs) given with -n 900, which keeps 873."""
    stdlib = str(SAMPLES / "tokens_stdlib.npz")
    args = (stdlib, "-T", "90", "--sigma-threshold", "50", "--sigma", "25")
    written = tmp_path / "d.npz"
    assert cli.analyze(*args, "-n", "931", "--write-decisions", written, "-f", "json",
                       "-o", tmp_path / "s.json").code == 0
    done = cli.analyze(*args, "-n", "900", "--decisions", written)
    assert done.code == 2
    assert done.err.startswith(f"Error: {written}: 931 decisions, but the analysis has 873 "
                               "queries (-n 900 ends inside output 21 (queries 873 to 930))")
