"""The env layer's afterstates (mulle_env.afterstates): what each legal move leaves, with nothing hidden in it."""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np
import pytest

import mulle_env  # noqa: F401 - registers the env ids
from mulle_env.afterstates import (
    AFTERSTATE_SIZE,
    afterstates,
    placeholder_state,
    reference_afterstates,
    write_afterstates,
)
from mulle_env.engine import MOVES, GameState, new_game
from mulle_env.engine.knowledge import score_difference
from mulle_env.vector_env import MulleVectorEnv


def _positions(games: int = 12, seed: int = 0) -> list[GameState]:
    out = []
    for g in range(games):
        st = new_game(seed=seed + g)
        rng = random.Random(g)
        while not st.over:
            out.append(st.copy())
            st.play(rng.choice(st.legal_moves()))
    return out


def test_the_afterstates_are_the_reference_loops_from_the_state_and_from_the_movers_view() -> None:
    # On the compiled core afterstates() is written in C: it must equal the readable loop bit for bit, and the
    # agents' afterstates made from the view alone (what the learned agent sees) must be the same rows.
    from agents.learned.afterstate import encode_afterstates

    for st in _positions()[::7]:
        ids, obs, banked = afterstates(st)
        want_obs, want_banked = np.empty_like(obs), np.empty_like(banked)
        reference_afterstates(placeholder_state(st, st.to_move), st.to_move, ids, want_obs, want_banked)
        assert ids == sorted(st.legal_ids())
        np.testing.assert_array_equal(obs, want_obs)
        np.testing.assert_array_equal(banked, want_banked)
        from_view, view_banked = encode_afterstates(st.view(st.to_move), [MOVES[a] for a in ids])
        np.testing.assert_array_equal(obs, from_view)
        np.testing.assert_array_equal(banked, view_banked)


def test_numpy_ids_are_ids_and_bools_are_not() -> None:
    st = new_game(seed=2)
    legal = np.array(sorted(st.legal_ids()))
    ids, obs, banked = afterstates(st, actions=legal)
    assert ids == legal.tolist() and obs.shape == (len(legal), AFTERSTATE_SIZE)
    for bad in (True, np.True_, 1.0, "1"):
        with pytest.raises(ValueError, match="is not a move id"):
            write_afterstates(st, st.to_move, [bad], np.empty((1, AFTERSTATE_SIZE), np.float32), np.empty(1))


def test_banked_is_the_score_difference_the_move_leaves_on_the_real_state() -> None:
    # The placeholders never change what a move banks: the real state after it has the same difference
    # (within a deal: at a set's last card the real game also settles the set, which an afterstate leaves to later).
    checked = 0
    for st in _positions(6, 100)[::5]:
        if not st.deck:
            continue
        checked += 1
        ids, _, banked = afterstates(st)
        for a, b in zip(ids, banked):
            real = st.copy()
            real.play_unchecked(MOVES[a])
            assert b == score_difference(real, st.to_move)
    assert checked > 20


def test_hidden_cards_never_enter() -> None:
    # Two states alike to the mover but for the opponent's hand and the deck: the same afterstates.
    rng = random.Random(5)
    checked = 0
    for st in _positions(8, 300)[::9]:
        view = st.view(st.to_move)
        hand, deck = list(st.hands[1 - st.to_move]), list(st.deck)
        swap = [(i, j) for i in range(len(hand)) for j in range(len(deck)) if hand[i] != deck[j]]
        if not swap:
            continue
        i, j = rng.choice(swap)
        hand[i], deck[j] = deck[j], hand[i]
        other = GameState.from_view(view, hand, deck)
        assert other.hands[1 - st.to_move] != st.hands[1 - st.to_move]
        a1, o1, b1 = afterstates(st)
        a2, o2, b2 = afterstates(other)
        assert a1 == a2
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(b1, b2)
        checked += 1
    assert checked > 10


def test_bad_calls_are_refused_with_reasons() -> None:
    st = new_game(seed=1)
    legal = sorted(st.legal_ids())
    illegal = next(a for a in range(len(MOVES)) if a not in legal)
    obs = np.empty((1, AFTERSTATE_SIZE), np.float32)
    with pytest.raises(ValueError, match=f"move id {illegal} is not legal here"):
        write_afterstates(st, st.to_move, [illegal], obs, np.empty(1))
    with pytest.raises(ValueError, match="not to move"):
        write_afterstates(st, 1 - st.to_move, legal[:1], obs, np.empty(1))
    with pytest.raises(ValueError, match="float32 array"):
        write_afterstates(st, st.to_move, legal[:2], obs, np.empty(2))


def test_the_vector_env_gives_them_row_for_row_with_its_legal_ids() -> None:
    env = MulleVectorEnv(5, opponent="heuristic", reward="score_delta", seat="alternate")
    env.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(60):
        ids, offsets = env.legal_ids()
        obs, banked = env.legal_afterstates()
        assert obs.shape == (len(ids), AFTERSTATE_SIZE) and banked.shape == (len(ids),)
        for i in range(5):
            a, b = offsets[i], offsets[i + 1]
            st = env._core.stepper.state(i)
            mine, o, bk = afterstates(st, int(env._core.seats[i]), ids[a:b])
            np.testing.assert_array_equal(obs[a:b], o)
            np.testing.assert_array_equal(banked[a:b], bk)
        picks = [int(ids[offsets[i] + rng.integers(offsets[i + 1] - offsets[i])]) for i in range(5)]
        env.step(np.array(picks))


def test_the_gym_env_gives_the_learners_afterstates() -> None:
    env = gym.make("Mulle-v0", opponent="heuristic")
    actions, obs, banked = env.unwrapped.afterstates()
    assert actions == [] and obs.shape == (0, AFTERSTATE_SIZE)  # before reset: no moves
    env.reset(seed=3)
    actions, obs, banked = env.unwrapped.afterstates()
    assert actions == list(np.flatnonzero(env.unwrapped.action_masks()))
    assert obs.shape == (len(actions), AFTERSTATE_SIZE)
    best = actions[int(np.argmax(banked))]
    env.step(best)


def test_a_game_without_afterstates_says_so() -> None:
    env = gym.make("Casino-v0")
    env.reset(seed=1)
    with pytest.raises(ValueError, match="Casino-v0 offers no afterstates"):
        env.unwrapped.afterstates()
