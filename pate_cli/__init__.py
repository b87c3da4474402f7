"""pate_cli: exact, vectorised privacy accounting for PATE aggregators over saved votes.

The Python API the command line is built on (``pate-analyze`` is parse -> ``analyze`` ->
render -> write)::

    import pate_cli
    result = pate_cli.analyze("votes.npy", "confident", threshold=200, sigma_threshold=150,
                              sigma=40, accounting="expected", labels="labels.npy")
    result.epsilon, result.to_dict(), result.to_frame().head()

dp_accounting events go both ways: ``dp_event_dict(event)`` is the JSON form ``--add-rdp``
reads (``json.dump`` it to ``event.json``), ``dp_event_from_dict`` builds the event back.

Names are imported on first use (PEP 562): ``import pate_cli`` loads no numpy, scipy, pandas
or matplotlib.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _views
from ._lazy import lazy_exports
from ._version import __version__

if TYPE_CHECKING:  # what the lazy names are, for type checkers and readers
    from .accounting.conversion import rdp_to_epsilon
    from .accounting.exponential import (
        log_q_exponential,
        rdp_exponential,
        rdp_exponential_data_independent,
    )
    from .accounting.gnmax import log_q_gnmax, rdp_gnmax, rdp_gnmax_data_independent
    from .accounting.laplace import log_q_lnmax, rdp_lnmax, rdp_lnmax_data_independent
    from .accounting.threshold import (
        log_pr_answered,
        rdp_threshold,
        rdp_threshold_data_independent,
    )
    from .analysis import (
        AnalysisResult,
        Round,
        analyze,
        analyze_individualized,
        analyze_rounds,
        analyze_votes,
        derive_parameters,
        label,
        sanitize_analysis,
    )
    from .analysis.audit import audit
    from .decisions import Decisions, LabelDecisions, named_decisions
    from .errors import InputError, OptionError, OrderGridWarning, OverBudget, PateWarning
    from .inputs import (
        PrivacyGroups,
        VoteSet,
        load_groups,
        load_predictions,
        load_student,
        load_votes,
    )
    from .inputs.rdp_curve import dp_event_dict, dp_event_from_dict
    from .mechanisms import (
        SVTPATE,
        ConfidentExponential,
        ConfidentGNMax,
        Exponential,
        GNMax,
        InteractiveGNMax,
        LNMax,
        build_mechanism,
    )
    from .orders import default_orders, parse_orders
    from .sweep import run_sweep
    from .sweep.calibrate import Calibration, calibrate

__all__ = [
    "__version__", "analyze", "load_votes", "load_predictions", "VoteSet", "InputError",
    "OptionError", "PateWarning", "AnalysisResult", "OrderGridWarning", "LNMax", "GNMax",
    "ConfidentGNMax", "InteractiveGNMax", "SVTPATE", "Round", "analyze_rounds",
    "sanitize_analysis", "analyze_individualized", "derive_parameters", "PrivacyGroups",
    "load_groups", "load_student", "run_sweep", "build_mechanism", "rdp_to_epsilon",
    "default_orders", "parse_orders", "log_q_gnmax", "rdp_gnmax",
    "rdp_gnmax_data_independent", "log_q_lnmax", "rdp_lnmax", "rdp_lnmax_data_independent",
    "log_pr_answered", "rdp_threshold", "rdp_threshold_data_independent", "analyze_votes",
    "label", "Decisions", "LabelDecisions", "named_decisions", "Exponential",
    "ConfidentExponential", "log_q_exponential",
    "rdp_exponential", "rdp_exponential_data_independent", "calibrate", "Calibration",
    "dp_event_dict", "dp_event_from_dict", "audit", "OverBudget",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "rdp_to_epsilon": ".accounting.conversion",
    **dict.fromkeys(["log_q_gnmax", "rdp_gnmax", "rdp_gnmax_data_independent"],
                    ".accounting.gnmax"),
    **dict.fromkeys(["log_q_lnmax", "rdp_lnmax", "rdp_lnmax_data_independent"],
                    ".accounting.laplace"),
    **dict.fromkeys(["log_q_exponential", "rdp_exponential",
                     "rdp_exponential_data_independent"], ".accounting.exponential"),
    **dict.fromkeys(["log_pr_answered", "rdp_threshold", "rdp_threshold_data_independent"],
                    ".accounting.threshold"),
    **dict.fromkeys(["Decisions", "LabelDecisions", "named_decisions"], ".decisions"),
    # the function, not the module pate_cli.analysis.audit of the same name
    "audit": ".analysis.audit",
    **dict.fromkeys(["AnalysisResult", "Round", "analyze",
                     "analyze_individualized", "analyze_rounds", "analyze_votes",
                     "derive_parameters", "label", "sanitize_analysis"], ".analysis"),
    **dict.fromkeys(["InputError", "OptionError", "OrderGridWarning", "OverBudget",
                     "PateWarning"], ".errors"),
    **dict.fromkeys(["PrivacyGroups", "VoteSet", "load_groups", "load_predictions",
                     "load_student", "load_votes"], ".inputs"),
    **dict.fromkeys(["SVTPATE", "ConfidentGNMax", "GNMax", "InteractiveGNMax", "LNMax",
                     "Exponential", "ConfidentExponential", "build_mechanism"], ".mechanisms"),
    **dict.fromkeys(["default_orders", "parse_orders"], ".orders"),
    **dict.fromkeys(["dp_event_dict", "dp_event_from_dict"], ".inputs.rdp_curve"),
    "run_sweep": ".sweep",
    **dict.fromkeys(["Calibration", "calibrate"], ".sweep.calibrate"),
})

# A result's JSON summary and notebook views are drawn by the outputs layer, imported on first
# use (``pate_cli._views``).
_views.provide("pate_cli.outputs.summary_json")
_views.provide("pate_cli.outputs.notebook")
