"""``pate-sweep --resume`` reuses a row only when everything that made its numbers matches.

A row records its point, every analysis option (accounting, delta, conversion, orders,
budget, seed, repeats, confidence), the sha256 of the vote, labels and student files and
the tool version; after any change the resumed table must hold exactly the rows a fresh
run gives (expected rows come from that fresh run), and stderr says how many rows were
reused and how many computed.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pate_cli.sweep.points as sweep_module
from pate_cli.orders import default_orders, parse_grid
from pate_cli.sweep.columns import KEY_COLUMNS, SWEEP_COLUMNS
from pate_cli.sweep.journal import RowJournal, read_journal
from pate_cli.sweep.table import read_sweep_rows
from tests.synthetic import synthetic_votes as shared_synthetic_votes

NEW_COLUMNS = ["conversion", "orders", "labels_sha256", "student_sha256"]
# 4 points: gnmax and confident, each at sigma 4 and 8.
GRID = ["-m", "gnmax", "-m", "confident", "--sigma", "4,8", "-T", "30", "--sigma-threshold",
        "20", "-w", "1", "--no-progress"]


@pytest.fixture
def cli(cli):
    """``cli(*args)``: pate-sweep in process; ``(code, out, err)``."""
    return cli.sweep


def synthetic_votes(queries=300, **options):
    """The shared synthetic votes (``tests.synthetic``), 300 queries by default here."""
    return shared_synthetic_votes(queries=queries, **options)


def student_probabilities(queries, classes, seed):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(classes), size=queries)


@pytest.fixture
def files(tmp_path):
    votes, truth = synthetic_votes()
    np.save(tmp_path / "votes.npy", votes)
    np.save(tmp_path / "labels.npy", truth)
    np.save(tmp_path / "student.npy", student_probabilities(*votes.shape, seed=1))
    return tmp_path / "votes.npy", tmp_path / "labels.npy", tmp_path / "student.npy"


@pytest.fixture
def calls(monkeypatch):
    """The points the sweep computes (not reuses)."""
    seen = []
    real = sweep_module.run_point
    monkeypatch.setattr(sweep_module, "run_point",
                        lambda point, *memory: seen.append(point) or real(point, *memory))
    return seen


def fresh(cli, tmp_path, *args):
    """The table a run without --resume writes for ``args``."""
    path = tmp_path / "fresh.csv"
    path.unlink(missing_ok=True)
    result = cli(*args, "-o", path, "-q")
    assert result.code == 0, result.err
    return path.read_bytes()


# --- every option that changes a number is part of the key ------------------------------------

# (options of the first run, options of the resumed run): both over GRID.
REPLACING = {
    "conversion": ([], ["--conversion", "improved"]),
    "orders": ([], ["--orders", "2:64:1"]),
    "one order": (["--orders", "2:64:1"], ["--order", "16"]),
    "orders grid": (["--orders", "2:64:1"], ["--orders", "2:64:2"]),
    "labels added": ([], ["--labels", "{labels}"]),
}


@pytest.mark.parametrize("change", sorted(REPLACING))
def test_a_changed_option_recomputes_and_replaces_every_row(cli, files, tmp_path, calls,
                                                            change):
    votes, labels, _ = files
    before, after = ([a.format(labels=labels) for a in options]
                     for options in REPLACING[change])
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, *before, "-o", out, "-q").code == 0
    calls.clear()
    result = cli(votes, *GRID, *after, "-o", out, "--resume")
    assert result.code == 0, result.err
    assert len(calls) == 4
    assert (f"pate-sweep: reused 0 of 4 rows from {out}; computing 4 (replacing 4 rows made "
            "with other options, other input files or another version, or without "
            "epsilon_max)") in result.err
    assert out.read_bytes() == fresh(cli, tmp_path, votes, *GRID, *after)


# Options that were already part of a row's place: the old rows stay (another place in the
# table), the new rows are computed and come first, as a fresh run gives them.
KEEPING = {
    "delta": ["--delta", "1e-6"], "seed": ["--seed", "5"], "repeats": ["--repeats", "2"],
    "budget": ["--budget", "3"], "accounting": ["--accounting", "expected"],
}


@pytest.mark.parametrize("change", sorted(KEEPING))
def test_options_of_a_rows_place_compute_new_rows_beside_the_old(cli, files, tmp_path, calls,
                                                                 change):
    votes, _, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "-o", out, "-q").code == 0
    old = read_sweep_rows(str(out))
    calls.clear()
    result = cli(votes, *GRID, *KEEPING[change], "-o", out, "--resume")
    assert result.code == 0, result.err
    assert len(calls) == 4 and f"reused 0 of 4 rows from {out}; computing 4\n" in result.err
    rows = read_sweep_rows(str(out))
    expected = fresh(cli, tmp_path, votes, *GRID, *KEEPING[change])
    assert rows[:4] == read_sweep_rows(str(tmp_path / "fresh.csv")) and rows[4:] == old
    assert out.read_bytes().splitlines()[:5] == expected.splitlines()


def test_interactive_confidence_is_part_of_the_key(cli, files, tmp_path, calls):
    votes, _, student = files
    args = [votes, "-m", "interactive", "--student", student, "-w", "1", "--no-progress"]
    out = tmp_path / "out.csv"
    assert cli(*args, "-o", out, "-q").code == 0
    calls.clear()
    assert cli(*args, "--confidence", "0.6", "-o", out, "--resume").code == 0
    assert len(calls) == 1
    assert read_sweep_rows(str(out))[0] == read_sweep_rows(
        str(_fresh_path(cli, tmp_path, *args, "--confidence", "0.6")))[0]


def _fresh_path(cli, tmp_path, *args):
    fresh(cli, tmp_path, *args)
    return tmp_path / "fresh.csv"


# --- input files: content, not path ------------------------------------------------------------

def test_a_rewritten_vote_file_is_recomputed(cli, files, tmp_path, calls):
    votes, _, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "-o", out, "-q").code == 0
    np.save(votes, synthetic_votes(seed=11)[0])
    calls.clear()
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 0 and len(calls) == 4
    assert "replacing 4 rows" in result.err
    assert out.read_bytes() == fresh(cli, tmp_path, votes, *GRID)


def test_a_rewritten_labels_file_is_recomputed(cli, files, tmp_path, calls):
    votes, labels, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "--labels", labels, "-o", out, "-q").code == 0
    np.save(labels, (np.load(labels) + 1) % 5)
    calls.clear()
    assert cli(votes, *GRID, "--labels", labels, "-o", out, "--resume").code == 0
    assert len(calls) == 4
    assert out.read_bytes() == fresh(cli, tmp_path, votes, *GRID, "--labels", labels)


def test_a_rewritten_student_recomputes_only_interactive_rows(cli, files, tmp_path, calls):
    votes, _, student = files
    args = [votes, "-m", "gnmax", "-m", "interactive", "--student", student, "-w", "1",
            "--no-progress"]
    out = tmp_path / "out.csv"
    assert cli(*args, "-o", out, "-q").code == 0
    first = read_sweep_rows(str(out))
    assert first[0]["student_sha256"] is None and first[1]["student_sha256"] is not None
    np.save(student, student_probabilities(300, 5, seed=2))
    calls.clear()
    result = cli(*args, "-o", out, "--resume")
    assert result.code == 0
    assert [point.mechanism for point in calls] == ["interactive"]
    assert f"reused 1 of 2 rows from {out}; computing 1 (replacing 1 row made" in result.err
    assert out.read_bytes() == fresh(cli, tmp_path, *args)


def test_rows_of_another_version_are_recomputed(cli, files, tmp_path, calls, monkeypatch):
    votes, _, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "-o", out, "-q").code == 0
    monkeypatch.setattr(sweep_module, "__version__", "0.1.0+other")
    calls.clear()
    assert cli(votes, *GRID, "-o", out, "-q", "--resume").code == 0
    assert len(calls) == 4
    assert {row["version"] for row in read_sweep_rows(str(out))} == {"0.1.0+other"}


# --- tables without the new columns --------------------------------------------------------------

@pytest.mark.parametrize("extension", [".csv", ".jsonl"])
def test_rows_of_a_table_without_the_new_columns_are_never_reused(cli, files, tmp_path, calls,
                                                                  extension):
    votes, _, _ = files
    out = tmp_path / f"out{extension}"
    assert cli(votes, *GRID, "-o", out, "-q").code == 0
    expected = out.read_bytes()
    frame = pd.DataFrame(read_sweep_rows(str(out))).drop(columns=NEW_COLUMNS)
    if extension == ".csv":
        frame.to_csv(out, index=False)
    else:
        frame.to_json(out, orient="records", lines=True)
    calls.clear()
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 0 and len(calls) == 4
    assert "reused 0 of 4 rows" in result.err and "replacing 4 rows" in result.err
    assert out.read_bytes() == expected


# --- what is reused is reused exactly ------------------------------------------------------------

@pytest.mark.parametrize("options", [
    [], ["--conversion", "improved", "--orders", "2:32:0.5,40,50", "--labels", "{labels}"],
    ["--order", "32"], ["--orders", "1.1,1.2,1.3,7"], ["--order", "32", "--delta", "1e-7"],
])
@pytest.mark.parametrize("extension", [".csv", ".jsonl", ".parquet"])
def test_an_unchanged_run_reuses_every_row(cli, files, tmp_path, calls, options, extension):
    pytest.importorskip("pyarrow") if extension == ".parquet" else None
    votes, labels, _ = files
    options = [option.format(labels=labels) for option in options]
    out = tmp_path / f"out{extension}"
    assert cli(votes, *GRID, *options, "-o", out, "-q").code == 0
    written = out.read_bytes()
    calls.clear()
    result = cli(votes, *GRID, *options, "-o", out, "--resume")
    assert result.code == 0 and calls == []
    assert f"pate-sweep: reused 4 of 4 rows from {out}; computing 0\n" in result.err
    assert "4 points x 1 repeat (1 file, gnmax, confident), nothing to compute" in result.err
    assert out.read_bytes() == written


@pytest.mark.parametrize("cut", [2, 60])
def test_a_table_cut_off_is_refused_not_reused(cli, files, tmp_path, calls, cut):
    """--resume (and --best over it) on a table whose last row was cut off, inside its last
    cell or after some of its columns: one line, exit 2, the file left as it is; its
    shortened numbers are never reused, chosen or written back (review R14 P1)."""
    votes, _, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "-o", out, "-q").code == 0
    out.write_bytes(out.read_bytes()[:-cut])
    damaged = out.read_bytes()
    calls.clear()
    result = cli(votes, *GRID, "-o", out, "--resume", "--best", "100")
    assert result.code == 2 and calls == []
    assert result.err.endswith("(the file looks cut off); expected a pate-sweep table "
                               "(pate-sweep --out FILE)\n") and result.err.count("Error") == 1
    assert out.read_bytes() == damaged


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("which", ["votes", "labels"])
def test_a_pipe_is_refused_before_it_is_read(cli, files, tmp_path, which):
    """A named pipe (or a process substitution) can be read once only, and a sweep's
    workers open each file themselves: refused at once, exit 2 (it hung, waiting for a
    writer; review R14)."""
    import os

    votes, labels, _ = files
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    given = ([fifo, *GRID] if which == "votes" else [votes, *GRID, "--labels", fifo])
    result = cli(*given, "-q")
    assert result.code == 2 and result.err == (
        f"Error: {fifo}: standard input or a pipe, which can be read once only; pate-sweep's "
        "workers open each file themselves: give a file\n")


def test_resume_into_a_missing_file_says_so(cli, files, tmp_path):
    votes, _, _ = files
    out = tmp_path / "new.csv"
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 0
    assert f"pate-sweep: {out} does not exist yet; computing 4 rows\n" in result.err


def test_rows_of_a_table_without_the_eta_column_are_reused(cli, files, tmp_path, calls):
    """``eta`` came after the other key columns; a table written before it (no
    exponential rows, so every ``eta`` empty) is still complete."""
    votes, _, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "-o", out, "-q").code == 0
    expected = out.read_bytes()
    pd.DataFrame(read_sweep_rows(str(out))).drop(columns=["eta"]).to_csv(out, index=False)
    calls.clear()
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 0 and len(calls) == 0 and "reused 4 of 4 rows" in result.err
    assert out.read_bytes() == expected


# --- the new columns ---------------------------------------------------------------------------

def test_rows_record_conversion_orders_and_input_digests(cli, files, tmp_path):
    import hashlib

    votes, labels, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "--labels", labels, "--orders", "2:10:2,20", "--conversion",
               "improved", "-o", out, "-q").code == 0
    header = out.read_text().splitlines()[0].split(",")
    assert header == list(SWEEP_COLUMNS) and header[-18:-14] == NEW_COLUMNS
    assert header[-14:-8] == ["eta", "screening", "sampling", "vote_change", "epsilon_method",
                              "sampling_steps"]
    assert header[-8:] == ["risk_tpr_0.001", "risk_tpr_0.01", "risk_tpr_0.1",
                           "risk_advantage", "risk_source", "read", "epsilon_max",
                           "epsilon_any_run"]
    assert set(KEY_COLUMNS) <= set(SWEEP_COLUMNS)
    for row in read_sweep_rows(str(out)):
        assert row["conversion"] == "improved" and row["orders"] == "2:10:2,20"
        assert row["labels_sha256"] == hashlib.sha256(labels.read_bytes()).hexdigest()
        assert row["student_sha256"] is None and row["read"] is None
        assert row["sha256"] == hashlib.sha256(votes.read_bytes()).hexdigest()


def test_orders_text_is_canonical_and_reads_back_exactly():
    from pate_cli.orders import orders_text

    assert orders_text(None) == "default"
    assert orders_text(tuple(default_orders())) == "default"
    assert orders_text((2.0, 3.0, 4.0, 5.0)) == "2:5:1"
    assert orders_text((2.0, 3.0)) == "2,3"
    assert orders_text((1.5, 2.0, 2.5, 10.0, 20.0)) == "1.5:2.5:0.5,10,20"
    assert orders_text((32.0,)) == "32"
    assert orders_text(parse_grid("1.1:1.9:0.1")) == "1.1:1.9:0.1"
    assert orders_text(parse_grid("2:64:1,100:500:100")) == "2:64:1,100:500:100"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(2, 300).map(float),
                          st.floats(1.0001, 1000, allow_nan=False).map(lambda x: round(x, 3))),
                min_size=1, max_size=30, unique=True))
def test_orders_text_reads_back_to_the_same_orders(orders):
    from pate_cli.orders import orders_text

    text = orders_text(tuple(orders))
    assert parse_grid(text) == tuple(orders)
    assert orders_text(parse_grid(text)) == text


def test_a_row_whose_epsilon_was_emptied_is_computed_again(cli, files, tmp_path, calls):
    """It was reused and written back with an empty epsilon."""
    import pandas as pd
    votes, _, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "-o", out, "-q").code == 0
    expected = out.read_bytes()
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    table.loc[1, "epsilon"] = ""
    table.to_csv(out, index=False)
    calls.clear()
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 0 and len(calls) == 1, result.err
    assert out.read_bytes() == expected


def test_another_grids_unfinished_rows_stay_in_the_sidecar(cli, files, tmp_path, calls):
    """A sidecar holding an unfinished run of another grid: resuming this grid writes only
    its own rows to --out (the other grid's half could pass for a finished one there) and
    leaves the other rows in the sidecar, where that grid's --resume finds them."""
    votes, _, _ = files
    out = tmp_path / "out.csv"
    other = ["-m", "gnmax", "--sigma", "5,6,7", "-w", "1", "--no-progress"]
    other_rows = read_sweep_rows(str(tmp_path / "other.csv")) if cli(
        votes, *other, "-o", tmp_path / "other.csv", "-q").code == 0 else None
    sidecar = tmp_path / "out.csv.partial"
    journal = RowJournal(str(sidecar), append=False)  # killed after two of its rows
    for row in other_rows[:2]:
        journal.append(row)
    journal.close()
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 0, result.err
    assert (f"Warning: {sidecar} holds 2 rows of points this run does not plan (another "
            f"grid's unfinished run): they stay there, not in {out}") in result.err
    assert out.read_bytes() == fresh(cli, tmp_path, votes, *GRID)
    assert read_journal(str(sidecar)) == read_journal(str(sidecar))[:2] != []
    calls.clear()
    result = cli(votes, *other, "-o", out, "--resume")  # that grid resumed: 1 row computed
    assert result.code == 0 and len(calls) == 1 and "Warning" not in result.err, result.err
    assert not sidecar.exists()
    assert read_sweep_rows(str(out))[:3] == other_rows


def test_a_run_without_resume_keeps_another_grids_rows_in_the_sidecar(cli, files, tmp_path,
                                                                     calls):
    """Without --resume the sidecar's rows of this grid are computed again (said with their
    number), and another grid's unfinished rows stay in it as under --resume (they were
    deleted with a note)."""
    votes, _, _ = files
    out = tmp_path / "out.csv"
    other = ["-m", "gnmax", "--sigma", "5,6,7", "-w", "1", "--no-progress"]
    assert cli(votes, *other, "-o", tmp_path / "other.csv", "-q").code == 0
    assert cli(votes, *GRID, "-o", tmp_path / "mine.csv", "-q").code == 0
    other_rows = read_sweep_rows(str(tmp_path / "other.csv"))
    sidecar = tmp_path / "out.csv.partial"
    journal = RowJournal(str(sidecar), append=False)  # both grids killed after two rows
    for row in other_rows[:2] + read_sweep_rows(str(tmp_path / "mine.csv"))[:2]:
        journal.append(row)
    journal.close()
    calls.clear()
    result = cli(votes, *GRID, "-o", out)
    assert result.code == 0 and len(calls) == 4, result.err
    assert (f"Warning: {sidecar} holds 2 rows of points this run does not plan (another "
            f"grid's unfinished run): they stay there, not in {out}") in result.err
    assert (f"note: computing every point afresh: {sidecar} held 2 rows of this grid's "
            "points, 2 of which --resume would reuse") in result.err
    assert out.read_bytes() == fresh(cli, tmp_path, votes, *GRID)
    assert read_journal(str(sidecar)) == other_rows[:2]


def test_an_older_sidecar_without_epsilon_max_is_read_not_called_damaged(cli, files, tmp_path,
                                                                        calls):
    """A sidecar of the release before ``epsilon_max``: its rows of this grid are computed
    again (as an older table's), another grid's stay in it; no line calls it damaged."""
    votes, _, _ = files
    out = tmp_path / "out.csv"
    other = ["-m", "gnmax", "--sigma", "5,6", "-w", "1", "--no-progress"]
    assert cli(votes, *other, "-o", tmp_path / "other.csv", "-q").code == 0
    assert cli(votes, *GRID, "-o", tmp_path / "mine.csv", "-q").code == 0
    older = [{key: value for key, value in row.items() if key != "epsilon_max"}
             for row in (read_sweep_rows(str(tmp_path / "other.csv"))
                         + read_sweep_rows(str(tmp_path / "mine.csv"))[:2])]
    sidecar = tmp_path / "out.csv.partial"
    sidecar.write_text("".join(json.dumps(row) + "\n" for row in older))
    calls.clear()
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 0 and len(calls) == 4, result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("Warning")]
    assert warnings == [f"Warning: {sidecar} holds 2 rows of points this run does not plan "
                        f"(another grid's unfinished run): they stay there, not in {out}"]
    assert out.read_bytes() == fresh(cli, tmp_path, votes, *GRID)
    assert [row["sigma"] for row in read_journal(str(sidecar))] == [5.0, 6.0]


def test_an_edited_figure_is_refused_or_computed_again(cli, files, tmp_path, calls):
    """Text in a number column: one line naming the table, exit 2, the table untouched; a
    negative epsilon_max (no epsilon is): its row computed again."""
    votes, _, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "-o", out, "-q").code == 0
    written = out.read_bytes()
    frame = pd.read_csv(out)
    frame["epsilon"] = frame["epsilon"].astype(object)
    frame.loc[0, "epsilon"] = "abc"
    frame.to_csv(out, index=False)
    edited = out.read_bytes()
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert result.err.startswith(f"Error: {out}: not a pate-sweep table (could not convert")
    assert out.read_bytes() == edited
    frame = pd.read_csv(io.BytesIO(written))
    frame.loc[1, "epsilon_max"] = -1.0
    frame.to_csv(out, index=False)
    calls.clear()
    result = cli(votes, *GRID, "-o", out, "--resume")
    assert result.code == 0 and len(calls) == 1, result.err
    assert out.read_bytes() == written


def test_the_note_without_resume_counts_only_the_rows_resume_would_reuse(cli, files,
                                                                         tmp_path, calls):
    """Rows of this grid made with other options (--conversion improved): --resume would
    compute them again, and the note says 0 of them would be reused (it said '--resume
    reuses them')."""
    votes, _, _ = files
    out, sidecar = tmp_path / "out.csv", tmp_path / "out.csv.partial"
    assert cli(votes, *GRID, "-o", tmp_path / "improved.csv", "--conversion", "improved",
               "-q").code == 0
    journal = RowJournal(str(sidecar), append=False)
    for row in read_sweep_rows(str(tmp_path / "improved.csv"))[:2]:
        journal.append(row)
    journal.close()
    result = cli(votes, *GRID, "-o", out)
    assert result.code == 0, result.err
    assert (f"note: computing every point afresh: {sidecar} held 2 rows of this grid's "
            "points, 0 of which --resume would reuse") in result.err
    assert not sidecar.exists()


def test_a_sidecar_row_replaces_the_tables_row_at_its_place():
    """The sidecar is newer: its row stands where the table has one at the same place (review
    R39: appending it instead recomputed rows a killed run had finished, 'reused 0 of 2')."""
    from pate_cli.sweep.columns import SWEEP_COLUMNS
    from pate_cli.sweep.resume import merge_rows

    def row(sigma, epsilon):
        made = {column: None for column in SWEEP_COLUMNS}
        made.update(file="v.npy", mechanism="gnmax", sigma=sigma, queries=300, epsilon=epsilon)
        return made

    table = [row(40.0, 1.0), row(80.0, 0.5)]
    merged = merge_rows(table, [row(40.0, 1.1), row(120.0, 0.3), row(120.0, 0.2)])
    assert [(r["sigma"], r["epsilon"]) for r in merged] == [(40.0, 1.1), (80.0, 0.5),
                                                            (120.0, 0.2)]
