"""Every cross-option rule is the API's: pate-analyze and pate_cli.analyze refuse the same
combinations with the same message (exit 2 for the command, ``OptionError`` for the API),
before any work. Combinations that used to be silently ignored are refused now."""

from __future__ import annotations

import pytest

import pate_cli
from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
GROUPS = str(SAMPLES / "mnist_250_groups.csv")
ROUNDS = str(SAMPLES / "mnist_250_rounds.csv")
STUDENT = str(SAMPLES / "mnist_250_student.npy")
GAN = str(SAMPLES.parent / "tests" / "regression" / "gan_rdp.csv")

CASES = [
    # (command-line arguments, API keywords, words of the message)
    (["--rounds", ROUNDS, "--individualized", "upsampling", "--groups", GROUPS],
     dict(rounds=ROUNDS, individualized="upsampling", groups=GROUPS),
     "--rounds does not combine with --individualized"),
    (["--add-rdp", GAN, "--individualized", "upsampling", "--groups", GROUPS],
     dict(add_rdp=GAN, individualized="upsampling", groups=GROUPS),
     "--add-rdp does not combine with --individualized"),
    (["--rounds", ROUNDS, "--budget", "2"], dict(rounds=ROUNDS, budget=2.0),
     "--rounds sets the rows of each round"),
    (["-m", "svt", "--svt-scale", "1", "--target-epsilon", "2"],
     dict(mechanism="svt", svt_scale=1.0, target_epsilon=2.0),
     "give --svt-scale or --target-epsilon, not both"),
    (["-m", "svt", "--budget", "2"], dict(mechanism="svt", budget=2.0),
     "--budget does not apply to -m svt"),
    (["-m", "gnmax", "--student", STUDENT], dict(mechanism="gnmax", student=STUDENT),
     "--student only applies to -m interactive"),
    (["-m", "interactive"], dict(mechanism="interactive"), "-m interactive needs --student"),
    (["--individualized", "weighting", "--groups", GROUPS],
     dict(individualized="weighting", groups=GROUPS),
     "--individualized weighting needs --predictions FILE and --teacher-groups FILE"),
    (["-n", "9001"], dict(queries=9001), "--queries 9001 is larger than the 9000 queries"),
    (["--smooth-sensitivity", "--rounds", ROUNDS], dict(smooth_sensitivity=True, rounds=ROUNDS),
     "--smooth-sensitivity applies to single runs"),
    (["-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "auto", "--decisions", GAN],
     dict(mechanism="svt", target_epsilon=8.0, svt_cutoff="auto", decisions=GAN),
     "--svt-cutoff auto chooses the cut-off by replaying"),
]


@pytest.mark.parametrize(("args", "keywords", "message"), CASES,
                         ids=[case[2][:40] for case in CASES])
def test_the_command_and_the_api_refuse_alike(cli, args, keywords, message):
    result = cli.analyze(VOTES, *args)
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1 and message in result.err
    keywords = dict(keywords)
    mechanism = keywords.pop("mechanism", None)
    with pytest.raises(pate_cli.OptionError) as refused:
        pate_cli.analyze(VOTES, mechanism, **keywords)
    assert message in str(refused.value)
    assert str(refused.value) in result.err  # the very same message
