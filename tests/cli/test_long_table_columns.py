"""``--columns`` (and ``--classes``) on every command that reads votes: a long table under
other names gives the numbers of the canonical ``query,class,count`` table (pate-analyze,
pate-report, pate-calibrate, pate-sweep, pate-plot selection), and refusals are one line."""

from __future__ import annotations

import json

import pytest

from tests.inputs.test_long_tables import CLASSES, NAMES, long_rows, write_table


@pytest.fixture
def tables(tmp_path):
    rows = long_rows()
    return (write_table(tmp_path / "canonical.csv", ["query", "class", "count"], [0, 1, 2],
                        rows),
            write_table(tmp_path / "named.csv", ["n", "token", "position"], [2, 1, 0], rows))


def json_of(result) -> dict:
    assert result.code == 0, result.err
    return json.loads(result.out)


KEPT = ("epsilon", "answered", "order", "epsilon_data_independent", "rdp_at_order")


def test_analyze(cli, tables):
    canonical, named = tables
    plain = json_of(cli.analyze(canonical, "--classes", CLASSES, "-m", "gnmax", "-f", "json"))
    mapped = json_of(cli.analyze(named, "--classes", CLASSES, "--columns", NAMES, "-m",
                                 "gnmax", "-f", "json"))
    assert {key: mapped[key] for key in KEPT} == {key: plain[key] for key in KEPT}


def test_analyze_says_which_columns_it_expected(cli, tables):
    result = cli.analyze(tables[1], "--classes", CLASSES)
    assert result.code == 2
    assert result.err.splitlines() == [
        f"Error: {tables[1]}: --classes K reads a long table with columns query,class,count "
        "(in any order, with an optional output; name others with --columns "
        "query=NAME,class=NAME,count=NAME); its header has n,token,position"]


def test_a_bad_map_is_a_usage_error(cli, tables):
    result = cli.analyze(tables[1], "--classes", CLASSES, "--columns", "query=position,x=y")
    assert result.code == 2 and len(result.err.splitlines()) == 1
    assert "Invalid value for '--columns': takes ROLE=NAME pairs" in result.err


def test_report(cli, tables, tmp_path):
    out = tmp_path / "report.md"
    result = cli.report(tables[1], "--classes", CLASSES, "--columns", NAMES, "-m", "gnmax",
                        "-o", out)
    assert result.code == 0, result.err
    assert "7 classes" in out.read_text()


def test_calibrate(cli, tables):
    canonical, named = tables
    args = ("--classes", CLASSES, "-m", "gnmax", "--target-epsilon", "3", "-f", "json")
    plain = json_of(cli.calibrate(canonical, *args))
    mapped = json_of(cli.calibrate(named, *args, "--columns", NAMES))
    assert mapped["solved"] == plain["solved"] and mapped["epsilon"] == plain["epsilon"]
    assert mapped["command"].endswith(f"--classes {CLASSES} --columns {NAMES}")


def test_sweep(cli, tables):
    canonical, named = tables
    args = ("-m", "gnmax", "--sigma", "5,10", "--classes", CLASSES, "-w", "1", "-q", "-f",
            "json")
    plain = [json.loads(line) for line in cli.sweep(canonical, *args).out.splitlines()]
    result = cli.sweep(named, *args, "--columns", NAMES)
    assert result.code == 0, result.err
    mapped = [json.loads(line) for line in result.out.splitlines()]
    assert [row["epsilon"] for row in mapped] == [row["epsilon"] for row in plain]
    assert len(mapped) == 2
    import pate_cli

    frame = pate_cli.run_sweep(str(named), ["gnmax"], sigma=[5, 10], classes=CLASSES,
                               columns=NAMES)
    assert frame["epsilon"].tolist() == [row["epsilon"] for row in plain]


def test_sweep_best_reruns_with_the_columns(cli, tables):
    result = cli.sweep(tables[1], "-m", "gnmax", "--sigma", "5,10", "--classes", CLASSES,
                       "--columns", NAMES, "-w", "1", "--best", "1000", "--accounting",
                       "data-independent")
    assert result.code == 0, result.err
    assert f"--classes {CLASSES} --columns {NAMES}" in result.err


def test_sweep_resume_matches_how_a_long_table_was_read(cli, tables, tmp_path):
    """--resume with --classes and --columns (refused before: a row recorded the file's
    sha256, not how the table was read): rows read the same way are reused, rows of
    another vocabulary are recomputed; the ``read`` column says how."""
    import pandas as pd
    out = tmp_path / "s.csv"
    named = ("--columns", NAMES, "--out", out, "-w", "1")
    first = cli.sweep(tables[1], "--sigma", "5,10", "--classes", CLASSES, *named)
    assert first.code == 0, first.err
    again = cli.sweep(tables[1], "--sigma", "5,10,20", "--classes", CLASSES, *named,
                      "--resume")
    assert again.code == 0 and "reused 2 of 3 rows" in again.err, again.err
    wider = cli.sweep(tables[1], "--sigma", "5,10,20", "--classes", CLASSES + 2, *named,
                      "--resume")
    assert wider.code == 0 and "reused 0 of 3 rows" in wider.err, wider.err
    assert set(pd.read_csv(out)["read"]) == {f"classes={CLASSES + 2} columns={NAMES}"}


def test_plot_selection(cli, tables, tmp_path):
    out = tmp_path / "selection.png"
    result = cli.plot("selection", tables[1], "--classes", CLASSES, "--columns", NAMES,
                      "--params", "20,5", "-o", out)
    assert result.code == 0, result.err
    assert out.stat().st_size > 0
    refused = cli.plot("selection", tables[1], "--classes", CLASSES, "--params", "20,5",
                       "-o", tmp_path / "other.png")
    assert refused.code == 2 and "its header has n,token,position" in refused.err


def test_every_votes_command_documents_columns_with_an_example(cli):
    for command, args in (("pate-analyze", ()), ("pate-report", ()), ("pate-calibrate", ()),
                          ("pate-sweep", ()), ("pate-plot", ("selection",))):
        result = cli.run(command, *args, "--help")
        assert result.code == 0
        text = " ".join(result.out.split())
        assert "--columns MAP" in text and "query=position,class=token,count=n" in text, command


def test_a_vocabulary_past_2_to_the_53_is_one_line(cli, tables):
    """--classes 2^63 overflowed a C long in the per-query pass (exit 1)."""
    done = cli.analyze(tables[0], "--classes", str(2**63), "-m", "gnmax", "--sigma", "20")
    assert done.code == 2 and "--classes must be a whole number from 2 to 2^53" in done.err
    assert done.err.count("\n") == 1
