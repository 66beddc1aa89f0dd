"""``reward="score_delta"``: every step pays the points it brought, and a game's rewards add up to ``"score"``'s.

The dense reward is the env's answer to a 96-decision game whose only reward came at its end
(docs/learning.md, "Training with standard RL"): these tests hold it to its promise on every face
(``Mulle-v0``, the vector env on its fast path and through agents, the AEC env), on both engines.
"""

from __future__ import annotations

import numpy as np
import pytest

from mulle_env import pettingzoo
from mulle_env.envcore import illegal_reward
from mulle_env.games import get_game
from mulle_env.gym_env import MulleEnv
from mulle_env.vector_env import MulleVectorEnv


def _play(env: MulleEnv, seed: int) -> tuple[float, int, tuple[int, int]]:
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total, paid_steps = 0.0, 0
    while True:
        obs, r, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        total += r
        paid_steps += r != 0
        if term:
            return total, paid_steps, env.unwrapped._core.final_scores(0)


@pytest.mark.parametrize("opponent", ["random", "heuristic"])
def test_a_games_rewards_add_up_to_the_score_reward(opponent):
    for seed in range(3):
        dense, paid, scores = _play(MulleEnv(opponent=opponent, reward="score_delta", seat="random"), seed)
        final, _, same = _play(MulleEnv(opponent=opponent, reward="score", seat="random"), seed)
        assert same == scores and dense == pytest.approx(final, abs=1e-12) == (scores[0] - scores[1]) / 100
        assert paid > 1  # the points come during the game, not once at its end


@pytest.mark.parametrize("opponent", ["random", "heuristic"])
def test_the_vector_env_pays_the_same_points_as_they_are_made(opponent):
    """Fast path (random inside the stepper) and agents through the game loop; same-step autoreset."""
    sums = {}
    for mode in ("score", "score_delta"):
        env = MulleVectorEnv(4, opponent=opponent, reward=mode, seat="alternate")
        env.reset(seed=7)
        rng, running, finals, paid = np.random.default_rng(0), np.zeros(4), [], 0
        for _ in range(250):
            masks = env.action_masks()
            _, r, term, _, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            running += r
            paid += int((r[~term] != 0).sum())
            for i in np.flatnonzero(term):
                mine, theirs = info["final_info"]["final_scores"][i]
                assert running[i] == pytest.approx((mine - theirs) / 100, abs=1e-12)
                finals.append(round(float(running[i]), 9))
                running[i] = 0.0
        assert len(finals) >= 8 and (paid > 0) == (mode == "score_delta")
        sums[mode] = finals
    assert sums["score"] == sums["score_delta"]


def test_the_aec_env_pays_each_move_to_both_agents_with_opposite_signs():
    totals = {}
    for mode in ("score", "score_delta"):
        env = pettingzoo.env(reward=mode)
        env.reset(seed=3)
        rng, got, seen = np.random.default_rng(1), {a: 0.0 for a in env.agents}, []
        for agent in env.agent_iter():
            obs, r, term, trunc, _ = env.last()
            got[agent] += r
            seen.append(r)
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert got["player_0"] == pytest.approx(-got["player_1"], abs=1e-12)
        totals[mode] = got
        if mode == "score_delta":
            assert sum(x != 0 for x in seen) > 2
    assert totals["score_delta"]["player_0"] == pytest.approx(totals["score"]["player_0"], abs=1e-12)


def test_an_illegal_move_costs_more_than_any_defeat_after_any_points():
    from mulle_env import Ruleset

    bound = get_game(None).score_bound(Ruleset())
    assert illegal_reward("score_delta", Ruleset(), 100.0) == -2 * bound / 100
    env = MulleEnv(opponent="random", reward="score_delta", illegal_action="lose")
    obs, info = env.reset(seed=0)
    paid = 0.0
    for _ in range(20):  # some points paid first, then an illegal action
        obs, r, term, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        paid += r
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, r, term, _, info = env.step(illegal)
    assert term and info["illegal_action"] and paid + r <= -bound / 100


def test_score_delta_is_listed_and_a_bad_mode_is_refused_naming_it():
    with pytest.raises(ValueError, match="score_delta"):
        MulleEnv(reward="dense")
