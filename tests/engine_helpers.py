"""Small helpers for the engine tests: positions written in the card notation."""

from __future__ import annotations

import random

import mulle_env as me


def build(cards: str, value: int, owner=None, locked: bool = False) -> dict:
    """A build pile from ``"KL 9, RU 7"``."""
    return {"build": [c.strip() for c in cards.split(",")], "value": value, "owner": owner, "locked": locked}


def cards(text: str) -> list[str]:
    """``"KL 9, RU 7"`` -> ``["KL 9", "RU 7"]``."""
    return [c.strip() for c in text.split(",") if c.strip()]


def position(hand0: str, hand1: str, table: list, to_move: int = 0, ruleset: me.Ruleset | None = None, **extra):
    """A hand-made position; ``table`` items are card strings or :func:`build` dicts."""
    data = {"to_move": to_move, "hands": [cards(hand0), cards(hand1)], "table": table, **extra}
    return me.GameState.from_dict(data, ruleset=ruleset)


def legal(st) -> list[str]:
    """Legal moves as sorted strings."""
    return sorted(str(m) for m in st.legal_moves())


def after(st, move: str):
    """The position after ``move``, leaving ``st`` untouched."""
    return st.copy().play(move)


def loose(st) -> list[str]:
    """Loose cards as strings, canonical order."""
    return [c for c in st.to_dict()["table"] if isinstance(c, str)]


def builds(st) -> dict[int, dict]:
    """Builds by value."""
    return {b["value"]: b for b in st.to_dict()["table"] if isinstance(b, dict)}


def random_game(seed: int, ruleset: me.Ruleset | None = None, each=None):
    """Play a whole game with uniformly random legal moves; call ``each(state)`` after every move."""
    st = me.new_game(seed, ruleset)
    rng = random.Random(seed)
    moves = []
    while not st.is_over():
        ms = st.legal_moves()
        m = ms[rng.randrange(len(ms))]
        moves.append(str(m))
        st.play(m)
        if each is not None:
            each(st)
    return st, moves


def random_states(n_games: int, seed: int, ruleset: me.Ruleset | None = None):
    """Every state of ``n_games`` seeded random games, before each move and at the end.

    The same state object is yielded again after each move: copy it to keep one.
    """
    rng = random.Random(seed)
    for g in range(n_games):
        st = me.new_game(seed=seed * 1000 + g, ruleset=ruleset)
        while not st.is_over():
            yield st
            moves = st.legal_moves()
            st.play_unchecked(moves[rng.randrange(len(moves))])
        yield st


class FirstMove:
    """A tiny deterministic agent object: always the first legal move; counts its hook calls."""

    def __init__(self):
        self.resets = 0
        self.events = []

    def act(self, view, legal_moves, rng):
        return legal_moves[0]

    def reset(self):
        self.resets += 1

    def observe(self, event):
        self.events.append(event)
