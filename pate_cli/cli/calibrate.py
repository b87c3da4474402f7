"""``pate-calibrate``: the noise that meets a target epsilon (cli:pate-calibrate)."""

from __future__ import annotations

import click

from .choices import CALIBRATED, CALIBRATION_ACCOUNTINGS, CALIBRATION_TOLERANCE
from .errors import reported_warnings, run_command, warn_table_output
from .options import (
    CONTEXT_SETTINGS,
    POSITIVE,
    accounting_specs,
    completion_line,
    debug_option,
    group,
    input_specs,
    sampling_specs,
    screening_spec,
    table_or_json_specs,
    version_option,
)

EPILOG = """\b
Examples:
  pate-calibrate votes.npy -m gnmax --target-epsilon 2 -n 640
  pate-calibrate votes.npy -T 200 --sigma-threshold 150 --target-epsilon 2 -n 640
  pate-calibrate votes.npy --scale-all --target-epsilon 1 -n 640 --labels y.npy
  pate-calibrate votes.npy -m lnmax --target-epsilon 5 -n 100 -f json
  pate-calibrate votes.npy -m exponential --target-epsilon 2 -n 640
  pate-calibrate votes.npy -m gnmax --target-tpr 0.05 --at-fpr 0.01 -n 640
  pate-calibrate votes.npy -m gnmax --target-advantage 0.1 -n 640

\b
The search doubles or halves the noise from pate-analyze's default until epsilon crosses
the target, then bisects (log scale) until the bracket is within --tolerance; the answer
is the smallest noise analysed whose epsilon (or attack risk) is at most the target
(never above it). The attack risk is the bound the run's accounting implies on a
membership attacker (data-independent by default: the publishable one).
Range: M/1000 to 1000 M (factors 0.001 to 1000 with --scale-all). The exponential
mechanisms' eta is an inverse noise: the search runs over 1/eta in that range and the
answer is the largest eta analysed that meets the target.

\b
Exit status: 0 ok, 2 bad input or options, or no noise in range meets the target;
130 Ctrl-C, 143 SIGTERM, 1 unexpected.
""" + completion_line("pate-calibrate") + "\n"


def _target_specs(option) -> list:
    return [
        option("--target-epsilon", type=POSITIVE,
               help="The epsilon to meet at --delta (one target of three)."),
        option("--target-tpr", type=click.FloatRange(0, 1, min_open=True),
               help="Attack risk: the largest true-positive rate a membership attacker "
                    "may reach at --at-fpr (docs/explanation/risk.md)."),
        option("--at-fpr", type=click.FloatRange(0, 1, min_open=True, max_open=True),
               help="The false-positive rate of --target-tpr."),
        option("--target-advantage", type=click.FloatRange(0, 1, min_open=True,
                                                           max_open=True),
               help="Attack risk: the largest advantage (TPR - FPR) an attacker may reach."),
        option("-m", "--mechanism", type=click.Choice(list(CALIBRATED), case_sensitive=False),
               default="confident", show_default=True, help="Aggregator to calibrate."),
        option("--sigma", type=POSITIVE,
               help="--scale-all: the starting sigma2 [default: 0.16 M] (else solved)."),
        option("-T", "--threshold", type=float, help="Confident: T [default: 0.8 M]."),
        option("--sigma-threshold", type=POSITIVE,
               help="Confident: sigma1 [default: 0.6 M]."),
        option("--scale-all", is_flag=True,
               help="Confident: solve one factor applied to T, sigma1 and sigma2."),
        option("--tolerance", type=click.FloatRange(0, 1, min_open=True, max_open=True),
               default=CALIBRATION_TOLERANCE, show_default=True,
               help="Stop when the bracket's ends are within this relative step (at "
                    "least about 1e-6: values have 6 significant digits)."),
    ]


def _accounting_specs(option) -> list:
    # pate-analyze's accounting options, --accounting restricted to the two not depending on
    # a replay's noise draw (the shared list starts with --accounting)
    return [option("--accounting", type=click.Choice(list(CALIBRATION_ACCOUNTINGS)),
                   default="data-independent", show_default=True,
                   help="data-independent (no data-dependent bound; with a selection "
                        "step, the bound for any run: every query answered) or expected "
                        "(2018 paper; a data-dependent choice)."),
            *accounting_specs(option)[1:], screening_spec(option), *sampling_specs(option)]


@click.command(context_settings=CONTEXT_SETTINGS, epilog=EPILOG)
@click.argument("votes", required=False, metavar="[VOTES]")
@group("Target", _target_specs)
@group("Input", input_specs)
@group("Accounting", _accounting_specs)
@group("Outputs", table_or_json_specs)
@debug_option
@version_option
def command(votes, **options):
    """The noise that makes a PATE run over saved votes meet a target epsilon or attack risk.

    VOTES: (queries x classes) vote histogram, as for pate-analyze. Prints the solved
    parameters, the epsilon reached (at most the target), the answered count (the replay's,
    and expected), the label accuracy with --labels, and the pate-analyze command that
    reproduces it.
    """
    # imported here: a Ctrl-C while the command starts is one line, not a traceback
    from ..inputs.shards import input_files
    from ..outputs.calibration import render_calibration
    from ..outputs.writing import check_destinations, write_outputs
    from ..sweep.calibrate import calibrate

    fmt, output, _ = (options.pop(key) for key in ("fmt", "output", "debug"))
    if output is not None:  # before any work; never over an input
        check_destinations([(f"-o {output}", output)], inputs=input_files(
            [("", votes)] + [(f"--{key}", options.get(key))
                             for key in ("predictions", "labels", "student")]))
    with reported_warnings():
        found = calibrate(votes, options.pop("mechanism"), **options)
    text = render_calibration(found.to_dict(votes), fmt)
    if output is not None:
        write_outputs({output: text.encode()})
    else:
        click.echo(text, nl=False)
    warn_table_output(output, fmt)


def main(args=None) -> None:
    """Console entry point (``pate-calibrate``)."""
    raise SystemExit(run_command(command, args, prog_name="pate-calibrate"))


if __name__ == "__main__":
    main()
