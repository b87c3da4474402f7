"""READ: the only code that opens user files; one-line errors naming file, row and column."""

from .decisions import DecisionTable, check_decisions, load_decisions
from .groups import PrivacyGroups, load_groups, load_teacher_groups
from .query_indices import load_query_indices
from .rdp_curve import load_rdp_curve
from .rounds import load_rounds
from .votes import VoteSet, attach_labels, load_predictions, load_student, load_votes

__all__ = [
    "DecisionTable", "PrivacyGroups", "VoteSet", "check_decisions", "load_decisions",
    "attach_labels", "load_groups", "load_predictions",
    "load_query_indices", "load_rdp_curve", "load_rounds", "load_student",
    "load_teacher_groups", "load_votes",
]
