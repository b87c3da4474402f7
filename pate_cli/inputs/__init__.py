"""READ: the only code that opens user files; one-line errors naming file, row and column."""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the lazy names below, for type checkers and readers
    from .decisions import check_decisions, load_decisions
    from .groups import PrivacyGroups, load_groups, load_teacher_groups
    from .query_indices import load_query_indices
    from .rdp_curve import load_rdp_curve
    from .rounds import load_rounds
    from .votes import (
        VoteSet,
        attach_labels,
        load_predictions,
        load_student,
        load_votes,
        votes_from_array,
    )

__all__ = [
    "PrivacyGroups", "VoteSet", "check_decisions", "load_decisions",
    "attach_labels", "load_groups", "load_predictions",
    "load_query_indices", "load_rdp_curve", "load_rounds", "load_student",
    "load_teacher_groups", "load_votes", "votes_from_array",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(["check_decisions", "load_decisions"], ".decisions"),
    **dict.fromkeys(["PrivacyGroups", "load_groups", "load_teacher_groups"], ".groups"),
    "load_query_indices": ".query_indices",
    "load_rdp_curve": ".rdp_curve",
    "load_rounds": ".rounds",
    **dict.fromkeys(["VoteSet", "attach_labels", "load_predictions", "load_student", "load_votes",
                     "votes_from_array"], ".votes"),
})
