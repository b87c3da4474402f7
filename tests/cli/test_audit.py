"""``pate-audit`` through its command line (cli:pate-audit): the shipped examples' verdicts
and exit statuses, the JSON keys, the text's rounding, and one-line refusals (exit 2)."""

from __future__ import annotations

import json
import re

import pytest

from pate_cli.rounding import ceil_text, floor_text
from tests import ROOT, SAMPLES

VOTES = SAMPLES / "mnist_250_votes.npy"
EXAMPLES = ROOT / "examples" / "broken_aggregators.py"
CLAIM = ("-m", "gnmax", "--sigma", "40", "--draws", "200000")


@pytest.mark.parametrize("function", ["tenth_sigma", "laplace_instead"])
def test_the_broken_examples_are_caught(cli, function):
    done = cli.audit(VOTES, *CLAIM, "--aggregator", f"{EXAMPLES}:{function}", "-f", "json")
    assert done.code == 3, done.err
    audit = json.loads(done.out)["audit"]
    assert audit["verdict"] == "violated"
    assert audit["epsilon_lower"] > audit["epsilon_upper"]
    assert done.err.startswith("Error: the measured lower bound ") and \
        done.err.count("\n") == 1


def test_the_correct_example_passes(cli):
    done = cli.audit(VOTES, *CLAIM, "--aggregator", f"{EXAMPLES}:gnmax", "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert summary["audit"]["verdict"] == "consistent"
    assert summary["aggregator"]["name"].endswith("broken_aggregators.py:gnmax")
    assert len(summary["aggregator"]["sha256"]) == 64


def test_a_query_s_claim_and_row_say_they_are_not_for_publication(cli):
    """--query's claim depends on the private votes and its pair is one of their rows: the
    text and the JSON say so (review R13)."""
    done = cli.audit(VOTES, "-m", "gnmax", "--sigma", "8", "--query", "3133", "--compose", "5",
                     "--draws", "400")
    assert done.code == 0, done.err
    claim = next(line for line in done.out.splitlines() if line.startswith("epsilon upper"))
    assert claim.endswith("(data-dependent RDP, improved conversion; unsanitised: not for "
                          "publication)")
    assert "query 3133 (the votes' own row: private, not for publication)" in done.out
    audit = json.loads(cli.audit(VOTES, "-m", "gnmax", "--sigma", "8", "--query", "3133",
                                 "--compose", "5", "--draws", "400", "-f", "json").out)["audit"]
    assert audit["upper_accountant"].endswith("unsanitised: not for publication")
    assert "not for publication" in audit["pair"]["description"]


def test_the_json_summary(cli):
    done = cli.audit(VOTES, *CLAIM, "--seed", "5", "--confidence", "0.9", "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert summary["tool"] == "pate-audit" and summary["seed"] == 5
    assert summary["input"]["sha256"] and summary["input"]["teachers"] == 250
    assert summary["params"] == {"sigma": 40}
    audit = summary["audit"]
    assert {"epsilon_lower", "epsilon_upper", "delta", "confidence", "draws", "pair",
            "verdict"} <= set(audit)
    assert (audit["confidence"], audit["draws"], audit["delta"]) == (0.9, 200_000, 1e-5)
    assert audit["pair"]["first"] == [125, 124, 1, 0, 0, 0, 0, 0, 0, 0]
    assert audit["pair"]["second"] == [124, 125, 1, 0, 0, 0, 0, 0, 0, 0]
    again = cli.audit(VOTES, *CLAIM, "--seed", "5", "--confidence", "0.9", "-f", "json")
    assert again.out == done.out


def test_the_text_names_a_measurement_and_rounds_each_bound_its_safe_way(cli):
    done = cli.audit(VOTES, *CLAIM)
    assert done.code == 0, done.err
    figures = json.loads(cli.audit(VOTES, *CLAIM, "-f", "json").out)["audit"]
    lines = {line.split("  ")[0]: line for line in done.out.splitlines()}
    assert lines["epsilon upper"].startswith(
        f"epsilon upper  {ceil_text(figures['epsilon_upper'])} at delta 1e-05: the claim")
    assert lines["epsilon lower"] == (
        f"epsilon lower  {floor_text(figures['epsilon_lower'])}: measured lower bound "
        "(Clopper-Pearson, 95%, 100,000 of 200,000 draws per side; the others chose the event)")
    assert float(ceil_text(figures["epsilon_upper"])) >= figures["epsilon_upper"]
    assert float(floor_text(figures["epsilon_lower"])) <= figures["epsilon_lower"]


def write(tmp_path, text: str):
    path = tmp_path / "mine.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize("source, function, message", [
    (None, "f", "no such file"),
    ("import numpy as np\n", "missing", "defines no function 'missing'"),
    ("raise ImportError('needs torch')\n", "f", "importing it failed: ImportError: needs torch"),
    ("def f(votes rng):\n", "f", "importing it failed: SyntaxError"),
    ("f = 3\n", "f", "'f' is not a function"),
    ("def f(votes, rng):\n    raise ValueError('bad')\n", "f", "raised ValueError: bad"),
    ("import numpy as np\ndef f(votes, rng):\n    return np.zeros((len(votes), 2), int)\n",
     "f", r"returned shape \(65536, 2\)"),
    ("import numpy as np\ndef f(votes, rng):\n    return np.zeros(len(votes))\n", "f",
     "float64 labels"),
])
def test_a_bad_aggregator_is_one_line_and_exit_2(cli, tmp_path, source, function, message):
    path = tmp_path / "absent.py" if source is None else write(tmp_path, source)
    done = cli.audit(VOTES, *CLAIM, "--aggregator", f"{path}:{function}")
    assert done.code == 2, done.err
    assert done.out == "" and done.err.count("\n") == 1 and "Traceback" not in done.err
    assert done.err.startswith("Error: ")
    assert re.search(message, done.err), done.err


@pytest.mark.parametrize("args, message", [
    (("--draws", "0"), "Invalid value for '--draws': 0 is not in the range x>=2"),
    (("--aggregator", "mine.py"), "expected FILE.py:FUNCTION"),
    (("--query", "9000"), "--query 9000: the votes have 9000 rows"),
    (("-m", "svt"), "Invalid value for '-m' / '--mechanism'"),
    # a trial's tallies and rows hold (queries) x (classes + 1) values: 10^11 composed
    # queries tried to allocate 5.8 TiB (exit 1)
    (("--compose", "100000000000"), "--compose 100,000,000,000: at most 95,325 queries of 11 "
                                    "outcomes"),
])
def test_bad_options_are_one_line_and_exit_2(cli, args, message):
    done = cli.audit(VOTES, "--draws", "1000", *args)
    assert done.code == 2 and message in done.err and done.err.count("\n") == 1, done.err


@pytest.mark.parametrize("votes, options, message", [
    # refused as the votes are read (more than 2^53 teachers), before the audit's own checks
    ("huge", (), "query 0 has 3e+300 votes, more than 2^53 (9.0e15)"),
    ("huge", ("--query", "0"), "query 0 has 3e+300 votes, more than 2^53 (9.0e15)"),
    ("vocabulary", (), "at most 10,000,000 classes, got 10,000,000,000"),
])
def test_votes_the_pair_cannot_hold_are_one_line_and_exit_2(cli, tmp_path, votes, options,
                                                           message):
    """Rows of 1e300 votes (an int64 overflow, exit 1 before) and a sparse file of 10^10
    classes (a 75 GiB histogram, exit 1 before)."""
    import numpy as np
    import scipy.sparse
    path = tmp_path / f"{votes}.{'npy' if votes == 'huge' else 'npz'}"
    if votes == "huge":
        np.save(path, np.full((2, 3), 1e300))
    else:
        scipy.sparse.save_npz(path, scipy.sparse.csr_matrix(
            (np.array([7, 3, 7, 3]), np.array([0, 5, 1, 9]), np.array([0, 2, 4])),
            shape=(2, 10**10)))
    done = cli.audit(path, "-m", "gnmax", "--sigma", "5", "--draws", "1000", *options)
    assert done.code == 2 and message in done.err and done.err.count("\n") == 1, done.err


def test_votes_of_a_fractional_teacher_count_name_their_file(cli, tmp_path):
    """Rows summing to 3.5: one line naming the file (cli:formats), exit 2."""
    import numpy as np
    path = tmp_path / "floats.npy"
    np.save(path, np.array([[1.5, 2.0], [2.0, 1.5]]))
    done = cli.audit(path, "-m", "gnmax", "--sigma", "5", "--draws", "1000")
    assert done.code == 2 and done.err.count("\n") == 1, done.err
    assert done.err.startswith(f"Error: {path}: the votes' rows sum to 3.5"), done.err


def test_missing_votes(cli, tmp_path):
    done = cli.audit(tmp_path / "none.npy")
    assert done.code == 2 and "no such file" in done.err and done.err.count("\n") == 1


def test_composed_queries(cli):
    done = cli.audit(VOTES, "-m", "gnmax", "--sigma", "40", "--draws", "20000", "--compose",
                     "10", "--aggregator", f"{EXAMPLES}:laplace_instead", "-f", "json")
    assert done.code == 3, done.err
    audit = json.loads(done.out)["audit"]
    assert audit["queries"] == 10 and audit["verdict"] == "violated"
    assert set(audit["event"]) in ({"labels", "favours", "at_least"},
                                   {"labels", "favours", "at_most"})
    text = cli.audit(VOTES, "-m", "gnmax", "--sigma", "40", "--draws", "20000", "--compose",
                     "10")
    assert text.code == 0
    assert "gnmax (sigma=40), 10 identical queries" in text.out
    assert "20,000 trials of 10 queries per side" in text.out


def test_an_aggregator_that_prints_leaves_the_json_on_stdout_whole(cli, tmp_path):
    """Its prints go to stderr (they came before the JSON summary on stdout)."""
    source = tmp_path / "prints.py"
    source.write_text("import numpy as np\n\ndef f(votes, rng):\n    print('hello')\n"
                      "    return np.argmax(votes + rng.normal(0, 40, votes.shape), axis=1)\n")
    done = cli.audit(VOTES, "--draws", "2000", "--aggregator", f"{source}:f", "-f", "json")
    assert done.code == 0, done.err
    assert json.loads(done.out)["audit"]["draws"] == 2000 and "hello" in done.err


@pytest.mark.parametrize("options, message", [
    (("-m", "gnmax", "--laplace-scale", "3"), "--laplace-scale applies to -m lnmax, not -m gnmax"),
    (("-m", "lnmax", "--sigma", "3"), "--sigma applies to -m gnmax, confident, not -m lnmax"),
    (("-m", "gnmax", "-T", "100"), "-T/--threshold applies to -m confident, "
                                   "confident-exponential, not -m gnmax"),
])
def test_a_parameter_the_claim_does_not_take_is_refused(cli, options, message):
    """As pate-analyze: a noise parameter of another mechanism is refused, not ignored; the
    message names the mechanisms pate-audit audits (not Interactive-GNMax)."""
    ran = cli.audit(VOTES, *options, "--draws", "100")
    assert ran.code == 2 and ran.err == f"Error: {message}\n"


@pytest.mark.parametrize("lower, upper, texts", [
    (1.0000833, 1.0, ("1.00008", "1.00000")),  # 4 decimals printed 1.0000 twice
    (0.27005371, 0.1096, ("0.2700", "0.1096")),
    (0.5, 1.0, ("0.5000", "1.0000")),
    (1.5e-5, 1.379e-5, ("0.000015", "0.000014")),
])
def test_a_violation_prints_a_lower_bound_above_the_claim(lower, upper, texts):
    """The lower bound rounds down and the claim up; where 4 decimals make them equal, more
    digits show which is above (a violated verdict read '1.0000 exceeds 1.0000')."""
    from pate_cli.outputs.audit import bounds_text

    assert bounds_text(lower, upper) == texts
    low, up = (float(text) for text in texts)
    assert low <= lower and up >= upper


def _long_table(path, votes, header="query,class,count") -> None:
    lines = [header] + [f"{query},{label},{count}" for query, row in enumerate(votes)
                        for label, count in enumerate(row) if count]
    path.write_text("\n".join(lines) + "\n")


def test_a_long_table_is_audited_with_classes_and_columns(cli, tmp_path):
    """A long query,class,count table asked for '--classes K', an option pate-audit did
    not have: it takes --classes and --columns as pate-analyze does, and audits the
    same votes as the dense file."""
    votes = [[3, 1, 0], [2, 2, 0], [4, 0, 0]] * 20
    dense, table, renamed = tmp_path / "v.csv", tmp_path / "long.csv", tmp_path / "n.csv"
    dense.write_text("\n".join(",".join(map(str, row)) for row in votes) + "\n")
    _long_table(table, votes)
    _long_table(renamed, votes, header="pos,tok,n")
    claim = ("-m", "gnmax", "--sigma", "2", "--draws", "20000", "-f", "json")
    refused = cli.audit(table, *claim)
    assert refused.code == 2 and "needs --classes K" in refused.err
    expected = json.loads(cli.audit(dense, *claim).out)["audit"]
    for args in ((table, "--classes", "3"),
                 (renamed, "--classes", "3", "--columns", "query=pos,class=tok,count=n")):
        done = cli.audit(*args, *claim)
        assert done.code == 0, done.err
        summary = json.loads(done.out)
        assert summary["input"]["classes"] == 3 and summary["audit"] == expected
    assert "--classes K" in cli.audit("--help").out


def test_an_output_over_the_aggregators_file_is_refused(cli, tmp_path):
    """-o naming the --aggregator's file had replaced the user's source with the table."""
    source = tmp_path / "mine.py"
    source.write_bytes(EXAMPLES.read_bytes())
    before = source.read_bytes()
    done = cli.audit(VOTES, *CLAIM, "--aggregator", f"{source}:gnmax", "-o", str(source))
    assert done.code == 2 and done.err.count("\n") == 1 and "--aggregator" in done.err
    assert source.read_bytes() == before
