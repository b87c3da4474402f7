"""ORCHESTRATE: chunks of votes -> replay -> accounting -> a frozen ``AnalysisResult``."""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the lazy names below, for type checkers and readers
    from ..accounting.conversion import ACCOUNTING_MODES
    from ..errors import OrderGridWarning
    from ..work_sizes import DEFAULT_CHUNK
    from .added_figures import sanitize_analysis
    from .api import analyze, individualized_plan, label, read_votes
    from .audit import AuditResult, AuditSpec
    from .individualized import VARIANTS, GroupParameters, analyze_individualized, derive_parameters
    from .per_query_stream import decisions_of
    from .result import AnalysisResult, ReplayTotals
    from .rounds import Round, analyze_rounds
    from .run import analyze_totals, analyze_votes
    from .steps import mechanism_steps

__all__ = [
    "ACCOUNTING_MODES", "DEFAULT_CHUNK", "VARIANTS", "AnalysisResult", "GroupParameters",
    "OrderGridWarning", "ReplayTotals", "Round", "analyze_individualized", "analyze_rounds",
    "analyze_totals", "analyze_votes", "derive_parameters", "mechanism_steps",
    "sanitize_analysis", "analyze", "individualized_plan", "read_votes", "label", "decisions_of",
    "AuditResult", "AuditSpec",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "OrderGridWarning": "..errors",
    **dict.fromkeys(["analyze", "individualized_plan", "label", "read_votes"], ".api"),
    "decisions_of": ".per_query_stream",
    **dict.fromkeys(["AuditResult", "AuditSpec"], ".audit"),
    **dict.fromkeys(["VARIANTS", "GroupParameters", "analyze_individualized", "derive_parameters"],
        ".individualized"),
    **dict.fromkeys(["AnalysisResult", "ReplayTotals"], ".result"),
    **dict.fromkeys(["Round", "analyze_rounds"], ".rounds"),
    **dict.fromkeys(["analyze_totals", "analyze_votes"], ".run"),
    "sanitize_analysis": ".added_figures",
    "ACCOUNTING_MODES": "..accounting.conversion",
    "DEFAULT_CHUNK": "..work_sizes",
    "mechanism_steps": ".steps",
})
