"""The sweep row schema: grid parameters, which mechanism uses which, the columns and the
columns that identify a point."""

from __future__ import annotations

# Grid parameters in column (and nesting) order, and which mechanism uses which.
GRID_PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "svt_scale",
                   "svt_cutoff")


MECHANISM_PARAMETERS = {
    "lnmax": ("laplace_scale",),
    "gnmax": ("sigma",),
    "confident": ("sigma", "threshold", "sigma_threshold"),
    "interactive": ("sigma", "threshold", "sigma_threshold"),
    "svt": ("svt_scale", "svt_cutoff"),
}


SWEEP_COLUMNS = (
    "file", "mechanism", "sigma", "threshold", "sigma_threshold", "laplace_scale",
    "svt_scale", "svt_cutoff", "confidence", "queries", "teachers", "answered",
    "answered_std", "epsilon", "epsilon_std", "order", "epsilon_data_independent",
    "label_accuracy", "label_accuracy_std", "labels_output", "repeats", "seed",
    "accounting", "delta", "budget", "sha256", "version",
    # What else made the row's numbers (appended: earlier columns keep their places).
    "conversion", "orders", "labels_sha256", "student_sha256",
)
"""``conversion``: ``classic`` or ``improved``. ``orders``: the order grid as compact
canonical text (``default`` for MATH.md's grid, else a comma list of numbers and
``start:stop:step`` runs that reads back to exactly the orders used). ``labels_sha256`` /
``student_sha256``: sha256 of the ``--labels`` / ``--student`` file (empty without one;
``student_sha256`` only in interactive rows, the only ones a student changes)."""


# A row's place in a table: its grid point and run settings. A table that --resume
# completes keeps at most one row per place; rows at places this run does not plan (other
# grids, other seeds...) are kept as they are.
POINT_COLUMNS = ("file", "mechanism", *GRID_PARAMETERS, "confidence", "queries", "repeats",
                 "seed", "accounting", "delta", "budget")


# Everything that changes a row's numbers: what --resume matches rows on. A row of the
# table at a planned place is reused only when every one of these matches (a table
# without one of the columns, written by an older pate-sweep, never matches), and is
# otherwise recomputed and replaced.
KEY_COLUMNS = (*POINT_COLUMNS, "conversion", "orders", "sha256", "labels_sha256",
               "student_sha256", "version")


# Key columns compared as text (the rest are numbers, compared as floats).
TEXT_KEY_COLUMNS = ("file", "mechanism", "accounting", "conversion", "orders", "sha256",
                    "labels_sha256", "student_sha256", "version")
