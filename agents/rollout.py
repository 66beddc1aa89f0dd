"""Rollouts for search agents: the playout policies, the value of a position, pimc's rollout loop.

Cheap functions on a full :class:`~mulle_env.engine.GameState`, where the state is a
determinization the searcher made itself (:mod:`agents.effects` has the view-level
helpers). :func:`rollout_values` is what pimc calls: on the compiled core it runs in
``agents._native`` (agents/csrc/rollout.c), drawing from the same ``random.Random``
stream, so both give the same values; the loop here is the readable reference the golden
playthroughs check the compiled one against.

Why "mulle + tabbe + intake points" is the evaluation (:func:`set_value`): a set hands out
40 intake points, so at the end of a set the bonus difference ``2 (a - 20)`` vs ``0`` (or
the reverse) equals the intake-point difference ``a - b``. Mulle points + tabbes + intake
points, differenced between the players, is therefore exactly the set's score difference
once the set is over, and a linear proxy for it before.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from mulle_env.engine import GameState, Move, build_cards, is_mulle_capture
from mulle_env.engine.cards import HAND_VALUE, INTAKE_POINTS, NUM_FACES, TABLE_VALUE
from mulle_env.engine.knowledge import score_difference
from mulle_env.engine.moves import CAPTURE_ID, DISCARD_ID, MOVES

from .native import NATIVE

__all__ = [
    "END_CAPTURE_ID", "FIRST_DISCARD_ID", "HORIZON_STOPS", "POLICIES", "TIE", "best_index", "fast_policy_id",
    "quick_capture_gain", "random_policy_id", "reference_rollout_values", "rollout_value", "rollout_values",
    "set_value",
]

#: First id of the discard moves (ids are captures, builds, trottas, discards: moves.py).
FIRST_DISCARD_ID = DISCARD_ID[0]
#: One past the last capture id.
END_CAPTURE_ID = CAPTURE_ID[NUM_FACES - 1] + 1


def set_value(st: GameState, player: int) -> float:
    """Score difference for ``player`` so far: finished sets exactly, the set in play linearly.

    For the set in play this is mulle + tabbe + intake points (see the module
    docstring), which equals that set's score difference once it is over. The engine's
    :func:`mulle_env.engine.knowledge.score_difference`, whose home it is.
    """
    return score_difference(st, player)


def quick_capture_gain(st: GameState, card: int) -> float:
    """A cheap estimate of what capturing with ``card`` is worth (for rollout policies).

    Exact for mulle captures and build-only captures; for value captures it counts the
    loose singles and the build but not the summing groups (their search is the costly
    part of a capture, and rollouts only need the order roughly right).
    """
    hv = HAND_VALUE[card]
    mulle_value = st.ruleset.mulle_values
    if is_mulle_capture(st, card):
        return 2.0 * mulle_value[card] + 2 * INTAKE_POINTS[card] + 1.0
    gain: float = INTAKE_POINTS[card]
    n = 0
    built = build_cards(st, hv)
    f: int
    for f in built:
        gain += INTAKE_POINTS[f]
        if f == card:
            gain += mulle_value[f]
    n += len(built)
    if hv <= 13:
        for f in st.loose:
            if TABLE_VALUE[f] == hv:
                gain += INTAKE_POINTS[f]
                n += 1
    return gain + 0.5 * n


#: How much larger a later value must be to replace the best so far in :func:`best_index`.
TIE = 1e-9


def best_index(values: Sequence[float], tie: float = TIE) -> int:
    """Index of the best of ``values`` (non-empty), the earliest one on a tie.

    A value replaces the best so far only when it is larger by more than ``tie``:
    searchers average rollout values, and float rounding between two equally good moves
    must not overturn the order they were listed in (the heuristic's or the policy's),
    which is what makes their choices reproducible and the same on both engines.
    """
    best = 0
    for k in range(1, len(values)):
        if values[k] > values[best] + tie:
            best = k
    return best


def fast_policy_id(st: GameState, ids: list[int], rng: random.Random) -> int:
    """The rollout policy ``heuristic``: best quick capture, else the cheapest discard, else random.

    Works on move ids and a full state (a determinization), costs a few microseconds.
    """
    if ids[0] < END_CAPTURE_ID:
        best, best_gain = ids[0], -1.0
        for i in ids:
            if i >= END_CAPTURE_ID:
                break
            g = quick_capture_gain(st, i)  # capture ids equal their card's face
            if g > best_gain:
                best, best_gain = i, g
        return best
    if ids[-1] >= FIRST_DISCARD_ID:
        best, best_cost = ids[-1], 99.0
        for i in reversed(ids):
            if i < FIRST_DISCARD_ID:
                break
            c = i - FIRST_DISCARD_ID
            cost = 2 * INTAKE_POINTS[c] + 0.01 * TABLE_VALUE[c]
            if cost < best_cost:
                best, best_cost = i, cost
        # Builds and trottas stay in the mix now and then, so rollouts are not blind to them.
        if len(ids) > 1 and ids[0] < FIRST_DISCARD_ID and rng.random() < 0.25:
            return ids[rng.randrange(len(ids))]
        return best
    return ids[rng.randrange(len(ids))]


def random_policy_id(st: GameState, ids: list[int], rng: random.Random) -> int:
    """The rollout policy ``random``: a uniformly random legal id."""
    return ids[rng.randrange(len(ids))]


#: The playout policies by name, and their codes in the compiled module.
POLICIES = {"heuristic": fast_policy_id, "random": random_policy_id}
_POLICY_CODES = {"heuristic": 0, "random": 1}
#: Horizons that stop at a boundary of the game (else a number of plies), and their codes.
HORIZON_STOPS = {"deal": 1, "set": 2}


def rollout_value(st: GameState, me: int, policy: str, plies: int, stop: str, root_set: int, root_deal: int,
                  seed: int) -> float:
    """Finish ``st`` (mutated) with the playout ``policy`` up to the horizon and score it for ``me``.

    The first ply, the candidate move, is already played: ``plies`` counts it. ``stop``
    is ``"deal"`` or ``"set"`` to end at that boundary of (``root_set``, ``root_deal``),
    anything else to stop after ``plies``. Draws come from ``random.Random(seed)``.
    """
    choose = POLICIES[policy]
    r = random.Random(seed)
    n = 1
    while not st.over and n < plies:
        if stop == "deal" and (st.deal_no != root_deal or st.set_no != root_set):
            break
        if stop == "set" and st.set_no != root_set:
            break
        ids = st.legal_move_ids()
        st.play_unchecked(MOVES[choose(st, ids, r)])
        n += 1
    return set_value(st, me)


def reference_rollout_values(root: GameState, candidates: Sequence[Move | None], me: int, policy: str, plies: int,
                             stop: str, root_set: int, root_deal: int, seed: int) -> list[float]:
    """:func:`rollout_values` in Python: the reference of the compiled loop."""
    return [rollout_value(root.copy() if m is None else root.copy().play_unchecked(m), me, policy, plies, stop,
                          root_set, root_deal, seed)
            for m in candidates]


def rollout_values(root: GameState, candidates: Sequence[Move | None], me: int, policy: str, plies: int, stop: str,
                   root_set: int, root_deal: int, seed: int) -> list[float]:
    """Per candidate, ``root`` with it played and rolled out (:func:`rollout_value`), all from ``seed``.

    Every candidate draws the same random numbers (common random numbers), so their
    difference is measured with far less noise than their values. ``root`` is not changed.
    A candidate ``None`` rolls out ``root`` itself (a leaf's value, as ISMCTS asks for it);
    ``plies`` still counts one ply as played.
    On the compiled core the whole loop runs in ``agents._native``.
    """
    if NATIVE is None:
        return reference_rollout_values(root, candidates, me, policy, plies, stop, root_set, root_deal, seed)
    # A move without an id is a capture that names what it takes.
    cands = [None if m is None else m.id if m.id is not None else (int(CAPTURE_ID[m.card]), [int(f) for f in m.taking])  # type: ignore[union-attr]
             for m in candidates]
    return NATIVE.rollout_values(root, cands, me, _POLICY_CODES[policy], plies, HORIZON_STOPS.get(stop, 0),
                                 root_set, root_deal, seed)
