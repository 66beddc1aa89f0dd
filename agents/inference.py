"""What the public record proves about the opponent's hand, and exact sampling from it.

The only hard facts a Mulle player learns about the other hand come from reservation
(RULES.md 4.2.4, 4.3, 4.5): whoever owns the build ``[V]`` holds a card of hand value
``V`` at the end of each of their moves. That card stays in the hand after the build is
lost (captured or taken over) until its owner plays a card of that value or the deal
ends, so the *history* proves more than the view: a player who built ``[13]`` and lost
it to a capture still holds a king. :class:`PublicHistory` keeps those facts from the
moves every seat hears (``observe``), and :func:`sample_hidden` deals the unseen cards
into an opponent hand and a deck uniformly at random *given* them: exactly the
distribution of the hidden cards conditioned on what the player knows (up to the
opponent's choice of moves, which carries no hard constraint). Rejection sampling gives
the same distribution (tested), but can need hundreds of tries; this needs one.

Every deal is exactly 16 card plays (8 per seat), so the index of a move in the game
tells its deal; the view tells how many moves have been played
(:func:`moves_played`), which is how heard moves are placed in deals even for an agent
that joins a game late.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from math import comb
from typing import cast

from mulle_env.engine import Move, PlayerView
from mulle_env.engine.cards import HAND_VALUE

from .base import Agent
from .rollout import best_index

__all__ = [
    "MOVES_PER_DEAL", "HistorySearchAgent", "PublicHistory", "moves_played", "reserved_values", "sample_hidden",
]

#: Card plays in every deal: 8 per seat (the first deal also puts 8 on the table, which are not plays).
MOVES_PER_DEAL = 16
_HAND = MOVES_PER_DEAL // 2
_DEALS_PER_SET = 6


def moves_played(view: PlayerView) -> int:
    """Card plays made in the game so far, from the view alone (exact in a dealt game)."""
    done = ((view.set_no - 1) * _DEALS_PER_SET + view.deal_no - 1) * MOVES_PER_DEAL
    return done + (_HAND - len(view.hand)) + (_HAND - view.opponent_hand_size)


def reserved_values(events: Iterable[tuple[int, Move]], seat: int) -> set[int]:
    """Hand values ``seat`` is proven to hold after ``events`` (the moves of one deal, in order).

    A build to ``V`` or a trotta of value ``V`` proves a card of hand value ``V`` stays
    in the mover's hand; playing a card of value ``V`` afterwards may have used it up.
    """
    held: set[int] = set()
    for player, move in events:
        if player != seat:
            continue
        held.discard(HAND_VALUE[move.card])
        if move.kind == "build":
            held.add(cast(int, move.to))  # a build has its new value
        elif move.kind == "trotta":
            held.add(HAND_VALUE[move.card])
    return held


class PublicHistory:
    """The moves heard since the last :meth:`reset`, and what they prove about each hand.

    An agent owns one: it calls :meth:`reset` in its own ``reset`` and :meth:`observe`
    in its own ``observe``. Without heard moves it knows what the view shows and nothing
    more, which is still correct, only less informed.
    """

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[tuple[int, Move]] = []

    def reset(self) -> None:
        """A new game: forget every move."""
        self.events.clear()

    def observe(self, event: tuple[int, Move]) -> None:
        """Hear ``(player, move)``."""
        self.events.append(event)

    def current_deal(self, view: PlayerView) -> list[tuple[int, Move]]:
        """The heard moves that belong to the deal in play at ``view``."""
        played = moves_played(view)
        start = played - played % MOVES_PER_DEAL  # index of the deal's first move
        n = len(self.events)
        # Heard moves are the last n moves of the game: event k has index played - n + k.
        first = max(0, start - (played - n))
        return self.events[first:] if first < n else []

    def reserved(self, view: PlayerView, seat: int) -> set[int]:
        """Hand values ``seat`` is known to hold at ``view``: its builds now and what history proves."""
        held = {b.value for b in view.builds if b.owner == seat}
        return held | reserved_values(self.current_deal(view), seat)


class HistorySearchAgent(Agent):
    """Base of the determinizing search agents: hears the public history, plays its best-valued move.

    Subclasses implement ``move_values(view, legal_moves, rng) -> [(move, value), ...]``
    (in their tie-break order) and deal their determinizations with
    :meth:`known_values`; ``reset``, ``observe`` and ``act`` are shared.

    Args:
        history: Deal by what the heard moves prove too; ``False`` uses the view alone.
    """

    def __init__(self, history: bool = True) -> None:
        self.use_history = history
        self.history = PublicHistory()

    def reset(self) -> None:
        """A new game: forget the moves heard."""
        self.history.reset()

    def observe(self, event: tuple[int, Move]) -> None:
        """Hear a move (the public history the determinizations respect)."""
        self.history.observe(event)

    def known_values(self, view: PlayerView) -> set[int] | tuple[()]:
        """Hand values the opponent is known to hold (``()`` with ``history=False``)."""
        return self.history.reserved(view, 1 - view.player) if self.use_history else ()

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """The move with the best value; :func:`agents.rollout.best_index` breaks near-ties by order."""
        if len(legal_moves) == 1:
            return legal_moves[0]
        values = self.move_values(view, legal_moves, rng)
        return values[best_index([v for _, v in values])][0]

    def move_values(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random
                    ) -> list[tuple[Move, float]]:
        """``(move, value)`` for every searched move, in tie-break order."""
        raise NotImplementedError


def _ways(sizes: list[int], rest: int, m: int, memo: dict[tuple[int, int], int]) -> int:
    """Hands of ``m`` cards with at least one card from each group of ``sizes`` (others from ``rest``)."""
    key = (len(sizes), m)
    got = memo.get(key)
    if got is None:
        if not sizes:
            got = comb(rest, m)
        else:
            got = sum(comb(sizes[0], k) * _ways(sizes[1:], rest, m - k, memo) for k in range(1, min(sizes[0], m) + 1))
        memo[key] = got
    return got


def sample_hidden(view: PlayerView, rng: random.Random, required: Iterable[int] = ()
                  ) -> tuple[list[int], list[int]]:
    """An (opponent hand, deck) uniformly drawn among those consistent with ``view`` and ``required``.

    ``required`` are hand values the opponent is known to hold (from
    :meth:`PublicHistory.reserved`); the opponent's current builds are always added.
    The hand holds at least one unseen card of each required value; among such hands
    every one is equally likely, and the deck is the rest in a uniformly random order.
    A requirement no hand can meet (only in hand-made positions) is dropped.
    """
    opp = 1 - view.player
    unseen = [int(c) for c in view.unseen()]
    h = view.opponent_hand_size
    values = sorted(set(required) | {b.value for b in view.builds if b.owner == opp})
    groups = [[c for c in unseen if HAND_VALUE[c] == v] for v in values]
    groups = [g for g in groups if g]
    while groups and _ways([len(g) for g in groups], len(unseen) - sum(map(len, groups)), h, {}) == 0:
        groups.pop()  # inconsistent (hand-made) position: keep the sample rather than fail
    in_groups = {c for g in groups for c in g}
    rest = [c for c in unseen if c not in in_groups] if groups else unseen[:]
    hand: list[int] = []
    left = h
    memo: dict[tuple[int, int], int] = {}
    sizes = [len(g) for g in groups]
    for i, g in enumerate(groups):
        # P(k cards of this group) is proportional to C(|g|, k) x the completions of the rest.
        weights = [comb(len(g), k) * _ways(sizes[i + 1:], len(rest), left - k, memo)
                   for k in range(1, min(len(g), left) + 1)]
        k = 1 + _pick(weights, rng)
        hand += rng.sample(g, k)
        left -= k
    hand += rng.sample(rest, left)
    # The deck is everything else (copies counted), shuffled.
    counts: dict[int, int] = {}
    for c in hand:
        counts[c] = counts.get(c, 0) + 1
    deck: list[int] = []
    for c in unseen:
        if counts.get(c, 0):
            counts[c] -= 1
        else:
            deck.append(c)
    rng.shuffle(deck)
    # unseen() is exactly hand + deck in a dealt game; hand-made positions may leave cards out of play.
    return hand, deck[: view.deck_size]


def _pick(weights: list[int], rng: random.Random) -> int:
    """An index drawn with probability proportional to the (exact, integer) ``weights``."""
    total = sum(weights)
    r = rng.randrange(total)
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise AssertionError("unreachable: r < total")
