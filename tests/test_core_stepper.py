"""The compiled batched stepper (``backends()["c"].Stepper``) against a pure-Python reference of its contract.

The contract is ``mulle_env.vector_env``'s stepper seam: ``start``, ``step``, ``play``,
``write``, ``scores``, ``state``, and ``over``/``to_move`` always current. The internal
random opponent draws ``ids[splitmix64(x) % len(ids)]`` from a SplitMix64 stream seeded
with ``opp_seed``; the reference below does the same on the Python engine, so every
observation, mask and score must be equal.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import mulle_env as me
from mulle_env.engine import backends
from mulle_env.engine.moves import NUM_MOVE_IDS
from mulle_env.engine.rng import splitmix64
from mulle_env.observation import OBS_SIZE, encode_state

pytestmark = pytest.mark.skipif("c" not in backends(), reason="the compiled core is not built")


class RefStepper:
    """The stepper contract on the Python engine, with the core's SplitMix64 random opponent."""

    def __init__(self, k, ruleset, internal_random):
        self.ruleset, self.internal = ruleset, internal_random
        self.states = [None] * k
        self.seats = [0] * k
        self.rngs = [0] * k
        self.over = np.ones(k, dtype=bool)
        self.to_move = np.zeros(k, dtype=np.int8)

    def _sync(self, i):
        self.over[i], self.to_move[i] = self.states[i].over, self.states[i].to_move

    def _random(self, i):
        st = self.states[i]
        while not st.over and st.to_move != self.seats[i]:
            ids = st.legal_move_ids()
            self.rngs[i], r = splitmix64(self.rngs[i])
            st.play_id(ids[r % len(ids)])

    def start(self, i, game_seed, seat, opp_seed):
        self.states[i] = backends()["python"].new_game(game_seed, self.ruleset)
        self.seats[i], self.rngs[i] = seat, opp_seed
        if self.internal:
            self._random(i)
        self._sync(i)

    def step(self, actions, active):
        for i in np.flatnonzero(active):
            self.states[i].play_id(int(actions[i]))
            if self.internal:
                self._random(i)
            self._sync(i)

    def play(self, i, action):
        self.states[i].play_id(action)
        self._sync(i)

    def write(self, idx, seats, obs, mask):
        for j, (i, s) in enumerate(zip(idx, seats)):
            st = self.states[i]
            encode_state(st, int(s), obs[j])
            mask[j] = 0
            if st.to_move == s and not st.over:
                mask[j, st.legal_move_ids()] = 1

    def scores(self, i):
        return self.states[i].scores()


def make_c(k, ruleset, internal):
    from mulle_env.engine import backends

    return backends()["c"].Stepper(k, ruleset, internal, np.zeros(k, dtype=bool), np.zeros(k, dtype=np.int8))


@pytest.mark.parametrize("internal", [True, False])
@pytest.mark.parametrize("rules", [me.Ruleset(), me.Ruleset(sets=1, lock_every_build=True, mulle_hand_values=True)])
def test_core_stepper_equals_the_reference(internal, rules):
    k = 6
    ref, c = RefStepper(k, rules, internal), make_c(k, rules, internal)
    rng = random.Random(3)
    bufs = [(np.zeros((k, OBS_SIZE), np.float32), np.zeros((k, NUM_MOVE_IDS), np.int8)) for _ in range(2)]
    episodes = 0
    for i in range(k):
        args = (rng.randrange(2**63), i % 2, rng.randrange(2**63))
        ref.start(i, *args)
        c.start(i, *args)
    for _ in range(700):
        assert (ref.over == c.over).all() and (ref.to_move == c.to_move).all()
        # The learner's seat when the internal opponent moves; else whoever is to move (self-play).
        seats = np.array(ref.seats if internal else ref.to_move, dtype=np.int8)
        for s, (obs, mask) in zip((ref, c), bufs):
            s.write(np.arange(k), seats, obs, mask)
        assert np.array_equal(bufs[0][0], bufs[1][0]) and np.array_equal(bufs[0][1], bufs[1][1])
        active = ~ref.over
        actions = np.zeros(k, dtype=np.int64)
        for i in np.flatnonzero(active):
            actions[i] = rng.choice(np.flatnonzero(bufs[0][1][i]))
        if not internal and rng.random() < 0.2 and active.any():  # one game moved through play() instead
            i = int(np.flatnonzero(active)[0])
            ref.play(i, int(actions[i]))
            c.play(i, int(actions[i]))
            active[i] = False
        ref.step(actions, active)
        c.step(actions, active)
        for i in np.flatnonzero(ref.over):
            assert ref.scores(i) == c.scores(i)
            assert c.state(i).to_dict() == ref.states[i].to_dict()
            episodes += 1
            args = (rng.randrange(2**63), rng.randrange(2), rng.randrange(2**63))
            ref.start(i, *args)
            c.start(i, *args)
    assert episodes >= 1


def test_core_stepper_refuses_bad_calls_clearly():
    c = make_c(2, me.Ruleset(), True)
    c.start(0, 1, 0, 5)
    with pytest.raises(IndexError):
        c.start(2, 1, 0, 5)
    with pytest.raises(ValueError, match="seat"):
        c.start(0, 1, 2, 5)
    with pytest.raises(ValueError):
        c.step(np.array([5000, 0]), np.array([True, False]))
    with pytest.raises(ValueError):
        c.write([0], [0], np.zeros((1, 10), np.float32), np.zeros((1, NUM_MOVE_IDS), np.int8))
    with pytest.raises(ValueError):
        c.play(1, 0)  # game 1 never started: over
    ids = c.state(0).legal_move_ids()
    c.play(0, ids[0])
