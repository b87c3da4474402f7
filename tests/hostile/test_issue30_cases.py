"""Issue 30's crashes, hangs, confusing messages and overwrites, each through the command
(or the Python API) as a user meets it.

Every refusal is one ``Error:`` line on stderr and exit status 2 (no traceback); every
note is one ``Warning:`` line. Each test fails without its fix:

- weighted votes (rows above ``--teachers``) refused, averaged votes (rows summing to 1)
  noted, float32 totals shown with the digits that tell them apart;
- closed standard input, a FIFO (and ``<(command)``), a symbolic link as a sweep's
  ``OUT.partial``, a PNG of gigapixels, ``--tuning poisson:1e300``;
- ``pate-calibrate --scale-all`` proposing T above M, ``pate-sweep --best`` ranking by a
  data-dependent epsilon;
- the API given a name, a DataFrame, a list, a fractional or boolean ``queries``, an
  unknown sweep mechanism; ``--index-col`` and a pandas-written labels file;
  ``--orders`` with a repeated order (the default grid has 100 twice).
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
import pytest

import pate_cli
from pate_cli.errors import InputError, OptionError
from tests import SAMPLES

VOTES_FILE = SAMPLES / "mnist_250_votes.npy"
LABELS_FILE = SAMPLES / "mnist_250_labels.npy"


@pytest.fixture(scope="module")
def votes() -> np.ndarray:
    return np.asarray(np.load(VOTES_FILE)[:200])


def one_error(result, *words: str) -> str:
    """The run exited 2 with exactly one ``Error:`` line holding ``words``."""
    lines = result.err.strip().splitlines()
    assert result.code == 2, result
    assert len(lines) == 1, result.err
    assert lines[0].startswith("Error: "), result.err
    assert "Traceback" not in result.err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def warning_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("Warning: ")]


def epsilon_of(result) -> float:
    import json
    assert result.code == 0, result.err
    return json.loads(result.out)["epsilon"]


# --- item 3: the sensitivity of weighted votes ----------------------------------------------

def test_rows_above_teachers_are_refused_with_the_reason(cli, votes, tmp_path):
    path = tmp_path / "weighted.npy"
    np.save(path, votes.astype(np.float64))  # rows sum to 250
    line = one_error(cli.analyze(path, "--teachers", 100), "query 0 has 250 votes",
                     "more than --teachers 100", "weights exceed 1")
    assert "--individualized weighting" in line
    with pytest.raises(InputError, match="weights exceed 1"):
        pate_cli.analyze(path, teachers=100)
    with pytest.raises(InputError, match="weights exceed 1"):
        pate_cli.analyze(votes, teachers=100)  # an array, as a file


def test_rows_at_or_below_teachers_still_pass(cli, votes, tmp_path):
    partial = votes.astype(np.float64)
    partial[::2, 0] = np.maximum(partial[::2, 0] - 3, 0)  # some teachers abstained
    path = tmp_path / "partial.npy"
    np.save(path, partial)
    assert cli.analyze(path, "--teachers", 250, "-f", "json").code == 0


def test_float32_rows_within_their_rounding_pass_under_teachers(cli, votes, tmp_path):
    rows = votes.astype(np.float32)
    rows[0, rows[0].argmax()] += np.float32(0.00003)  # 250.00003 in float32
    path = tmp_path / "f32.npy"
    np.save(path, rows)
    assert float(rows[0].sum(dtype=np.float64)) > 250
    assert cli.analyze(path, "--teachers", 250, "-f", "json").code == 0


def test_averaged_votes_get_one_warning_to_give_teachers(cli, votes, tmp_path):
    path = tmp_path / "averaged.npy"
    np.save(path, votes / 250.0)  # probabilities averaged over 250 teachers
    result = cli.analyze(path, "-f", "json")
    assert result.code == 0, result.err
    notes = [line for line in warning_lines(result.err) if "sums to 1" in line]
    assert len(notes) == 1, result.err
    assert "--teachers M" in notes[0]
    with pytest.warns(pate_cli.PateWarning, match="sums to 1"):
        pate_cli.analyze(votes / 250.0, queries=20)
    counts = cli.analyze(VOTES_FILE, "-n", 20, "-f", "json")
    assert not [line for line in warning_lines(counts.err) if "sums to 1" in line]


def test_averaged_votes_warn_in_one_line_in_sweep_and_plot(cli, votes, tmp_path):
    path = tmp_path / "averaged.npy"
    np.save(path, votes[:40] / 250.0)
    sweep = cli.sweep(path, "--sigma", "0.1,0.2", "-w", 1)
    plot = cli.plot("selection", path, "-o", tmp_path / "s.svg", "--params", "0.8,0.6")
    for result in (sweep, plot):
        assert result.code == 0, result.err
        assert "PateWarning" not in result.err
        notes = [line for line in warning_lines(result.err) if "sums to 1" in line]
        assert len(notes) == 1, result.err


def test_float32_totals_are_shown_with_the_digits_that_differ(cli, votes, tmp_path):
    rows = votes.astype(np.float32)
    rows[0, rows[0].argmax()] -= np.float32(0.00002)
    rows[1, rows[1].argmax()] += np.float32(0.00002)
    path = tmp_path / "f32.npy"
    np.save(path, rows)
    line = one_error(cli.analyze(path), "query 1 has 250.00002 votes",
                     "query 0 has 249.99998", "float32 rounding", "--teachers")
    assert "has 250 votes" not in line


# --- item 7: streams, links, sizes -----------------------------------------------------------

def test_closed_standard_input_is_one_line(cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)  # what `pate-analyze - <&-` gives Python
    one_error(cli.analyze("-"), "<stdin>", "closed")


def test_closed_standard_input_through_the_script(cli):
    import subprocess
    done = subprocess.run([cli.script("pate-analyze"), "-"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: os.close(0))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "Error: <stdin>: no input (the standard input is closed)"]


def _fifo_writer(path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(path, "wb") as handle:  # blocks until the reader opens the FIFO
            handle.write(data)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("suffix", [".csv", ".npy", ""])
def test_a_fifo_is_read_not_called_empty(cli, votes, tmp_path, suffix):
    import io
    text = "\n".join(",".join(str(int(x)) for x in row) for row in votes).encode() + b"\n"
    buffer = io.BytesIO()
    np.save(buffer, votes)
    data = buffer.getvalue() if suffix == ".npy" else text
    fifo = tmp_path / f"votes{suffix}"
    os.mkfifo(fifo)
    writer = _fifo_writer(fifo, data)
    piped = epsilon_of(cli.analyze(fifo, "-f", "json"))
    writer.join(timeout=10)
    assert piped == epsilon_of(cli.analyze(VOTES_FILE, "-n", len(votes), "-f", "json"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_an_empty_fifo_says_so(cli, tmp_path):
    fifo = tmp_path / "votes.csv"
    os.mkfifo(fifo)
    writer = _fifo_writer(fifo, b"")
    one_error(cli.analyze(fifo), "votes.csv", "no input")
    writer.join(timeout=10)


def test_a_gigapixel_png_is_refused_at_once(cli, plot_runs, tmp_path):
    started = time.monotonic()
    out = tmp_path / "h.png"
    one_error(cli.plot("history", plot_runs["confident"], "-o", out, "--dpi", 1200,
                       "--width", 40, "--height", 40), "2,304 megapixels", "limit of 50")
    assert time.monotonic() - started < 30  # 0.1 s on quiet cores: hundreds of times that
    assert not out.exists()
    help_text = cli.plot("history", "--help").out
    assert "50 megapixels" in " ".join(help_text.split())


def test_vector_figures_and_the_largest_default_png_are_drawn(cli, plot_runs, tmp_path):
    assert cli.plot("history", plot_runs["confident"], "-o", tmp_path / "h.svg",
                    "--dpi", 1200, "--width", 40, "--height", 40).code == 0
    assert cli.plot("history", plot_runs["confident"], "-o", tmp_path / "h.png",
                    "--dpi", 1200).code == 0  # 7 x 4.2 inches: 42 megapixels


def test_a_sidecar_that_is_a_link_is_never_written_through(cli, tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("do not touch\n")
    out = tmp_path / "out.csv"
    sidecar = tmp_path / "out.csv.partial"
    os.symlink(victim, sidecar)
    result = cli.sweep(VOTES_FILE, "-n", 50, "--sigma", "20,40", "-w", 1, "--out", out)
    assert result.code == 0, result.err
    assert victim.read_text() == "do not touch\n"
    assert out.exists() and not os.path.lexists(sidecar)


def test_a_sidecar_link_is_replaced_while_the_rows_are_journalled(tmp_path):
    from pate_cli.sweep.columns import SWEEP_COLUMNS
    from pate_cli.sweep.journal import RowJournal, read_journal
    victim = tmp_path / "precious.txt"
    victim.write_text("do not touch\n")
    sidecar = tmp_path / "out.csv.partial"
    for append in (False, True):
        if os.path.lexists(sidecar):
            os.remove(sidecar)
        os.symlink(victim, sidecar)
        journal = RowJournal(str(sidecar), append=append)
        journal.append(dict.fromkeys(SWEEP_COLUMNS, 1))
        journal.close()
        assert journal.intact and not os.path.islink(sidecar)
        assert len(read_journal(str(sidecar))) == 1
        assert victim.read_text() == "do not touch\n"


@pytest.mark.parametrize("law", ["poisson:1e300", "geometric:1e10", "negbin:1e12,0.5"])
def test_an_absurd_tuning_mean_is_one_line(cli, law):
    one_error(cli.analyze(VOTES_FILE, "-n", 50, "--tuning", law), "--tuning",
              "outside the supported range")
    one_error(cli.sweep(VOTES_FILE, "-n", 50, "-w", 1, "--tuning", law), "--tuning")
    with pytest.raises(OptionError, match="supported range"):
        pate_cli.analyze(VOTES_FILE, queries=50, tuning=law)


def test_the_largest_tuning_mean_prints_a_readable_figure(cli):
    result = cli.analyze(VOTES_FILE, "-n", 50, "--tuning", "poisson:1e9")
    assert result.code == 0, result.err
    line = next(line for line in result.out.splitlines() if line.startswith("with tuning"))
    assert len(line.split()[2]) < 20, line


def test_calibrate_says_when_scale_all_puts_the_threshold_above_m(cli):
    result = cli.calibrate(VOTES_FILE, "--target-epsilon", "0.5", "--scale-all", "-n", 100)
    assert result.code == 0, result.err
    notes = [line for line in warning_lines(result.err) if "above the 250 teachers" in line]
    assert len(notes) == 1, result.err
    plain = cli.calibrate(VOTES_FILE, "--target-epsilon", "3", "--scale-all", "-n", 100)
    assert plain.code == 0 and "above the 250 teachers" not in plain.err


def test_best_by_a_data_dependent_epsilon_prints_one_warning(cli):
    grid = (VOTES_FILE, "-n", 100, "--sigma", "20,40", "-w", 1, "--best", 10)
    replay = cli.sweep(*grid)
    assert replay.code == 0, replay.err
    notes = [line for line in warning_lines(replay.err) if "--best" in line]
    assert len(notes) == 1 and "depends on the private votes" in notes[0]
    independent = cli.sweep(*grid, "--accounting", "data-independent")
    assert independent.code == 0  # Confident: the rows' answered counts are the votes'
    notes = [line for line in warning_lines(independent.err) if "--best" in line]
    assert len(notes) == 1 and "does not cover the choice" in notes[0]
    searched = cli.sweep(*grid, "--accounting", "data-independent", "--tuning", "poisson:2")
    assert searched.code == 0  # the search's cost is in the tuning columns
    assert not [line for line in warning_lines(searched.err) if "--best" in line]
    gnmax = cli.sweep(*grid, "-m", "gnmax", "--accounting", "data-independent")
    assert gnmax.code == 0  # every row answers every query: nothing chosen on the votes
    assert not [line for line in warning_lines(gnmax.err) if "--best" in line]


# --- item 7: the Python API ------------------------------------------------------------------

def test_analyze_votes_with_a_name_is_an_option_error(votes):
    with pytest.raises(OptionError, match="pate_cli.analyze"):
        pate_cli.analyze_votes(votes, "gnmax")
    with pytest.raises(OptionError, match="mechanism object"):
        pate_cli.analyze_votes(votes, 3)


def test_a_dataframe_or_a_list_of_rows_is_analysed_as_the_array(votes):
    import pandas as pd
    expected = pate_cli.analyze(votes, queries=50).epsilon
    assert pate_cli.analyze(pd.DataFrame(votes), queries=50).epsilon == expected
    assert pate_cli.analyze(votes.tolist(), queries=50).epsilon == expected


@pytest.mark.parametrize("bad, words", [
    ([[1, 2], [3]], "rows of different lengths"),
    ([["a", "b"], ["c", "d"]], "not numbers"),
    ([[-1, 3], [2, 0]], "negative"),
    ([[1, 2], [2, 2]], "query 1 has 4 votes but query 0 has 3"),
])
def test_bad_arrays_get_the_file_checks(bad, words):
    with pytest.raises(InputError, match=words):
        pate_cli.analyze(bad)


@pytest.mark.parametrize("queries", [10.5, True, "10"])
def test_queries_must_be_a_whole_number(votes, queries):
    with pytest.raises(OptionError, match="whole number"):
        pate_cli.analyze(votes, queries=queries)


def test_queries_as_a_whole_float_is_that_number(votes):
    assert (pate_cli.analyze(votes, queries=10.0).epsilon
            == pate_cli.analyze(votes, queries=10).epsilon)


def test_an_unknown_sweep_mechanism_is_an_option_error():
    with pytest.raises(OptionError, match="unknown mechanism 'foo'"):
        pate_cli.run_sweep(VOTES_FILE, ["foo"], queries=[20])
    frame = pate_cli.run_sweep(VOTES_FILE, "GNMax", queries=[20])
    assert list(frame["mechanism"]) == ["gnmax"]


# --- item 7: --index-col on the labels, repeated orders --------------------------------------

def test_index_col_drops_the_index_of_a_pandas_labels_file(cli, votes, tmp_path):
    import pandas as pd
    labels = np.load(LABELS_FILE)[: len(votes)]
    pd.DataFrame(votes).to_csv(tmp_path / "votes.csv")            # index and header
    pd.Series(labels, name="label").to_csv(tmp_path / "labels.csv")  # index and header
    np.save(tmp_path / "labels.npy", labels)
    with_index = cli.analyze(tmp_path / "votes.csv", "--index-col", 0,
                             "--labels", tmp_path / "labels.csv", "-f", "json")
    plain = cli.analyze(VOTES_FILE, "-n", len(votes), "--labels", tmp_path / "labels.npy",
                        "-f", "json")
    import json
    assert with_index.code == 0, with_index.err
    assert (json.loads(with_index.out)["label_accuracy"]
            == json.loads(plain.out)["label_accuracy"])
    npy_labels = cli.analyze(tmp_path / "votes.csv", "--index-col", 0,
                             "--labels", tmp_path / "labels.npy", "-f", "json")
    assert npy_labels.code == 0, npy_labels.err  # .npy labels are read as they are
    one_error(cli.analyze(VOTES_FILE, "-n", len(votes), "--labels", tmp_path / "labels.csv"),
              "looks like a pandas index", "--index-col 0")


def test_a_repeated_order_is_accepted_as_in_the_default_grid(cli):
    from pate_cli.orders import default_orders, parse_orders
    grid = default_orders()
    assert np.unique(grid).size < grid.size  # 100 twice: the paper's grid, kept exactly
    text = ",".join(repr(float(x)) for x in grid)
    assert np.array_equal(parse_orders(text), grid)
    once = epsilon_of(cli.analyze(VOTES_FILE, "-n", 50, "--orders", "2,3,50", "-f", "json"))
    twice = epsilon_of(cli.analyze(VOTES_FILE, "-n", 50, "--orders", "2,3,3,50,50",
                                   "-f", "json"))
    assert once == twice
    default = epsilon_of(cli.analyze(VOTES_FILE, "-n", 50, "-f", "json"))
    assert epsilon_of(cli.analyze(VOTES_FILE, "-n", 50, "--orders", text,
                                  "-f", "json")) == default
