"""An option the run does not use is refused (exit 2, one line naming it and why), never
silently ignored: a mechanism parameter the chosen mechanism does not take, an
individualized variant's knob without that variant, ``--predictions-layout`` without
``--predictions``, ``--ss-every`` without ``--ss-history``. The defaults never are."""

from __future__ import annotations

import json

import pytest

import pate_cli
from pate_cli.analysis.run_spec import MECHANISM_PARAMETERS
from pate_cli.mechanisms import GNMax
from pate_cli.mechanisms.aggregators import MECHANISMS, TAKEN_BY
from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
GROUPS = str(SAMPLES / "mnist_250_groups.csv")
ROUNDS = str(SAMPLES / "mnist_250_rounds.csv")
STUDENT = str(SAMPLES / "mnist_250_student.npy")

CASES = [  # (pate-analyze's arguments after VOTES, the whole line after "Error: ")
    (["--target-epsilon", "2"], "--target-epsilon applies to -m svt, not -m confident (it "
     "solves SVT-PATE's scale; for the others see pate-calibrate)"),
    (["-m", "gnmax", "--laplace-scale", "3"], "--laplace-scale applies to -m lnmax, not -m gnmax"),
    (["-m", "gnmax", "--svt-scale", "3"], "--svt-scale applies to -m svt, not -m gnmax"),
    (["-m", "lnmax", "--sigma", "3"],
     "--sigma applies to -m gnmax, confident, interactive, not -m lnmax"),
    (["-m", "gnmax", "--screening", "gaussian"], "--screening gaussian applies to the threshold "
     "step of -m confident, interactive, confident-exponential, not -m gnmax"),
    (["--confidence", "0.5"], "--confidence applies to -m interactive, not -m confident"),
    (["--eta", "0.1"], "--eta applies to -m exponential, confident-exponential, not -m confident"),
    (["-m", "gnmax", "-T", "3"], "-T/--threshold applies to -m confident, interactive, "
     "confident-exponential, not -m gnmax"),
    (["-m", "lnmax", "--sigma-threshold", "3"], "--sigma-threshold applies to -m confident, "
     "interactive, confident-exponential, not -m lnmax"),
    (["--svt-cutoff", "5"], "--svt-cutoff applies to -m svt, not -m confident"),
    (["-m", "exponential", "--svt-threshold", "5"],
     "--svt-threshold applies to -m svt, not -m exponential"),
    (["-m", "svt", "--sigma", "3"], "--sigma applies to -m gnmax, confident, interactive, "
     "not -m svt"),
    (["--power", "3"],
     "--power applies to --individualized vanishing (the exponent of the participation)"),
    (["--precision", "3"],
     "--precision applies to --individualized upsampling (it rounds the budget ratios)"),
    (["--weights", "budget"],
     "--weights applies to --individualized weighting (the rule for the teachers' weights)"),
    (["--individualized", "upsampling", "--groups", GROUPS, "--power", "3"],
     "--power applies to --individualized vanishing (the exponent of the participation)"),
    (["--individualized", "upsampling", "--groups", GROUPS, "--weights", "group-size"],
     "--weights applies to --individualized weighting (the rule for the teachers' weights)"),
    (["--individualized", "weighting", "--groups", GROUPS, "--precision", "1"],
     "--precision applies to --individualized upsampling (it rounds the budget ratios)"),
    (["--predictions-layout", "teachers-first"],
     "--predictions-layout applies to --predictions FILE (how that file is stored)"),
    (["--ss-every", "5"], "--ss-every applies to --ss-history FILE (the queries between its rows)"),
    (["--smooth-sensitivity", "--ss-every", "5"],
     "--ss-every applies to --ss-history FILE (the queries between its rows)"),
]


@pytest.mark.parametrize(("args", "line"), CASES, ids=[" ".join(c[0])[:40] for c in CASES])
def test_an_option_the_run_does_not_use_is_refused(cli, args, line):
    result = cli.analyze(VOTES, *args)
    assert (result.code, result.out) == (2, "")
    assert result.err == f"Error: {line} (see pate-analyze --help)\n"


@pytest.mark.parametrize(("args", "line"), [c for c in CASES if "--ss-every" not in c[0]][:3])
def test_pate_report_refuses_alike(cli, tmp_path, args, line):
    result = cli.report(VOTES, "-o", str(tmp_path / "r.md"), *args)
    assert result.code == 2 and result.err == f"Error: {line} (see pate-report --help)\n"
    assert not (tmp_path / "r.md").exists()


@pytest.mark.parametrize("mechanism", sorted(set(MECHANISMS) - {"interactive"}))
def test_every_mechanism_runs_with_the_defaults(cli, mechanism):
    assert cli.analyze(VOTES, "-m", mechanism, "-n", "200", "-f", "json").code == 0


@pytest.mark.parametrize("args", [
    ["-m", "interactive", "--student", STUDENT, "--confidence", "0.5", "--screening", "gaussian"],
    ["-m", "gnmax", "--screening", "exact"],  # the default's value: nothing to refuse
    ["-m", "svt", "--svt-cutoff", "5", "--svt-threshold", "200", "--svt-scale", "3"],
    ["--smooth-sensitivity", "--ss-history", "{tmp}/h.csv", "--ss-every", "50"],
    ["--smooth-sensitivity", "--ss-history", "{tmp}/h.csv"],
    # each round takes the parameters its own mechanism takes (confident, interactive)
    ["--rounds", ROUNDS, "--confidence", "0.5", "-T", "180", "--screening", "gaussian"],
])
def test_options_the_run_uses_pass(cli, tmp_path, args):
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    result = cli.analyze(VOTES, *args, "-n", "300", "-f", "json") if "--rounds" not in args \
        else cli.analyze(VOTES, *args, "-f", "json")
    assert result.code == 0, result.err


def _rounds_file(path, text: str) -> str:
    path.write_text(text)
    return str(path)


ROUND_CASES = [  # (pate-analyze's arguments after VOTES, the line after "Error: ")
    (["--rounds", ROUNDS, "-m", "lnmax"], "--rounds names each round's mechanism (its "
     "'mechanism' field): it does not combine with -m (got -m lnmax) (see pate-analyze "
     "--help)"),
    (["--rounds", ROUNDS, "-m", "confident"], "--rounds names each round's mechanism (its "
     "'mechanism' field): it does not combine with -m (got -m confident) (see pate-analyze "
     "--help)"),
    (["--rounds", ROUNDS, "--student", STUDENT], "--rounds names each interactive round's "
     "student (its 'student' field): it does not combine with --student (see pate-analyze "
     "--help)"),
    (["--rounds", ROUNDS, "--laplace-scale", "5"], "--laplace-scale applies to -m lnmax, not "
     f"-m confident or -m interactive (the mechanisms of the rounds of {ROUNDS}) (see "
     "pate-analyze --help)"),
    (["--rounds", ROUNDS, "--svt-scale", "3"], "--svt-scale applies to -m svt, not -m "
     f"confident or -m interactive (the mechanisms of the rounds of {ROUNDS}) (see "
     "pate-analyze --help)"),
    (["--rounds", ROUNDS, "--eta", "0.3"], "--eta applies to -m exponential, "
     "confident-exponential, not -m confident or -m interactive (the mechanisms of the "
     f"rounds of {ROUNDS}) (see pate-analyze --help)"),
    (["--rounds", "{gnmax}", "--confidence", "0.5"], "--confidence applies to -m interactive, "
     "not -m gnmax (the mechanisms of the rounds of {gnmax}) (see pate-analyze --help)"),
    (["--rounds", "{gnmax}", "--screening", "gaussian"], "--screening gaussian applies to the "
     "threshold step of -m confident, interactive, confident-exponential, not -m gnmax (the "
     "mechanisms of the rounds of {gnmax}) (see pate-analyze --help)"),
    (["--rounds", "{sigma}"], "{sigma}: round 1: sigma applies to gnmax, confident, "
     "interactive rounds, not to a lnmax round"),
    (["--rounds", "{both}", "--sigma", "99"], "--sigma is set by every round of {both} that "
     "takes it: the command's value would be ignored (see pate-analyze --help)"),
]


@pytest.mark.parametrize(("args", "line"), ROUND_CASES,
                         ids=[" ".join(c[0][2:])[:40] for c in ROUND_CASES])
def test_an_option_no_round_takes_is_refused(cli, tmp_path, args, line):
    """-m with --rounds (each round names its mechanism), --student (each interactive
    round names its student), a command-line parameter none of the rounds' mechanisms
    takes, a round's parameter its own mechanism does not take: refused, never ignored."""
    files = {"{gnmax}": _rounds_file(tmp_path / "g.csv", "rows,mechanism\n0:100,gnmax\n"),
             "{sigma}": _rounds_file(tmp_path / "s.csv", "rows,mechanism,sigma\n0:100,gnmax,30\n"
                                                         "100:200,lnmax,3\n"),
             "{both}": _rounds_file(tmp_path / "b.csv", "rows,mechanism,sigma\n0:100,gnmax,30\n"
                                                        "100:200,gnmax,40\n")}
    for name, path in files.items():
        args = [arg.replace(name, path) for arg in args]
        line = line.replace(name, path)
    result = cli.analyze(VOTES, *args)
    assert (result.code, result.out) == (2, "")
    assert result.err == f"Error: {line}\n"


def test_a_parameter_some_round_leaves_unset_is_its_default(cli, tmp_path):
    """A command-line parameter is the default of the rounds that do not set it: taken
    where one round leaves it empty (not refused, and not ignored)."""
    path = _rounds_file(tmp_path / "r.csv", "rows,mechanism,sigma\n0:100,gnmax,30\n"
                                            "100:200,gnmax,\n")
    given = cli.analyze(VOTES, "--rounds", path, "--sigma", "99", "-f", "json")
    other = cli.analyze(VOTES, "--rounds", path, "--sigma", "50", "-f", "json")
    assert given.code == other.code == 0, given.err
    assert json.loads(given.out)["epsilon"] < json.loads(other.out)["epsilon"]


def test_each_variant_takes_its_own_knob(cli):
    result = cli.analyze(VOTES, "--individualized", "upsampling", "--groups", GROUPS,
                         "--precision", "1", "--show-parameters")
    assert result.code == 0, result.err


def test_the_table_names_every_mechanism_parameter_and_mechanism():
    assert set(TAKEN_BY) == set(MECHANISM_PARAMETERS)
    assert set().union(*TAKEN_BY.values()) <= set(MECHANISMS)


def test_a_mechanism_object_keeps_its_own_refusal():
    with pytest.raises(TypeError, match="apply to a mechanism given by name"):
        pate_cli.analyze(VOTES, GNMax(sigma=40.0), laplace_scale=3.0, queries=10)
