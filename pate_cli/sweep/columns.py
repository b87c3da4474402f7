"""The sweep row schema: grid parameters and which mechanism uses which, the columns, those
identifying a point (``point_key``, ``place_key``)."""

from __future__ import annotations

import math

import numpy as np

# Grid parameters in column (and nesting) order, and which mechanism uses which.
GRID_PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "svt_scale",
                   "svt_cutoff", "eta")


MECHANISM_PARAMETERS = {
    "lnmax": ("laplace_scale",),
    "gnmax": ("sigma",),
    "confident": ("sigma", "threshold", "sigma_threshold"),
    "interactive": ("sigma", "threshold", "sigma_threshold"),
    "svt": ("svt_scale", "svt_cutoff"),
    "exponential": ("eta",),
    "confident-exponential": ("eta", "threshold", "sigma_threshold"),
}


# math:risk: the publishable attack risk, the largest over the replays (each bounds its own).
RISK_COLUMNS = ("risk_tpr_0.001", "risk_tpr_0.01", "risk_tpr_0.1", "risk_advantage",
                "risk_source")

SWEEP_COLUMNS = (
    "file", "mechanism", "sigma", "threshold", "sigma_threshold", "laplace_scale",
    "svt_scale", "svt_cutoff", "confidence", "queries", "teachers", "answered",
    "answered_std", "epsilon", "epsilon_std", "order", "epsilon_data_independent",
    "label_accuracy", "label_accuracy_std", "labels_output", "repeats", "seed",
    "accounting", "delta", "budget", "sha256", "version",
    # What else made the row's numbers (appended: earlier columns keep their places).
    "conversion", "orders", "labels_sha256", "student_sha256",
    "eta", "screening", "sampling", "vote_change", "epsilon_method", "sampling_steps",
    *RISK_COLUMNS, "read", "epsilon_max", "epsilon_any_run",
)
"""``conversion``: ``classic`` or ``improved``. ``orders``: the order grid as compact
canonical text (``default`` for math:conversion's grid, else a comma list of numbers and
``start:stop:step`` runs that reads back to exactly the orders used). ``labels_sha256`` /
``student_sha256``: sha256 of the ``--labels`` / ``--student`` file (empty without one;
``student_sha256`` only in interactive rows, the only ones a student changes). ``eta``:
the exponential mechanism's eta (math:exponential; empty for the other mechanisms).
``screening``: the threshold step's data-independent curve, ``exact`` (math:screening) or
``gaussian`` (math:independent, the papers'); empty for mechanisms without one.
``sampling``: ``--sampling`` as written canonically (``poisson:RATE``,
``without-replacement:m/N``; empty without), ``vote_change`` its ``--vote-change`` (empty
without sampling), ``sampling_steps`` its ``--sampling-steps`` (``shared`` or
``independent``, for Confident with sampling); ``epsilon_method``: ``rdp`` (RDP curves
converted), ``pld`` (under data-independent accounting, pate-analyze's exact figure
where smaller: the Gaussian steps', with a Poisson-sampled point's composition by
dp_accounting, or LNMax's and the exponential mechanism's pure-DP answers composed
exactly, and LNMax's noisy counts' Laplace PLD) or ``pure`` (SVT-PATE's pure-DP
bound). ``risk_*``: the
publishable attack risk (math:risk) of the point, the largest over its replays: a
membership attacker's TPR bound at FPR 0.001, 0.01 and 0.1, its advantage bound, and the
route (``pld``: the Gaussian steps' exact curve; ``rdp``; ``pure``); empty for
individualized runs.
``read``: the options that change the votes a file of the same sha256 gives
(``index_col=N``, ``classes=K``, ``columns=...``, space-separated; empty without).
``epsilon_max``: the largest epsilon over the replays (``epsilon`` is their mean): what
``--best`` holds within its limit, so the command it prints, at any of the seeds, does.
``epsilon_any_run``: where the run reports the bound whatever a run answers (an aggregator
with a selection step, whose answered count the votes decide, or ``expected``
accounting), that bound, every query answered (``epsilon_data_independent_worst`` or its
PLD figure where smaller), the largest over the replays; empty otherwise. Under
``data-independent`` accounting it is the publishable figure, and ``--best`` holds it."""


# A row's place: grid point and run settings. --resume keeps at most one row per place;
# rows at places this run does not plan are kept as they are.
POINT_COLUMNS = ("file", "mechanism", *GRID_PARAMETERS, "confidence", "queries", "repeats",
                 "seed", "accounting", "delta", "budget")


# Everything that changes a row's numbers: a row at a planned place is reused by --resume
# only when all match (a table lacking one never matches), else recomputed and replaced.
KEY_COLUMNS = (*POINT_COLUMNS, "conversion", "orders", "sha256", "labels_sha256",
               "student_sha256", "version", "screening", "sampling", "vote_change",
               "sampling_steps", "read")


# Key columns an older table may lack when unused (read as an empty cell).
OPTIONAL_KEYS = ("eta", "sampling_steps", "read")


# Key columns compared as text (the rest are numbers, compared as floats).
TEXT_KEY_COLUMNS = ("file", "mechanism", "accounting", "conversion", "orders", "sha256",
                     "labels_sha256", "student_sha256", "version", "screening", "sampling",
                     "vote_change", "sampling_steps", "read")
# Key columns of whole numbers, compared as integers (seeds reach 2^63 - 1: 2^62 and 2^62 + 1
# are one float).
INTEGER_KEY_COLUMNS = ("svt_cutoff", "queries", "repeats", "seed")


def point_key(row: dict) -> tuple | None:
    """A row's hashable identity: its KEY_COLUMNS, numbers as floats, blanks as None; None
    (matching nothing) when the row lacks one (an older pate-sweep's table)."""
    if any(column not in row for column in KEY_COLUMNS if column not in OPTIONAL_KEYS):
        return None
    return _key(row, KEY_COLUMNS)


def place_key(row: dict) -> tuple:
    """A row's place in a table: its POINT_COLUMNS, as ``point_key`` compares them."""
    return _key(row, POINT_COLUMNS)


def _key(row: dict, columns) -> tuple:
    key = []
    for column in columns:
        value = row.get(column)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            key.append(None)
        elif column in TEXT_KEY_COLUMNS:
            key.append(str(value))
        elif column in INTEGER_KEY_COLUMNS:  # a 63-bit seed is not a float
            key.append(int(value))
        else:
            key.append(float(value))
    return tuple(key)


def risk_columns(risks: list) -> dict:
    """A point's ``RISK_COLUMNS``: each bound the largest over its replays' publishable attack
    risks (math:risk), the route the largest advantage's; empty without a risk
    (individualized runs)."""
    if not risks or any(risk is None for risk in risks):
        return {}
    reported = np.max([risk.at_reported for risk in risks], axis=0)
    worst = max(risks, key=lambda risk: risk.advantage)
    return {**{column: float(value) for column, value in zip(RISK_COLUMNS[:3], reported,
                                                              strict=True)},
            "risk_advantage": worst.advantage, "risk_source": worst.source}
