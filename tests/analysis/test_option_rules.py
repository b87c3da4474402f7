"""The one table of option rules (analysis/run_spec.py): every rule fires, before any
input is read, with the same line through the API and through pate-analyze."""

from __future__ import annotations

import pytest

from pate_cli import analyze
from pate_cli.analysis.run_spec import RULES, RunSpec, check_options
from pate_cli.errors import OptionError
from pate_cli.mechanisms import SVTPATE
from tests import ROOT

VOTES = ROOT / "sample_votes" / "mnist_250_votes.npy"
MISSING = "no-such-file.csv"  # never read: the rules refuse first

# (analyze()'s keywords, pate-analyze's options or None when click refuses the value
# itself, the start of the line both give)
CASES = [
    (dict(delta=[1e-5, 1e-6]), None, "--delta must be one number in (0, 1), got [1e-05, 1e-06]"),
    (dict(delta=1.0), None, "--delta must be one number in (0, 1), got 1.0"),
    (dict(budget="2"), None, "--budget must be a positive number, got '2'"),
    (dict(workers=0), None, "--workers must be a whole number of at least 1, got 0"),
    (dict(chunk_size=0), None, "chunk size must be a positive integer, got 0"),
    (dict(progress=5), None, "progress must be a function of (done, total), got 5"),
    (dict(multilabel="binary", budget=1.0), ["--multilabel", "binary", "--budget", "1"],
     "--multilabel does not combine with --budget"),
    (dict(multilabel="binary", orders="auto"), ["--multilabel", "binary", "--orders", "auto"],
     "--orders auto does not combine with --multilabel"),
    (dict(multilabel="tau:1", mechanism="gnmax"), ["--multilabel", "tau:1", "-m", "gnmax"],
     "--multilabel tau needs --predictions FILE"),
    (dict(multilabel="binary", mechanism="lnmax"), ["--multilabel", "binary", "-m", "lnmax"],
     "--multilabel binary runs -m gnmax or -m confident, not lnmax"),
    (dict(multilabel="powerset", mechanism="gnmax", predictions=MISSING, q_bound="integral"),
     ["--multilabel", "powerset", "-m", "gnmax", "--predictions", MISSING, "--q-bound",
      "integral"], "--q-bound integral applies to --multilabel binary only"),
    (dict(ss_every=10), None, "--ss-history needs --smooth-sensitivity"),
    (dict(order="x"), None, "--order must be one number above 1, got 'x'"),
    (dict(order=[2, 3]), None, "--order must be one number above 1, got [2, 3]"),
    (dict(seed=True), None, "--seed must be a whole number of at least 0, got True"),
    (dict(seed=-1), None, "--seed must be a whole number of at least 0, got -1"),
    (dict(per_query="x"), None, "per_query must be True, False or 'stream', got 'x'"),
    (dict(ss_every=0, smooth_sensitivity=True), None,
     "--ss-every must be a whole number of at least 1, got 0"),
    (dict(decisions=MISSING, accounting="expected"),
     ["--decisions", MISSING, "--accounting", "expected"],
     "--decisions gives the run's own decisions"),
    (dict(decisions=MISSING, rounds=MISSING), ["--decisions", MISSING, "--rounds", MISSING],
     "--decisions applies to single runs"),
    (dict(mechanism="svt", svt_cutoff="auto", decisions=MISSING),
     ["-m", "svt", "--svt-cutoff", "auto", "--decisions", MISSING],
     "--svt-cutoff auto chooses the cut-off by replaying"),
    (dict(groups=MISSING), ["--groups", MISSING], "--groups and --show-parameters need"),
    (dict(individualized="sharing", groups=MISSING), None, "--individualized must be one of"),
    (dict(individualized="upsampling"), ["--individualized", "upsampling"],
     "--individualized needs --groups FILE"),
    (dict(individualized="vanishing", groups=MISSING),
     ["--individualized", "vanishing", "--groups", MISSING],
     "--individualized vanishing needs --predictions FILE and --teacher-groups FILE"),
    (dict(teacher_groups=MISSING), ["--teacher-groups", MISSING],
     "--teacher-groups needs --predictions FILE"),
    (dict(teacher_groups=MISSING, predictions=MISSING),
     ["--teacher-groups", MISSING, "--predictions", MISSING],
     "--teacher-groups applies to --individualized"),
    (dict(predictions_layout="teachers-first"), ["--predictions-layout", "teachers-first"],
     "--predictions-layout applies to --predictions FILE"),
    (dict(precision=3), ["--precision", "3"], "--precision applies to --individualized upsampling"),
    (dict(individualized="vanishing", groups=MISSING, weights="group-size"),
     ["--individualized", "vanishing", "--groups", MISSING, "--weights", "group-size"],
     "--weights applies to --individualized weighting"),
    (dict(individualized="upsampling", groups=MISSING, power=3.0),
     ["--individualized", "upsampling", "--groups", MISSING, "--power", "3"],
     "--power applies to --individualized vanishing"),
    (dict(q_bound="tight"), None, "--q-bound must be one of"),
    (dict(q_bound="integral", smooth_sensitivity=True),
     ["--q-bound", "integral", "--smooth-sensitivity"],
     "--smooth-sensitivity needs --q-bound union"),
    (dict(mechanism="lnmax", q_bound="integral"), ["-m", "lnmax", "--q-bound", "integral"],
     "--q-bound integral applies to Gaussian answers"),
    (dict(q_bound="integral", rounds=MISSING), ["--q-bound", "integral", "--rounds", MISSING],
     "--q-bound integral applies to single runs"),
    (dict(q_bound="integral", accounting="data-independent"),
     ["--q-bound", "integral", "--accounting", "data-independent"],
     "--q-bound integral bounds the data-dependent q of each answer: it does not apply to "
     "--accounting data-independent"),
    (dict(halt_at="token"), None, "--halt-at must be query or output"),
    (dict(halt_at="output"), ["--halt-at", "output"], "--halt-at output needs --budget"),
    (dict(halt_at="output", budget=2.0, query_indices=MISSING),
     ["--halt-at", "output", "--budget", "2", "--query-indices", MISSING],
     "--halt-at output applies to single"),
    (dict(outputs=MISSING, query_indices=MISSING),
     ["--outputs", MISSING, "--query-indices", MISSING],
     "an output grouping needs the queries in file order: --outputs does not combine"),
    (dict(multilabel="binary", outputs=MISSING), ["--multilabel", "binary", "--outputs", MISSING],
     "--multilabel does not combine with --outputs"),
    (dict(rounds=MISSING, budget=2.0), ["--rounds", MISSING, "--budget", "2"],
     "--rounds sets the rows of each round"),
    (dict(rounds=MISSING, mechanism="gnmax"), ["--rounds", MISSING, "-m", "gnmax"],
     "--rounds names each round's mechanism (its 'mechanism' field): it does not combine "
     "with -m (got -m gnmax)"),
    (dict(rounds=MISSING, student=MISSING), ["--rounds", MISSING, "--student", MISSING],
     "--rounds names each interactive round's student (its 'student' field): it does not "
     "combine with --student"),
    (dict(rounds=MISSING, individualized="upsampling", groups=MISSING),
     ["--rounds", MISSING, "--individualized", "upsampling", "--groups", MISSING],
     "--rounds does not combine with --individualized"),
    (dict(mechanism="svt", svt_cutoff="auto"), ["-m", "svt", "--svt-cutoff", "auto"],
     "--svt-cutoff auto needs --target-epsilon"),
    (dict(mechanism="lnmax", sigma=3.0), ["-m", "lnmax", "--sigma", "3"],
     "--sigma applies to -m gnmax, confident, interactive, not -m lnmax"),
    (dict(mechanism="gnmax", threshold=3.0), ["-m", "gnmax", "-T", "3"],
     "-T/--threshold applies to -m confident, interactive, confident-exponential"),
    (dict(mechanism="exponential", sigma_threshold=3.0),
     ["-m", "exponential", "--sigma-threshold", "3"], "--sigma-threshold applies to"),
    (dict(mechanism="gnmax", laplace_scale=3.0), ["-m", "gnmax", "--laplace-scale", "3"],
     "--laplace-scale applies to -m lnmax, not -m gnmax"),
    (dict(confidence=0.5), ["--confidence", "0.5"], "--confidence applies to -m interactive"),
    (dict(svt_scale=3.0), ["--svt-scale", "3"], "--svt-scale applies to -m svt"),
    (dict(svt_cutoff=5), ["--svt-cutoff", "5"], "--svt-cutoff applies to -m svt"),
    (dict(svt_threshold=5.0), ["--svt-threshold", "5"], "--svt-threshold applies to -m svt"),
    (dict(target_epsilon=2.0), ["--target-epsilon", "2"], "--target-epsilon applies to -m svt"),
    (dict(mechanism="lnmax", eta=0.1), ["-m", "lnmax", "--eta", "0.1"],
     "--eta applies to -m exponential, confident-exponential, not -m lnmax"),
    (dict(mechanism="gnmax", screening="gaussian"), ["-m", "gnmax", "--screening", "gaussian"],
     "--screening gaussian applies to the threshold step of -m confident"),
    (dict(mechanism="gnmax", student=MISSING), ["-m", "gnmax", "--student", MISSING],
     "--student only applies to -m interactive"),
    (dict(mechanism="interactive"), ["-m", "interactive"], "-m interactive needs --student"),
    (dict(individualized="upsampling", groups=MISSING, budget=2.0),
     ["--individualized", "upsampling", "--groups", MISSING, "--budget", "2"],
     "--individualized has its own stopping rule"),
    (dict(individualized="upsampling", groups=MISSING, add_rdp=MISSING),
     ["--individualized", "upsampling", "--groups", MISSING, "--add-rdp", MISSING],
     "--add-rdp does not combine with --individualized"),
    (dict(mechanism="svt", svt_scale=2.0, target_epsilon=1.0),
     ["-m", "svt", "--svt-scale", "2", "--target-epsilon", "1"],
     "give --svt-scale or --target-epsilon, not both"),
    (dict(mechanism=SVTPATE(scale=2.0, target_epsilon=1.0, cutoff=5)), None,
     "give --svt-scale or --target-epsilon, not both"),  # an object's target is not ignored
    (dict(mechanism="svt", budget=2.0), ["-m", "svt", "--budget", "2"],
     "--budget does not apply to -m svt"),
    (dict(mechanism="svt", orders=[2.0, 8.0]), ["-m", "svt", "--orders", "2,8"],
     "--orders and --order do not apply to -m svt"),
    (dict(smooth_sensitivity=True, individualized="upsampling", groups=MISSING),
     ["--smooth-sensitivity", "--individualized", "upsampling", "--groups", MISSING],
     "--smooth-sensitivity applies to single runs"),
    (dict(smooth_sensitivity=True, tuning="poisson:10"),
     ["--smooth-sensitivity", "--tuning", "poisson:10"],
     "--smooth-sensitivity sanitises one run's epsilon, not a --tuning search's"),
    (dict(mechanism="svt", tuning="poisson:10"), ["-m", "svt", "--tuning", "poisson:10"],
     "--tuning needs the run's whole cost as one RDP curve"),
    (dict(vote_change="add"), ["--vote-change", "add"],
     "--vote-change applies to sampled voters (--sampling)"),
    (dict(sampling_steps="independent"), ["--sampling-steps", "independent"],
     "--sampling-steps applies to sampled voters (--sampling)"),
    (dict(order=8.0, orders="2,4"), ["--order", "8", "--orders", "2,4"],
     "give --order or --orders, not both"),
    (dict(mechanism="lnmax", smooth_sensitivity=True), ["-m", "lnmax",
                                                         "--smooth-sensitivity"],
     "--smooth-sensitivity applies to gnmax, confident, interactive, not lnmax"),
    (dict(accounting="data-independent", smooth_sensitivity=True),
     ["--accounting", "data-independent", "--smooth-sensitivity"],
     "--smooth-sensitivity needs replay or expected accounting"),
    (dict(sampling="without-replacement:10/100", accounting="data-independent",
          vote_change="add"),
     ["--sampling", "without-replacement:10/100", "--accounting", "data-independent",
      "--vote-change", "add"],
     "--vote-change add applies to --sampling poisson"),
    (dict(mechanism="gnmax", sampling="poisson:0.5", accounting="data-independent",
          sampling_steps="independent"),
     ["-m", "gnmax", "--sampling", "poisson:0.5", "--accounting", "data-independent",
      "--sampling-steps", "independent"],
     "--sampling-steps independent applies to -m confident (a threshold step and an answer "
     "step that each sample the voters), not -m gnmax"),
    (dict(sampling="poisson:0.1", accounting="expected"),
     ["--sampling", "poisson:0.1", "--accounting", "expected"],
     "--sampling needs --accounting data-independent, not expected"),
    (dict(mechanism="svt", sampling="poisson:0.1", accounting="data-independent"),
     ["-m", "svt", "--sampling", "poisson:0.1", "--accounting", "data-independent"],
     "--sampling applies to -m gnmax, confident, lnmax, not -m svt"),
    (dict(sampling="poisson:0.1", accounting="data-independent", smooth_sensitivity=True),
     ["--sampling", "poisson:0.1", "--accounting", "data-independent",
      "--smooth-sensitivity"],
     "--sampling applies to single runs"),
]


def _fired(options: dict) -> int:
    """The position in RULES of the rule ``options`` break first."""
    spec = RunSpec.of(**options)
    return next(index for index, rule in enumerate(RULES) if rule.broken(spec))


@pytest.mark.parametrize(("options", "args", "line"), CASES, ids=[c[2][:40] for c in CASES])
def test_the_api_refuses_before_reading_any_input(options, args, line):
    with pytest.raises(OptionError) as refused:
        analyze(MISSING, **options)  # the votes path does not exist either
    assert str(refused.value).startswith(line)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(("options", "args", "line"), [c for c in CASES if c[1] is not None],
                         ids=[c[2][:40] for c in CASES if c[1] is not None])
def test_the_command_gives_the_apis_line(cli, options, args, line):
    with pytest.raises(OptionError) as refused:
        analyze(VOTES, **options)
    result = cli.analyze(VOTES, *args)
    assert result.code == 2
    assert result.err == f"Error: {refused.value} (see pate-analyze --help)\n"


def test_every_rule_of_the_table_is_exercised():
    fired = {_fired(options) for options, _, _ in CASES}
    multilabel = {index for index, rule in enumerate(RULES)
                  if rule.text(RunSpec.of()).startswith("--multilabel does not combine")}
    assert set(range(len(RULES))) - multilabel <= fired
    assert fired & multilabel


def test_a_spec_within_the_rules_passes_and_unknown_keywords_are_refused():
    assert check_options(RunSpec.of("gnmax", sigma=40.0, budget=2.0)) is None
    with pytest.raises(TypeError, match="unexpected keyword arguments: sigmaa"):
        RunSpec.of("gnmax", sigmaa=40.0)


def test_a_bad_order_grid_is_refused_before_any_input_is_read():
    with pytest.raises(ValueError, match="order") as refused:
        analyze(MISSING, orders=[0.5, 2.0])  # orders must exceed 1; the file does not exist
    assert MISSING not in str(refused.value)
