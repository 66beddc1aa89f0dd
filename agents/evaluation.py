"""The old home of the agents' shared helpers: a kept compatibility module (CHANGELOG, 0.2.0).

Nothing in the project imports it any more; it stays so that code written against 0.1.0
keeps working. New code imports :mod:`agents.effects` (what a move does, what a card is worth, from a
view) and :mod:`agents.rollout` (playout policies, :func:`~agents.rollout.set_value`,
rollouts).
"""

from .effects import MoveEffect, discard_cost, move_effect, pile_points, twin_counts, view_state
from .rollout import END_CAPTURE_ID, FIRST_DISCARD_ID, TIE, best_index, fast_policy_id, quick_capture_gain, set_value

__all__ = [
    "END_CAPTURE_ID", "FIRST_DISCARD_ID", "TIE", "MoveEffect", "best_index", "discard_cost", "fast_policy_id",
    "move_effect", "pile_points", "quick_capture_gain", "set_value", "twin_counts", "view_state",
]
