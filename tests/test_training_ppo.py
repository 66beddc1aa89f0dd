"""Standard RL on Mulle: ``mulle-train ppo --recipe``, the critic in the policy file, the warm start's log, and
the single-file CleanRL-style PPO of examples/cleanrl_ppo.py (docs/learning.md, "Training with standard RL")."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from training.cli import build_parser, train_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--envs", "8", "--n-steps", "32", "--batch-size", "128", "--epochs", "1", "--net", "16,16",
        "--eval-games", "2", "--eval-every", "256", "--checkpoint-every", "256", "--no-progress"]


def _ppo_args(argv: list[str]):
    from training.cli import _apply_game

    parser = build_parser()
    _apply_game(parser, argv)
    return parser.parse_args(argv)


def test_the_recipes_are_defaults_that_explicit_flags_override():
    from training.recipes import PPO_RECIPES, ppo_recipe_defaults

    quick = _ppo_args(["ppo", "--recipe", "quick"])
    for k, v in PPO_RECIPES["quick"].items():
        assert getattr(quick, k) == v, k
    assert quick.reward == "score_delta" and quick.vec == "batched" and quick.actor == "afterstate"
    assert quick.max_minutes == 10  # the whole command, its final evaluation included
    mine = _ppo_args(["ppo", "--recipe", "quick", "--envs", "16", "--max-minutes", "3"])
    assert mine.envs == 16 and mine.max_minutes == 3 and mine.opponents == PPO_RECIPES["quick"]["opponents"]
    assert _ppo_args(["ppo"]).bc_games == 0  # no recipe: the flags' own defaults
    with pytest.raises(ValueError, match="the ppo recipes are quick, long"):
        ppo_recipe_defaults("fast")


def test_a_recipe_is_refused_for_casino_and_a_bad_one_by_name(tmp_path, capsys):
    for argv, message in [(["--game", "casino", "--recipe", "quick"], "the ppo recipes are Mulle's"),
                          (["--recipe", "fast"], "invalid choice: 'fast'")]:
        with pytest.raises(SystemExit) as exc:
            train_main(["ppo", "--out-dir", str(tmp_path / "x"), *argv])
        assert exc.value.code == 2 and message in capsys.readouterr().err


def test_score_delta_runs_write_their_critic_and_finetune_copies_it_back(tmp_path):
    """The value head means the points still to come / 100: PPO's critic under score_delta with scale 100."""
    from agents.learned.policy import load_policy

    out, policy = tmp_path / "run", tmp_path / "p.npz"
    lines: list[str] = []
    code = train_main(["ppo", "--out-dir", str(out), "--steps", "256", "--vec", "batched", "--opponents", "random=1",
                       "--reward", "score_delta", "--export", str(policy), *TINY], out=lines.append)
    assert code == 0
    pol = load_policy(policy)
    assert pol.has_value and [w.shape[1] for w in pol.value_weights] == [16, 16, 1]
    assert load_policy(next((out / "pool").glob("*.npz"))).has_value
    x = np.random.default_rng(0).random((3, pol.obs_size), dtype=np.float32)
    assert np.isfinite(pol.value(x)).all()
    said: list[str] = []
    assert train_main(["finetune", str(policy), str(tmp_path / "ft.zip")], out=said.append) == 0
    assert "--reward score_delta" in said[0] and "critic starts afresh" not in said[0], said
    # Back in sb3, the critic is the file's: the checkpoint's value equals the file's value head.
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(tmp_path / "ft.zip", device="cpu")
    import torch

    with torch.no_grad():
        got = model.policy.predict_values(torch.from_numpy(x)).numpy().ravel()
    # Float32 products of the same weights in torch and numpy: equal within their rounding, not bit for bit.
    assert np.allclose(got, pol.value(x), rtol=1e-5, atol=1e-6)


def test_a_file_without_a_value_head_says_so_not_that_widths_differ(tmp_path):
    ppo_net = ROOT / "agents" / "data" / "learned_ppo.npz"  # trained under --reward score: no critic written
    said: list[str] = []
    assert train_main(["finetune", str(ppo_net), str(tmp_path / "a.zip")], out=said.append) == 0
    assert "the file holds no value head" in said[0] and "widths differ" not in said[0]


def test_the_warm_start_shows_lines_or_a_bar_and_logs_json_to_a_file(tmp_path, capsys):
    out = tmp_path / "bc"
    code = train_main(["ppo", "--out-dir", str(out), "--steps", "0", "--bc-games", "2", "--bc-epochs", "2",
                       "--bc-workers", "1", "--opponents", "random=1", *TINY])
    assert code == 0
    said = capsys.readouterr().out
    assert "warm start epoch 2: held-out accuracy" in said and "cloned in" in said and '{"' not in said
    epochs = [json.loads(x) for x in (out / "bc_log.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in epochs] == [1, 2] and all("heldout_accuracy" in e for e in epochs)


def _example():
    spec = importlib.util.spec_from_file_location("cleanrl_ppo", ROOT / "examples" / "cleanrl_ppo.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["cleanrl_ppo"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_cleanrl_example_masks_right_and_trains(tmp_path):
    ex = _example()
    from mulle_env.codec import sample_csr
    from mulle_env.vector_env import MulleVectorEnv

    # The mask built from the sparse ids is the env's dense mask, row for row; sample_csr draws inside it.
    env = MulleVectorEnv(6, opponent="random", seat="alternate")
    env.reset(seed=3)
    for _ in range(30):
        ids, offsets = env.legal_ids()
        mask = ex.legal_mask(ids, offsets).numpy()
        assert np.array_equal(mask, env.action_masks())
        env.step(sample_csr(ids, offsets, 0))
    # A masked policy gives the illegal actions exactly probability 0.
    import torch

    agent = ex.Agent(env.single_observation_space.shape[0], 8)
    obs, _ = env.reset(seed=4)
    ids, offsets = env.legal_ids()
    with torch.no_grad():
        probs = agent.dist(torch.from_numpy(obs), ex.legal_mask(ids, offsets)).probs.numpy()
    assert (probs[~env.action_masks()] == 0).all() and np.allclose(probs.sum(1), 1)
    env.close()
    # A few hundred steps of one-set games against random: every update's first ratio is 1 (the stored
    # log-probabilities are the policy's), the losses are finite, the curve is written where --out says.
    args = ex.parse_args(["--total-steps", "512", "--num-envs", "8", "--num-steps", "32", "--hidden", "16",
                          "--opponent", "random", "--sets", "1", "--eval-games", "8", "--out", str(tmp_path / "c")])
    curve = ex.train(args)
    assert len(curve["updates"]) == 2 and curve["final"]["games"] == 8
    for row in curve["updates"]:
        assert row["ratio0"] == pytest.approx(1.0, abs=1e-5)
        assert all(np.isfinite(row[k]) for k in ("pg_loss", "v_loss", "entropy", "approx_kl"))
    assert json.loads((tmp_path / "c" / "curve.json").read_text())["final"] == curve["final"]
    assert isinstance(curve["random_points"], float)
