"""What each kind of viewer is sent: a seat's view, a spectator's view, replay frames.

A person at a seat receives exactly ``state.view(seat)`` in its JSON form
(:func:`mulle_env.engine.record.view_to_dict`). A spectator of a table with people receives
the public part only (no hand at all); a spectator of an agents' table and a replay show
both hands, since nobody there is hiding anything.
"""

from __future__ import annotations

from typing import Any

from mulle_env.engine.cards import CARD_NAMES
from mulle_env.engine.match import move_event
from mulle_env.engine.record import view_to_dict
from mulle_env.engine.state import GameState

__all__ = ["move_previews", "replay_frames", "seat_view", "spectator_view"]


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


def _minus(cards: list[int], remove) -> list[int]:
    left = list(cards)
    for f in remove:
        left.remove(f)
    return left


def move_previews(state: GameState, legal) -> dict[str, dict]:
    """What each legal move would do to the table, for the page to show before the person plays it.

    Per move text: ``loose`` (the loose cards it takes or builds on, by name), ``builds`` (the
    values of the builds it takes or builds on), ``mulles``, ``tabbe``, and ``value`` (the value
    of the build it makes or feeds; ``None`` for a capture or discard). Each move is played on a
    copy (:func:`~mulle_env.engine.match.move_event`): a build or trotta gathers piles by the
    rules (RULES.md 4.2.5), and a forced capture's notation does not list what it takes, so only
    the engine can say. Nothing here is hidden from the mover: it depends on the table and the
    mover's own card.
    """
    p = state.to_move
    before = state.view(p)
    builds = {b.value: list(b.cards) for b in before.builds}
    out = {}
    for move in legal:
        if move.kind == "discard":  # lays the card down: it takes and builds on nothing (no copy needed)
            out[str(move)] = {"loose": [], "builds": [], "mulles": 0, "tabbe": False, "value": None}
            continue
        after = state.copy()
        event = move_event(after, move)
        value = None
        if move.kind == "capture":
            involved = list(event.taken)
        elif move.kind in ("build", "trotta"):
            value = move.to if move.kind == "build" else next(
                (b.value for b in after.view(p).builds if int(move.card) in b.cards and b.owner == p), None)
            made = next((b for b in after.view(p).builds if b.value == value), None)
            involved = _minus(made.cards, [int(move.card)]) if made is not None else []
        else:
            involved = []
        taken_builds = [v for v, cards in builds.items() if _contains(involved, cards)] if builds and involved else []
        loose = _minus(involved, [f for v in taken_builds for f in builds[v]])
        out[str(move)] = {"loose": [CARD_NAMES[f] for f in loose], "builds": taken_builds, "mulles": event.mulles,
                          "tabbe": event.tabbe, "value": value}
    return out


def _contains(cards: list[int], part: list[int]) -> bool:
    try:
        _minus(cards, part)
    except ValueError:
        return False
    return True


def replay_frames(record: Any) -> list[dict]:
    """Every position of a recorded game (of either game: a GameRecord or :class:`~live.games.CasinoRecord`) with
    both hands: frame 0 is the deal, frame n follows move n.

    Each frame is ``{"event": MoveEvent.to_dict() or None, "text": str or None, "view": spectator view}``.
    Every move is checked by replaying it (the record's errors propagate).
    """
    from .games import live_game  # the games use this module's Mulle views

    game = live_game(getattr(record, "game", "mulle"))
    match = game.replay_match(record)
    frames = [{"event": None, "text": None, "view": game.spectator_view(match.state, True)}]
    for i, text in enumerate(record.moves, 1):
        try:
            event = match.play(text)
        except ValueError as exc:
            raise type(exc)(f"move {i} of the record ({text!r}): {exc}") from None
        frames.append({"event": event.to_dict(), "text": event.describe(),
                       "view": game.spectator_view(match.state, True)})
    return frames
