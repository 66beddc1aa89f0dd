"""Casino-v0, its vector env and the PettingZoo AEC env: Mulle's env core and faces playing Casino's game object.

Gymnasium's ``check_env`` and PettingZoo's ``api_test``/``seed_test``; a seed fixes the game;
masked random play to the end under every flag (both action schemes); the spec's defaults;
the in-stepper ``random`` opponent against the ``random`` agent through the game loop, move for
move; every registered Casino agent as an opponent; copies; the refusals.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from test_casino_env import RULESETS

import mulle_env  # noqa: F401  (registers the envs)
from mulle_env import casino
from mulle_env.engine.cards import CARD_NAMES
from mulle_env.games import casino as ce
from mulle_env.gym_env import CasinoEnv, MulleEnv

agents = pytest.importorskip("agents")


def game_of(ruleset: casino.Ruleset) -> str:
    return "casino" if ruleset.gather_all else "casino_choices"


def play_episode(env, seed, policy_seed=0):
    """Masked random play to the end; the trajectory (obs bytes, action, reward, done) and the last info."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trace, done = [obs.tobytes()], False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        assert len(legal), "a learner to move always has a legal action"
        a = int(legal[rng.integers(len(legal))])
        obs, r, done, truncated, info = env.step(a)
        assert not truncated
        trace.append((a, r, done, obs.tobytes()))
    return trace, info


def test_registered_with_casinos_defaults_and_import_is_lazy():
    spec = gym.spec("Casino-v0")
    assert spec.entry_point == "mulle_env.gym_env:CasinoEnv"
    assert spec.vector_entry_point == "mulle_env.vector_env:MulleVectorEnv"
    assert spec.kwargs == {"game": "casino", "score_scale": 11.0}
    code = ("import sys, mulle_env, gymnasium; "
            "print('Casino-v0' in gymnasium.registry, 'mulle_env.games' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]


@pytest.mark.parametrize("kwargs", [{}, {"ruleset": {"rounds": 1, "sweeps": False}},
                                    {"game": "casino_choices", "ruleset": {"rounds": 1}}],
                         ids=["default", "rounds=1,sweeps=False", "gather_all=False"])
def test_check_env_passes_without_warnings(kwargs):
    # check_env steps action_space.sample(), hardly ever legal: checked under illegal_action="lose".
    env = gym.make("Casino-v0", opponent="random", illegal_action="lose", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env = pytest.importorskip("gymnasium.utils.env_checker").check_env
        check_env(env.unwrapped)


def test_spaces_and_an_episode():
    env = gym.make("Casino-v0", opponent="random", ruleset={"rounds": 1})
    assert isinstance(env.unwrapped, CasinoEnv) and isinstance(env.unwrapped, MulleEnv)
    assert env.action_space == gym.spaces.Discrete(504)
    assert env.observation_space.shape == (ce.OBS_SIZE,) and env.observation_space.dtype == np.float32
    low, high = ce.observation_bounds(casino.Ruleset(rounds=1))
    assert (env.observation_space.low == low).all() and (env.observation_space.high == high).all()
    trace, info = play_episode(env, seed=1)
    assert len(trace) - 1 == env.unwrapped.max_steps == 24, "one round: 24 card plays per seat"
    assert all(r == 0 for _, r, _, _ in trace[1:-1])
    mine, theirs = info["final_scores"]
    assert trace[-1][1] == np.sign(mine - theirs)
    assert info["action_mask"].sum() == 0 and env.unwrapped.action_masks().sum() == 0
    assert gym.make("Casino-v0", opponent="random", game="casino_choices").action_space == gym.spaces.Discrete(4096)


def test_a_seed_fixes_the_game():
    for game in ("casino", "casino_choices"):
        make = lambda: gym.make("Casino-v0", opponent="random", game=game, ruleset={"rounds": 1})  # noqa: E731
        a, b, c = play_episode(make(), 5), play_episode(make(), 5), play_episode(make(), 6)
        assert a[0] == b[0] and a[0] != c[0]


@pytest.mark.parametrize("name", list(RULESETS))
def test_masked_random_play_to_the_end_under_every_flag(name):
    rs = RULESETS[name]
    env = gym.make("Casino-v0", opponent="random", game=game_of(rs), ruleset=rs, reward="score")
    bound = ce.score_bound(rs)
    for seed in range(3 if rs.rounds is None else 6):
        obs, info = env.reset(seed=seed)
        done, steps = False, 0
        while not done:
            st = env.unwrapped.state
            assert np.flatnonzero(info["action_mask"]).tolist() == list(ce.legal_actions(st))
            assert env.observation_space.contains(obs)
            legal = np.flatnonzero(info["action_mask"])
            obs, r, done, _, info = env.step(int(legal[seed % len(legal)]))
            steps += 1
        mine, theirs = info["final_scores"]
        assert r == pytest.approx((mine - theirs) / 11.0) and abs(mine - theirs) <= bound
        assert steps <= env.unwrapped.max_steps


@pytest.mark.parametrize("game", ["casino", "casino_choices"])
def test_the_vector_env_plays_the_single_envs_games(game):
    k = 3
    envs = gym.make_vec("Casino-v0", num_envs=k, vectorization_mode="vector_entry_point", opponent="random",
                        game=game, ruleset={"rounds": 1})
    assert envs.single_action_space == gym.spaces.Discrete(504 if game == "casino" else 4096)
    obs, info = envs.reset(seed=10)
    for i in range(k):  # game i is the single env's game reset with seed + i
        single = gym.make("Casino-v0", opponent="random", game=game, ruleset={"rounds": 1})
        o, inf = single.reset(seed=10 + i)
        np.testing.assert_array_equal(obs[i], o)
        np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        acts = [int(rng.choice(np.flatnonzero(m))) for m in info["action_mask"]]
        obs, rewards, terminated, truncated, info = envs.step(acts)
        ended += int(terminated.sum())
        assert not truncated.any()
    assert ended >= k, "every game ended at least once in 60 steps of one-round games"
    envs.close()


def test_pettingzoo_api_and_seed_tests():
    pytest.importorskip("pettingzoo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.test import api_test, seed_test
    from test_pettingzoo_env import _checked

    from mulle_env import pettingzoo

    e = casino.env()
    assert e.metadata["name"] == "casino_v0"
    _checked(lambda: api_test(casino.env(), num_cycles=300))
    _checked(lambda: seed_test(casino.env, num_cycles=300))
    _checked(lambda: api_test(pettingzoo.env(game="casino_choices", ruleset={"rounds": 1}), num_cycles=100))


def test_the_aec_env_plays_to_the_end_with_masks():
    pytest.importorskip("pettingzoo")
    e = casino.env(ruleset={"rounds": 1}, reward="score")
    e.reset(seed=3)
    rng = np.random.default_rng(1)
    rewards = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            rewards[agent] = reward
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.tolist() == list(ce.legal_actions(e.unwrapped.game))
        e.step(int(rng.choice(legal)))
    assert sum(rewards.values()) == 0 and len(rewards) == 2


@pytest.mark.parametrize("game", ["casino", "casino_choices"])
def test_the_stepper_random_is_the_random_agent_move_for_move(game):
    agent = agents.make("random", game="casino")
    for seed in range(3):
        a = play_episode(gym.make("Casino-v0", opponent="random", game=game, ruleset={"rounds": 1}), seed)
        b = play_episode(gym.make("Casino-v0", opponent=agent, game=game, ruleset={"rounds": 1}), seed)
        assert a[0] == b[0]


#: The built-in agents that play Casino. A fixed list, not the registry read at collection time: in a whole-suite
#: run other tests register misbehaving test agents that play every game (a hanger, a BLAS probe), and this test
#: would play them too. test_the_list_is_every_built_in_casino_agent keeps it whole.
BUILT_IN_CASINO_AGENTS = ["greedy", "heuristic", "ismcts", "learned", "netsearch", "pimc", "random"]
#: Cheap settings of the searches: the test plays whole games against each.
_CHEAP = {"pimc": "pimc:samples=4", "ismcts": "ismcts:simulations=4",
          "netsearch": "netsearch:samples=2,width=2,depth=1"}


def casino_agents() -> list[str]:
    return [_CHEAP.get(name, name) for name in BUILT_IN_CASINO_AGENTS]


def test_the_list_is_every_built_in_casino_agent():
    # Asked in a fresh process: the registry as a user's process has it, without the suite's test agents.
    code = "import agents; print(' '.join(sorted(agents.available(game='casino'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == BUILT_IN_CASINO_AGENTS


def _tiny_casino_net(path) -> str:
    """A Casino policy file of random weights: what `learned` needs to play (no Casino net ships yet)."""
    from agents.learned.policy import MLPPolicy, save_policy

    rng = np.random.default_rng(0)
    sizes = [ce.OBS_SIZE, 8, casino.NUM_MOVE_IDS]
    weights = [rng.normal(size=(a, b)).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
    save_policy(MLPPolicy(weights, [np.zeros(b, np.float32) for b in sizes[1:]], game="casino"), path)
    return f"learned:path={path}"


@pytest.mark.parametrize("spec", casino_agents())
@pytest.mark.parametrize("game", ["casino", "casino_choices"])
def test_every_casino_agent_is_an_opponent(spec, game, tmp_path):
    # Seat 1: the agent moves first, at reset (its move becomes an action), then after each learner action
    # (which becomes a move it is told). One round, one game: a search agent's decisions are slow.
    if spec.startswith("ismcts"):
        pytest.importorskip("pyspiel", reason="ismcts needs the openspiel extra (CI installs it)")
    if spec == "learned":  # the one spec that needs a parameter at Casino: its policy file
        spec = _tiny_casino_net(tmp_path / "n.npz")
    if game == "casino_choices" and spec.startswith(("learned", "ismcts", "netsearch")):
        # Both act in move ids, which gather_all=False's moves do not have: refused up front, saying so.
        with pytest.raises(ValueError, match="gather_all"):
            gym.make("Casino-v0", opponent=spec, game=game, seat=1)
        return
    env = gym.make("Casino-v0", opponent=spec, game=game, ruleset={"rounds": 1}, seat=1)
    assert env.unwrapped.opponent.name == spec.split(":")[0]
    trace, info = play_episode(env, 0)
    assert trace[-1][2] and "final_scores" in info


def test_the_default_opponent_is_casinos_heuristic_when_it_is_registered():
    if "heuristic" not in casino_agents():
        with pytest.raises(ValueError, match="does not play casino"):
            gym.make("Casino-v0")
        pytest.skip("no Casino heuristic registered yet")
    env = gym.make("Casino-v0", ruleset={"rounds": 1})
    assert "casino" in getattr(env.unwrapped.opponent, "games", ("casino",))
    play_episode(env, 0)


def test_a_copy_plays_on_as_the_original():
    for game in ("casino", "casino_choices"):
        env = gym.make("Casino-v0", opponent="random", game=game, ruleset={"rounds": 1}).unwrapped
        obs, info = env.reset(seed=4)
        for _ in range(5):
            obs, *_, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        twin = copy.deepcopy(env)
        for e in (env, twin):
            legal = np.flatnonzero(info["action_mask"])
            out = e.step(int(legal[-1]))
        np.testing.assert_array_equal(out[0], env._observe()[0])
        assert twin.state.to_dict() == env.state.to_dict()


def test_the_rules_pick_the_action_space_in_every_face():
    # A user names the rules; the env takes the game object whose actions play them (EnvGame.for_ruleset):
    # move ids under gather_all=True, the k-th legal move under gather_all=False.
    choices = {"gather_all": False, "rounds": 1}
    env = gym.make("Casino-v0", opponent="random", ruleset=choices)
    assert env.action_space == gym.spaces.Discrete(ce.CHOICE_ACTIONS) and env.unwrapped.env_game is ce.CASINO_CHOICES
    trace, _ = play_episode(env, 3)
    assert trace[-1][2]
    assert gym.make("Casino-v0", opponent="random", game="casino_choices",
                    ruleset={"gather_all": True}).action_space == gym.spaces.Discrete(casino.NUM_MOVE_IDS)
    vec = gym.make_vec("Casino-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="random",
                       ruleset=choices)
    assert vec.single_action_space == gym.spaces.Discrete(ce.CHOICE_ACTIONS)
    assert casino.env(ruleset=choices).action_space("player_0") == gym.spaces.Discrete(ce.CHOICE_ACTIONS)
    # The object itself still refuses rules its actions cannot play, naming the one that can.
    with pytest.raises(ce.UnsupportedRulesetError, match="play it as game='casino_choices'"):
        ce.CASINO.check_ruleset({"gather_all": False})


def test_refusals_name_the_way_out():
    with pytest.raises(ValueError, match="CasinoEnv plays Casino"):
        CasinoEnv(opponent="random", game="mulle")
    with pytest.raises(ValueError, match="extras must be None"):
        gym.make("Casino-v0", opponent="random", extras="capture-v1")
    env = gym.make("Casino-v0", opponent="random")
    obs, info = env.reset(seed=0)
    with pytest.raises(ce.IllegalActionError, match=r"action 0 \(capture KL A\) is not legal for seat"):
        env.step(0 if not info["action_mask"][0] else 1)


def test_an_illegal_action_under_lose_costs_the_most_a_game_can():
    env = gym.make("Casino-v0", opponent="random", illegal_action="lose", reward="score", ruleset={"rounds": 2})
    obs, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, r, done, _, info = env.step(bad)
    assert done and info["illegal_action"] and r == -ce.score_bound(casino.Ruleset(rounds=2)) / 11.0


def test_render_shows_the_learners_hand_only():
    env = gym.make("Casino-v0", opponent="random", render_mode="ansi", seat=0)
    env.reset(seed=7)
    text = env.render()
    mine = " ".join(CARD_NAMES[c] for c in env.unwrapped.state.hands[0])
    assert text.startswith("Casino-v0: you are player 0") and f"seat 0 (you): hand {mine};" in text
    assert "seat 1: hand 4 cards" in text


def test_a_position_beyond_the_action_bound_stops_the_env_saying_so(monkeypatch):
    env = gym.make("Casino-v0", opponent="random", game="casino_choices", ruleset={"rounds": 1}, seat=0)
    monkeypatch.setattr(ce, "CHOICE_ACTIONS", 3)  # the opening positions have more legal moves than that
    with pytest.raises(ce.TooManyMovesError, match="more than the 3 actions of the gather_all=False action space"):
        env.reset(seed=0)


@pytest.mark.parametrize("game", ["casino", "casino_choices"])
def test_self_play_in_the_vector_env(game):
    seen = []

    def policy(obs, mask):  # the other seat's batched policy: the last legal action of each row
        assert obs.shape[1] == ce.OBS_SIZE and mask.shape[1] == (504 if game == "casino" else ce.CHOICE_ACTIONS)
        seen.append(len(obs))
        return np.array([int(np.flatnonzero(m)[-1]) for m in mask])

    envs = gym.make_vec("Casino-v0", num_envs=3, vectorization_mode="vector_entry_point", opponent="self",
                        opponent_policy=policy, game=game, ruleset={"rounds": 1})
    obs, info = envs.reset(seed=2)
    ended = 0
    for _ in range(30):
        obs, rewards, terminated, truncated, info = envs.step([int(np.flatnonzero(m)[0]) for m in info["action_mask"]])
        ended += int(terminated.sum())
    assert ended >= 3 and sum(seen) >= 3 * 24
