"""Deep Monte-Carlo fine-tuning of afterstate nets (training.dmc, mulle-expert dmc)."""

from __future__ import annotations

import importlib.util
import random

import numpy as np
import pytest
from test_afterstate import afterstate_net, positions

from agents.learned import LearnedAgent, load_policy, save_policy
from agents.learned.policy import VALUE_SCALE
from agents.rollout import set_value
from mulle_env.engine import Match
from mulle_env.observation import OBS_SIZE
from training.dmc import (
    DMCConfig,
    ExploringAfterstateAgent,
    finetune_dmc,
    game_rng,
    game_seed,
    play_games,
)

torch_tests = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
ONE_SET = {"sets": 1}


def test_targets_are_the_points_that_came_after_each_move_until_the_sets_end():
    """Target + banked = the mover's score difference when the move's set ended, read off the live game."""
    pol = afterstate_net(3)
    seed, rnd, g = 5, 0, 0
    # Game 0 of round 0 replayed here as play_games plays it (same deal, same random streams), watched move by move.
    bot = ExploringAfterstateAgent(pol, epsilon=0.3)
    match = Match(seed=game_seed(seed, rnd, g))
    at_end: dict[tuple[int, int], float] = {}
    current = [match.state.set_no]

    def on_event(_event):
        st = match.state
        # Right after a set's last move its sheet is final and the next set has banked nothing yet.
        if st.over or st.set_no != current[0]:
            for p in (0, 1):
                at_end[(p, current[0])] = set_value(st, p)
            current[0] = st.set_no

    match.play_out([bot, bot], [game_rng(seed, rnd, g, p) for p in (0, 1)],
                   on_event=on_event)
    assert len(at_end) == 2 * match.state.ruleset.sets
    x, target, stats = play_games(pol, seed, rnd, [g], 0.3, ["self"])
    assert stats["decisions"] == len(bot.records) == len(target) == len(x) > 50
    assert x.dtype == np.float16 and x.shape[1] == OBS_SIZE
    for k, (obs, banked, p, set_no) in enumerate(bot.records):
        assert np.array_equal(obs, x[k])
        assert target[k] == pytest.approx(at_end[(p, set_no)] - banked, abs=1e-4)
    # Both sets and both seats are represented, and targets are not all one number.
    assert {(p, s) for _, _, p, s in bot.records} == set(at_end)
    assert np.std(target) > 1


def test_play_games_do_not_depend_on_how_games_are_split():
    pol = afterstate_net(1)
    whole = play_games(pol, 9, 2, [0, 1, 2, 3], 0.1, ["self", "greedy"], ONE_SET)
    parts = [play_games(pol, 9, 2, g, 0.1, ["self", "greedy"], ONE_SET) for g in ([0, 1], [2, 3])]
    assert np.array_equal(whole[0], np.concatenate([p[0] for p in parts]))
    assert np.array_equal(whole[1], np.concatenate([p[1] for p in parts]))
    # Games 2 and 3 are against greedy: only the net's seat is recorded, and the score is kept.
    assert whole[2]["vs"]["greedy"][0] == 2
    assert parts[1][2]["decisions"] < parts[0][2]["decisions"]


def test_with_no_exploration_it_plays_like_learned():
    pol = afterstate_net(4)
    bot = ExploringAfterstateAgent(pol, epsilon=0.0)
    ref = LearnedAgent.from_policy(pol)
    for st in positions(30, seed=4):
        view, legal = st.view(st.to_move), st.legal_moves()
        assert bot.act(view, legal, random.Random(0)) == ref.act(view, legal, random.Random(0))
    # epsilon=1 plays uniformly: every move of a wide position comes up.
    st = max(positions(30, seed=4), key=lambda s: len(s.legal_moves()))
    wild = ExploringAfterstateAgent(pol, epsilon=1.0)
    rng = random.Random(0)
    seen = {wild.act(st.view(st.to_move), st.legal_moves(), rng) for _ in range(400)}
    assert seen == set(st.legal_moves())


def test_bad_settings_and_files_are_refused():
    with pytest.raises(ValueError, match="seed must be >= 0"):
        DMCConfig(seed=-1)
    with pytest.raises(ValueError, match="list of agent specs"):
        DMCConfig(opponents="greedy")
    with pytest.raises(ValueError, match="epsilon"):
        DMCConfig(epsilon=1.5)
    with pytest.raises(ValueError, match="unknown DMC settings"):
        DMCConfig(rounds=2, gamez=3)
    with pytest.raises(ValueError, match="games_per_round"):
        DMCConfig(games_per_round=0)
    logits = load_policy("agents/data/learned_ppo.npz")
    with pytest.raises(ValueError, match="afterstate"):
        ExploringAfterstateAgent(logits, 0.1)


@torch_tests
def test_finetune_resumes_exactly_and_learns_the_outcomes(tmp_path):
    start = tmp_path / "start.npz"
    save_policy(afterstate_net(2, hidden=(16,)), start)
    cfg = DMCConfig(rounds=3, games_per_round=4, epsilon=0.2, lr=1e-3, batch_size=64, seed=3)
    seen = []
    fig = finetune_dmc(start, tmp_path / "whole.npz", cfg, progress=False, log=seen.append)
    assert [f["round"] for f in seen] == [1, 2, 3] and fig["games"] == 4
    # Stopped after round 1, then run again: it plays only rounds 2 and 3, and reaches the same weights
    # as the run that never stopped.
    first = DMCConfig(**{**cfg, "rounds": 1})
    finetune_dmc(start, tmp_path / "resumed.npz", first, progress=False)
    assert load_policy(tmp_path / "resumed.npz").metadata["rounds_done"] == 1
    later = []
    finetune_dmc(start, tmp_path / "resumed.npz", cfg, progress=False, log=later.append)
    assert [f["round"] for f in later] == [2, 3]
    a, b = load_policy(tmp_path / "whole.npz"), load_policy(tmp_path / "resumed.npz")
    assert a.head == b.head == "afterstate" and a.metadata["rounds_done"] == b.metadata["rounds_done"] == 3
    # The same figures round by round, except the wall-clock time the games took.
    untimed = [[{k: v for k, v in f.items() if k != "game_seconds"} for f in m.metadata["history"]] for m in (a, b)]
    assert untimed[0] == untimed[1] and len(untimed[0]) == 3
    for wa, wb in zip(a.weights, b.weights):
        assert np.array_equal(wa, wb)
    # It learned the outcomes: on round 1's games (which it trained on) its error is well below the start's.
    x, target, _ = play_games(load_policy(start), 3, 0, range(4), 0.2, ["self"])

    def mse(policy):
        return float(np.mean((policy.afterstate_values(x.astype(np.float32)) * VALUE_SCALE - target) ** 2))

    assert mse(a) < 0.5 * mse(load_policy(start))


@torch_tests
def test_finetune_refuses_to_overwrite_another_run(tmp_path):
    start = tmp_path / "start.npz"
    save_policy(afterstate_net(2, hidden=(8,)), start)
    cfg = DMCConfig(rounds=1, games_per_round=2, batch_size=64)
    finetune_dmc(start, tmp_path / "out.npz", cfg, progress=False)
    before = (tmp_path / "out.npz").read_bytes()
    with pytest.raises(ValueError, match=r"another run \(epsilon: 0.03 there, 0.5 now\)"):
        finetune_dmc(start, tmp_path / "out.npz", DMCConfig(**{**cfg, "epsilon": 0.5}), progress=False)
    other = tmp_path / "other.npz"
    save_policy(afterstate_net(7, hidden=(8,)), other)
    with pytest.raises(ValueError, match="the starting net differs"):
        finetune_dmc(other, tmp_path / "out.npz", cfg, progress=False)
    assert (tmp_path / "out.npz").read_bytes() == before
    with pytest.raises(ValueError, match="is the starting file"):
        finetune_dmc(start, start, cfg, progress=False)
    with pytest.raises(ValueError, match="DMC fine-tunes afterstate nets"):
        finetune_dmc("agents/data/learned_ppo.npz", tmp_path / "x.npz", cfg, progress=False)


@torch_tests
def test_cli(tmp_path, capsys):
    from training.cli import expert_main as main

    start = tmp_path / "start.npz"
    save_policy(afterstate_net(2, hidden=(8,)), start)
    out = tmp_path / "dmc.npz"
    assert main(["dmc", str(start), "--out", str(out), "--rounds", "1", "--games-per-round", "2",
                 "--opponents", "self greedy", "--no-progress"]) == 0
    meta = load_policy(out).metadata
    assert meta["command"][:2] == ["mulle-expert", "dmc"] and meta["config"]["opponents"] == ["self", "greedy"]
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["dmc", "agents/data/learned_ppo.npz", "--out", str(tmp_path / "x.npz")])
    assert exc.value.code == 2 and "afterstate" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["dmc", str(start), "--out", str(tmp_path / "x.npz"), "--opponents", "grdy"])
    assert exc.value.code == 2 and "did you mean 'greedy'" in capsys.readouterr().err
    # A missing policy file of an opponent is reported before any game, naming the flag.
    with pytest.raises(SystemExit) as exc:
        main(["dmc", str(start), "--out", str(tmp_path / "x.npz"), "--opponents", "learned:path=nope.npz"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--opponents" in err and "nope.npz" in err
    with pytest.raises(SystemExit) as exc:
        main(["dmc", str(start), "--out", str(tmp_path / "x.npz"), "--seed", "-1"])
    assert exc.value.code == 2 and "--seed must be >= 0" in capsys.readouterr().err


@torch_tests
def test_finetune_weights_do_not_depend_on_the_number_of_workers(tmp_path):
    start = tmp_path / "start.npz"
    save_policy(afterstate_net(5, hidden=(8,)), start)
    cfg = DMCConfig(rounds=1, games_per_round=4, epsilon=0.1, batch_size=64, seed=1, opponents=["self", "heuristic"])
    one = finetune_dmc(start, tmp_path / "one.npz", cfg, workers=1, progress=False)
    two = finetune_dmc(start, tmp_path / "two.npz", cfg, workers=2, progress=False)
    assert one["decisions"] == two["decisions"] and one["points_vs_heuristic"] == two["points_vs_heuristic"]
    a, b = load_policy(tmp_path / "one.npz"), load_policy(tmp_path / "two.npz")
    for wa, wb in zip(a.weights, b.weights):
        assert np.array_equal(wa, wb)
