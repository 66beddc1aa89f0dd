"""Afterstates: what each legal move leaves, for algorithms that judge moves by their result.

An action id names a move (:mod:`mulle_env.codec`), not what the move does: which cards it
takes, what it leaves the opponent, which build the mover then owns. A network that reads
the observation and writes one logit per id has to learn all of that for each of 2,812 ids
from the cards alone, and off-the-shelf PPO on ``Mulle-v0``'s logits barely got past its
warm start (docs/learning.md, "Training with standard RL"). The *afterstate* of a move is
the position it leaves, encoded from the mover's seat with the environments' own encoder;
a network that scores afterstates shares what it learns across every move that leaves a
similar position (TD-Gammon's trick, and how this project's ``learned`` agent plays).

For each legal move of the player to move, :func:`write_afterstates` writes

* the encoding (:func:`mulle_env.observation.encode_state`, ``OBS_SIZE`` floats) of the
  position the move leaves, from the mover's seat, and
* the mover's score difference after the move (:func:`~mulle_env.engine.knowledge.score_difference`:
  the finished sets exactly, the set in play as mulle + tabbe + intake points), so that a
  scorer can add the points a move takes exactly and learn only what comes after. (At a
  set's last card the real game also settles the set, the table's last cards to the last
  capture; an afterstate leaves that to what comes after.)

Nothing hidden enters. The move is played on a copy of the mover's *view* whose hidden
cards are placeholders of the right number (the opponent keeps at least one, so playing
the mover's last card never ends the deal and never deals real cards from the deck); the
encoding shows the opponent's hand only as a size. Two states that differ only in cards
the mover cannot see give the same afterstates (tested).

The vector env gives them per step, aligned with its sparse legal ids
(:meth:`mulle_env.vector_env.MulleVectorEnv.legal_afterstates`); ``Mulle-v0`` for its
learner (:meth:`mulle_env.gym_env.MulleEnv.afterstates`); the learned agents' afterstate
nets read the same rows (``agents.learned.afterstate``). On the compiled core the env
layer's compiled module writes them (mulle_env/csrc/afterstate.c, about 20 times faster:
``benchmarks/results/afterstates_speed.json``);
:func:`reference_afterstates` is the readable loop it is checked against (tests and the
golden playthroughs). ``python benchmarks/bench_afterstates.py`` measures both.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .engine import GameState
from .engine.knowledge import score_difference
from .engine.moves import MOVES, Move
from .native import NATIVE
from .observation import OBS_DTYPE, OBS_SIZE, encode_state

__all__ = ["AFTERSTATE_SIZE", "afterstates", "placeholder_state", "reference_afterstates", "write_afterstates"]

#: Floats of one afterstate's encoding: the observation's (:data:`mulle_env.observation.OBS_SIZE`).
AFTERSTATE_SIZE = OBS_SIZE


def placeholder_state(state: GameState, player: int) -> GameState:
    """``player``'s view of ``state`` as a state whose hidden cards are placeholders (card 0) of the right number.

    The opponent keeps at least one card, so a move of the mover's last card never ends the deal.
    """
    view = state.view(player)
    return GameState.from_view(view, [0] * max(1, view.opponent_hand_size), [0] * view.deck_size)


def _move_id(a: object) -> int:
    """An action id as an int: any integer (numpy's from ``legal_ids()`` too), never a bool (True is not id 1)."""
    if isinstance(a, (bool, np.bool_)):
        raise ValueError(f"write_afterstates: {a!r} is not a move id (an integer)")
    try:
        return operator.index(a)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"write_afterstates: {a!r} is not a move id (an integer)") from None


def write_afterstates(state: GameState, player: int, actions: Sequence[int], obs: NDArray[np.float32],
                      banked: NDArray[np.float64]) -> None:
    """Row ``j`` of ``obs`` and ``banked``: the afterstate of action ``actions[j]`` (module docstring).

    ``player`` must be to move and every action legal there (a ``ValueError`` says which is
    not); ``obs`` is ``(len(actions), AFTERSTATE_SIZE)`` float32 and ``banked`` ``(len(actions),)``.
    """
    actions = [_move_id(a) for a in actions]
    n = len(actions)
    if obs.shape != (n, AFTERSTATE_SIZE) or obs.dtype != OBS_DTYPE:
        raise ValueError(f"obs must be a ({n}, {AFTERSTATE_SIZE}) float32 array, not {obs.shape} {obs.dtype}")
    if banked.shape != (n,):
        raise ValueError(f"banked must have shape ({n},), not {banked.shape}")
    if not n:
        return
    if state.over or state.to_move != player:
        raise ValueError(f"afterstates are of the player to move; player {player} is not to move")
    if NATIVE is not None:  # the same rows, written in C (mulle_env/csrc/afterstate.c), which checks the ids
        NATIVE.write_afterstates(state, player, actions, obs, banked)
        return
    legal = set(state.legal_ids())
    if not legal.issuperset(actions):
        bad = next(a for a in actions if a not in legal)
        raise ValueError(f"write_afterstates: move id {bad} is not legal here; the legal ids are {sorted(legal)}")
    reference_afterstates(placeholder_state(state, player), player, actions, obs, banked)


def reference_afterstates(base: GameState, player: int, actions: Sequence[int | Move],
                          obs: NDArray[np.float32], banked: NDArray[np.float64]) -> None:
    """The readable loop the compiled writer is checked against: ``base`` is :func:`placeholder_state`'s.

    ``actions`` are move ids or moves (a ruleset the action space does not cover has moves without an id;
    the agents' afterstate nets still judge them).
    """
    for j, a in enumerate(actions):
        after = base.copy()
        after.play_unchecked(a if isinstance(a, Move) else MOVES[a])
        encode_state(after, player, obs[j])
        banked[j] = score_difference(after, player)


def afterstates(state: GameState, player: int | None = None,
                actions: Sequence[int] | None = None) -> tuple[list[int], NDArray[np.float32], NDArray[np.float64]]:
    """``(actions, obs, banked)``: the afterstates of ``actions`` (default: every legal action) of the player to move.

    ``player`` defaults to the player to move (another one is refused: only the mover has moves).
    """
    if player is None:
        player = state.to_move
    acts = list(state.legal_ids()) if actions is None else [_move_id(a) for a in actions]
    obs = np.empty((len(acts), AFTERSTATE_SIZE), dtype=OBS_DTYPE)
    banked = np.empty(len(acts), dtype=np.float64)
    write_afterstates(state, player, acts, obs, banked)
    return acts, obs, banked
