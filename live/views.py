"""What each kind of viewer is sent: a seat's view, a spectator's view, replay frames.

A person at a seat receives exactly ``state.view(seat)`` in its JSON form
(:func:`mulle_env.engine.record.view_to_dict`). A spectator of a table with people receives
the public part only (no hand at all); a spectator of an agents' table and a replay show
both hands, since nobody there is hiding anything.
"""

from __future__ import annotations

from mulle_env.engine.cards import CARD_NAMES
from mulle_env.engine.match import Match
from mulle_env.engine.record import GameRecord, view_to_dict
from mulle_env.engine.state import GameState

__all__ = ["replay_frames", "seat_view", "spectator_view", "swept"]


def seat_view(state: GameState, seat: int) -> dict:
    """The JSON view of ``seat``: the public position and that seat's own hand, nothing more."""
    return view_to_dict(state.view(seat))


def spectator_view(state: GameState, show_hands: bool) -> dict:
    """The public position seen from seat 0's side, with both hands only when ``show_hands``.

    ``player`` is ``None`` and ``hand`` empty; ``hand_sizes`` gives both hands' sizes and
    ``hands`` both hands (or ``None``).
    """
    v0, v1 = state.view(0), state.view(1)
    view = view_to_dict(v0)
    view["player"] = None
    view["hand"] = []
    view["hand_sizes"] = [len(v0.hand), len(v1.hand)]
    view["hands"] = [[CARD_NAMES[f] for f in v.hand] for v in (v0, v1)] if show_hands else None
    return view


def swept(before, event) -> tuple[list[int], int | None]:
    """What the end of a set swept: the cards the set's last move left on the table, and the seat they went to.

    ``before`` is the mover's view before that move, ``event`` its
    :class:`~mulle_env.engine.match.MoveEvent`. The cards (faces, sorted) go to the last seat to
    capture (RULES.md); ``([], None)`` when nothing was left or nobody captured all set. Both
    front ends say it: ``mulle-play`` in a line, the page in its move list and on the table.
    """
    left = [*before.loose, *(f for b in before.builds for f in b.cards)]
    if event.move.kind != "capture":
        left.append(int(event.move.card))
    for f in event.taken:
        left.remove(f)
    taker = event.player if event.move.kind == "capture" else before.last_capturer
    if not left or taker is None:
        return [], None
    return sorted(left), taker


def replay_frames(record: GameRecord) -> list[dict]:
    """Every position of a recorded game with both hands: frame 0 is the deal, frame n follows move n.

    Each frame is ``{"event": MoveEvent.to_dict() or None, "text": str or None, "view": spectator view}``.
    Every move is checked by replaying it (the record's errors propagate).
    """
    match = Match(record.seed, record.ruleset, record.specs)
    frames = [{"event": None, "text": None, "view": spectator_view(match.state, True)}]
    for i, text in enumerate(record.moves, 1):
        try:
            event = match.play(text)
        except ValueError as exc:
            raise type(exc)(f"move {i} of the record ({text!r}): {exc}") from None
        frames.append({"event": event.to_dict(), "text": event.describe(), "view": spectator_view(match.state, True)})
    return frames
