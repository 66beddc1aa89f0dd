"""An opponent that changes at reset (training's opponent pool) through every face of the environments.

The game loop used to read once, when the seats were set, whether a seat's agent reads
a view; a pool that drew ``heuristic`` after ``random`` then got ``None`` for a view and
crashed in its first rollout (issue 30). These tests play many episodes with pools that
mix ``random`` (no view), ``heuristic`` and ``learned`` through ``Mulle-v0``, the vector
env and the loop itself. The PPO run with a mixed pool is in tests/test_training_smoke.py.
"""

from __future__ import annotations

import random
from collections import Counter

import gymnasium as gym
import numpy as np

import mulle_env  # noqa: F401  (registers Mulle-v0)
from mulle_env.engine import GameLoop, new_game
from training.pool import OpponentPool

MIX = {"random": 1.0, "heuristic": 1.0, "learned": 1.0}


def _first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


class _Shifty:
    """An agent that reads a view or not, as it decides at each reset (as a pool does)."""

    def __init__(self) -> None:
        self.needs_view = False
        self.games = 0
        self.views_seen: list[bool] = []

    def reset(self) -> None:
        self.games += 1
        self.needs_view = self.games % 2 == 0

    def act(self, view, legal_moves, rng):
        self.views_seen.append(view is not None)
        if self.needs_view:
            assert view is not None, "an agent that reads its view was handed None"
        return legal_moves[0]


def test_the_loop_reads_the_seats_again_after_the_agents_reset():
    shifty = _Shifty()
    for game_no in range(4):
        loop = GameLoop(new_game(seed=game_no), [shifty, shifty], [random.Random(0), random.Random(1)])
        before = len(shifty.views_seen)
        loop.start()
        loop.run()
        seen = set(shifty.views_seen[before:])
        assert seen == {shifty.needs_view}, f"game {game_no}: views {seen}, needs_view {shifty.needs_view}"


def test_mixed_pool_plays_sixty_episodes_of_mulle_v0():
    pool = OpponentPool(MIX, seed=3)
    env = gym.make("Mulle-v0", opponent=pool, seat="alternate")
    drawn: Counter[str] = Counter()
    for ep in range(60):
        _, info = env.reset(seed=ep)
        drawn[pool.current_name or "?"] += 1
        done = False
        while not done:
            _, reward, done, _, info = env.step(_first_legal(info["action_mask"]))
        assert reward in (-1.0, 0.0, 1.0)
    assert set(drawn) == set(MIX), drawn  # every member, random after a viewer and back, played


def test_mixed_pool_plays_sixty_episodes_in_the_vector_env():
    envs = gym.make_vec("Mulle-v0", num_envs=4, vectorization_mode="vector_entry_point",
                        opponent=OpponentPool(MIX, seed=5), seat="alternate")
    _, info = envs.reset(seed=11)
    finished = 0
    steps = 0
    while finished < 60:
        mask = info["action_mask"]
        actions = np.array([_first_legal(m) for m in mask])
        _, _, term, trunc, info = envs.step(actions)
        finished += int(np.sum(term | trunc))
        steps += 1
        assert steps < 60 * 120, "games do not end"
    names = {a.current_name for a in envs.unwrapped._core.agents}
    assert names <= set(MIX)
    envs.close()
