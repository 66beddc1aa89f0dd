"""The scripted player: the priority list of the seeds' Mulle engine overview ("AI Heuristik").

Every legal move falls in one class; the first non-empty class wins (lower = better):

1. captures that make a mulle and take more than the twin, by (mulles, cards taken);
2. other captures of two or more cards, by cards taken;
3. mulle singles: a capture of only the played card's twin;
4. value matches: a capture of a single card (or a build) without a mulle;
5. builds;
6. trottas;
7. discards, least valuable card first (see :func:`agents.effects.discard_cost`).

Ties inside a class go to more mulle points, then more intake points, then a tabbe,
then (builds and trottas) the richer build; the final tie-break is the canonical move
order, so the agent never needs its rng.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from mulle_env.engine import Move, PlayerView

from .base import Agent
from .effects import MoveEffect, discard_cost, move_effect, twin_counts, view_state

CLASS_NAMES = (
    "mulle capture",
    "capture",
    "mulle single",
    "value match",
    "build",
    "trotta",
    "discard",
)


def classify(effect: MoveEffect) -> int:
    """The priority class (0 = best) of a move, from its effect; see the module docstring."""
    kind = effect.move.kind
    if kind == "capture":
        n = len(effect.taken)
        if effect.mulles and n > 1:
            return 0
        if n > 1:
            return 1
        if effect.mulles:
            return 2
        return 3
    if kind == "build":
        return 4
    if kind == "trotta":
        return 5
    return 6


def rank_moves(view: PlayerView, legal_moves: Sequence[Move]) -> list[tuple[tuple[float, ...], MoveEffect]]:
    """Every legal move with its heuristic sort key, best first."""
    base = view_state(view)
    unseen = twin_counts(view)
    mv = view.ruleset.mulle_values
    hand = [int(f) for f in view.hand]
    ranked: list[tuple[tuple[float, ...], MoveEffect]] = []
    for order, move in enumerate(legal_moves):
        eff = move_effect(view, move, base)
        cls = classify(eff)
        key: tuple[float, ...]
        if cls <= 1:
            key = (cls, -eff.mulles, -len(eff.taken), -eff.mulle_points, -eff.intake_points, -eff.tabbe)
        elif cls <= 3:
            key = (cls, -eff.mulle_points, -eff.intake_points, -eff.tabbe, -len(eff.taken))
        elif cls <= 5:
            key = (cls, -eff.build_points, -eff.build_cards)
        else:
            key = (cls, discard_cost(int(move.card), hand, unseen, mv))
        ranked.append((key + (order,), eff))
    ranked.sort(key=lambda kv: kv[0])
    return ranked


class HeuristicAgent(Agent):
    """Plays the seeds' priority order: mulle captures, captures, mulles, matches, build, trotta, discard."""

    name = spec = "heuristic"
    games = ("mulle",)  # Mulle's priority order

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """The first move of :func:`rank_moves`."""
        if len(legal_moves) == 1:
            return legal_moves[0]
        return rank_moves(view, legal_moves)[0][1].move
