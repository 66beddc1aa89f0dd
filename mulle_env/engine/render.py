"""Text rendering of states and views in the card notation (for people and ``ansi``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .cards import CARD_NAMES

if TYPE_CHECKING:
    from .state import Build, GameStateBase, PlayerView


def _cards(faces: Iterable[int]) -> str:
    return " ".join(f"[{CARD_NAMES[f]}]" for f in faces) or "-"


def render_table(loose: Iterable[int], builds: Iterable[Build]) -> str:
    """One line per pile kind: loose cards, then builds with owner and lock."""
    lines = [f"  loose : {_cards(loose)}"]
    for b in builds:
        owner = "-" if b.owner is None else f"P{b.owner}"
        lock = " locked" if b.locked else ""
        lines.append(f"  build [{b.value:>2}] {owner}{lock}: {' + '.join(CARD_NAMES[f] for f in b.cards)}")
    return "\n".join(lines)


def render_view(view: PlayerView, reveal_hands: object = None) -> str:
    """The position as ``view.player`` sees it: table, hand, piles and scores."""
    me = view.player
    lines = [f"Set {view.set_no}, deal {view.deal_no}; deck {view.deck_size}; player {view.to_move} to move"]
    lines.append("Table:")
    lines.append(render_table(view.loose, view.builds))
    for p in (0, 1):
        s = view.scores[p]
        who = "you" if p == me else "opponent"
        lines.append(
            f"P{p} ({who}): mulle {s['mulle']}, tabbe {s['tabbe']}, intake {s['intake']}, "
            f"bonus {s['bonus']}, total {s['total']}; mulles: {_cards(view.mulle[p])}"
        )
    lines.append(f"Opponent holds {view.opponent_hand_size} card(s)")
    lines.append(f"Your hand: {_cards(view.hand)}")
    return "\n".join(lines)


def render_state(st: GameStateBase) -> str:
    """The full position, both hands shown (for debugging and replays)."""
    view = st.view(st.to_move)
    lines = [render_view(view)]
    lines.append(f"Hands: P0 {_cards(st.hands[0])} | P1 {_cards(st.hands[1])}")
    return "\n".join(lines)
