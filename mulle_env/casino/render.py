"""A Casino position as text, for terminals, the envs' ``render_mode="ansi"`` and ``str(state)``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mulle_env.engine.cards import CARD_NAMES

if TYPE_CHECKING:
    from .state import GameStateBase, PlayerView

__all__ = ["render_state", "render_view"]


def render_view(view: PlayerView, other_hand: Sequence[int] | None = None) -> str:
    """A seat's view in a few lines: its own hand, the other as a count (the stock too).

    ``other_hand`` (the referee's knowledge) shows the other seat's cards instead, and neither
    seat is marked as the reader: that is the whole position, :func:`render_state` with no seat.
    """
    p = view.player
    a, b = view.scores
    lines = [f"Casino round {view.round} (dealer seat {view.dealer}), scores {a}-{b}"
             + ("  [over]" if view.over else f", seat {view.to_move} to move")]
    table = [CARD_NAMES[c] for c in view.loose] + [
        f"[{' '.join(CARD_NAMES[c] for c in x.cards)}]={x.value}/seat {x.owner}" for x in view.builds]
    lines.append("table: " + (", ".join(table) if table else "(empty)"))
    for s in (0, 1):
        if s == p:
            hand = " ".join(CARD_NAMES[c] for c in view.hand)
        elif other_hand is not None:
            hand = " ".join(CARD_NAMES[c] for c in other_hand)
        else:
            hand = f"{view.opponent_hand_size} cards"
        you = " (you)" if s == p and other_hand is None else ""
        lines.append(f"seat {s}{you}: hand {hand or '-'}; captured {len(view.captured[s])} cards, "
                     f"sweeps {view.sweeps[s]}")
    lines.append(f"stock: {view.stock_size} cards")
    return "\n".join(lines)


def render_state(state: GameStateBase, seat: int | None = None) -> str:
    """The position in a few lines; with ``seat`` only what that seat may see (:func:`render_view` of its view)."""
    if seat is not None:
        return render_view(state.view(seat))
    return render_view(state.view(0), other_hand=state.hands[1])
