"""A Casino position as text, for terminals and ``str(state)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mulle_env.engine.cards import CARD_NAMES

if TYPE_CHECKING:
    from .state import GameState

__all__ = ["render_state"]


def render_state(state: GameState, seat: int | None = None) -> str:
    """The position in a few lines; with ``seat`` only what that seat may see (the other hand as a count)."""
    lines = [f"Casino round {state.round} (dealer seat {state.dealer}), scores {state.scores()[0]}-{state.scores()[1]}"
             + ("  [over]" if state.over else f", seat {state.to_move} to move")]
    table = [CARD_NAMES[c] for c in state.loose] + [
        f"[{' '.join(CARD_NAMES[c] for c in b.cards)}]={b.value}/seat {b.owner}" for b in state.builds]
    lines.append("table: " + (", ".join(table) if table else "(empty)"))
    for s in (0, 1):
        hand = state.hands[s]
        shown = " ".join(CARD_NAMES[c] for c in hand) if seat in (None, s) else f"{len(hand)} cards"
        lines.append(f"seat {s}: hand {shown or '-'}; captured {len(state.captured[s])} cards, "
                     f"sweeps {state.sweeps[s]}")
    lines.append(f"stock: {len(state.stock)} cards")
    return "\n".join(lines)
