"""Fitting the policy and value head to teacher move values (torch), and the export to numpy."""

from __future__ import annotations

import numpy as np
import pytest

from agents.learned.policy import load_policy
from mulle_env.codec import NUM_ACTIONS
from mulle_env.observation import OBS_SIZE
from training.teacher import MAX_LEGAL

torch = pytest.importorskip("torch")
from training import distill  # noqa: E402 - needs torch, checked above


def synthetic(n=600, seed=0):
    """Decisions whose best move is always the legal id closest to a cue in the observation."""
    rng = np.random.default_rng(seed)
    obs = np.zeros((n, OBS_SIZE), dtype=np.float16)
    legal = np.full((n, MAX_LEGAL), -1, dtype=np.int16)
    values = np.full((n, MAX_LEGAL), np.nan, dtype=np.float32)
    action = np.zeros(n, dtype=np.int16)
    pool = np.arange(10)  # a small set of actions, so the task is learnable from 600 rows
    for i in range(n):
        ids = rng.choice(pool, size=3, replace=False)
        best = ids[0]
        obs[i, int(best)] = 1  # the cue: which action is best
        legal[i, :3] = ids
        values[i, :3] = [5.0, 1.0, 0.0]
        action[i] = best
    outcome = (obs[:, :10].argmax(1) * 10.0).astype(np.float32)  # learnable too: 10 x the cue
    banked = (rng.random(n) * 20).astype(np.float32)  # the value head learns outcome - banked
    return {"obs": obs, "legal": legal, "values": values, "action": action, "outcome": outcome + banked,
            "banked": banked, "step": np.zeros(n, np.int16), "game": np.arange(n, dtype=np.int32) // 10}


def test_soft_targets_follow_values_and_skip_unsearched_moves():
    legal = np.array([[3, 7, 9, -1], [1, 2, -1, -1]], dtype=np.int16)
    values = np.array([[2.0, 1.0, np.nan, np.nan], [0.0, 0.0, np.nan, np.nan]], dtype=np.float32)
    t = distill.soft_targets(values, legal, temperature=1.0)
    assert np.allclose(t[0, :2], [np.e / (np.e + 1), 1 / (np.e + 1)]) and t[0, 2:].sum() == 0
    assert np.allclose(t[1], [0.5, 0.5, 0, 0])
    sharp = distill.soft_targets(values, legal, temperature=0.05)
    assert sharp[0, 0] > 0.999


def test_held_out_split_keeps_games_whole():
    games = np.repeat(np.arange(40), 5)
    train, held = distill.held_out_split(games, 0.1, seed=1)
    assert len(np.intersect1d(games[train], games[held])) == 0
    assert len(np.unique(games[held])) == 4 and len(train) + len(held) == len(games)


def test_fit_learns_the_best_move_and_the_value_and_exports_exactly(tmp_path):
    data = synthetic()
    cfg = distill.FitConfig(hidden=[32], value_hidden=[16], epochs=30, batch_size=64, lr=1e-2, temperature=0.5,
                            augment=False)
    figures = distill.fit(data, tmp_path / "p.npz", cfg, progress=False)
    assert figures["heldout_agreement"] > 0.9 and figures["heldout_regret_points"] < 0.5
    pol = load_policy(tmp_path / "p.npz")
    assert pol.has_value and pol.metadata["config"]["hidden"] == [32]
    x = data["obs"][:50].astype(np.float32)
    assert np.mean(np.abs(pol.value(x) * 100 - (data["outcome"] - data["banked"])[:50])) < 15
    # The numpy forward pass equals the torch nets the fit trained.
    net = distill._build(cfg)
    assert distill._load_numpy(net, pol) == ["policy", "value"]
    with torch.no_grad():
        t_logits = net.pi(torch.from_numpy(x)).numpy()
        t_value = net.v(torch.from_numpy(x)).numpy()[:, 0]
    assert np.allclose(pol.logits(x), t_logits, atol=1e-4) and np.allclose(pol.value(x), t_value, atol=1e-5)
    assert pol.num_actions == NUM_ACTIONS


def test_interrupted_fit_resumes_to_the_same_weights(tmp_path):
    data = synthetic(300, seed=3)
    cfg = distill.FitConfig(hidden=[16], value_hidden=[8], epochs=3, batch_size=32, seed=2)
    distill.fit(data, tmp_path / "whole.npz", cfg, progress=False)

    def stop(figures):
        if figures["epoch"] == 2:
            raise KeyboardInterrupt

    ckpt = tmp_path / "fit.pt"
    with pytest.raises(KeyboardInterrupt):
        distill.fit(data, tmp_path / "resumed.npz", cfg, checkpoint=ckpt, progress=False, log=stop)
    assert ckpt.is_file() and not (tmp_path / "resumed.npz").exists()
    distill.fit(data, tmp_path / "resumed.npz", cfg, checkpoint=ckpt, progress=False)
    a, b = load_policy(tmp_path / "whole.npz"), load_policy(tmp_path / "resumed.npz")
    for wa, wb in zip(a.weights + a.value_weights, b.weights + b.value_weights):
        assert np.array_equal(wa, wb)
    assert [h["epoch"] for h in b.metadata["history"]] == [1, 2, 3]


def test_init_from_a_policy_file_and_bad_settings(tmp_path):
    data = synthetic(100)
    cfg = distill.FitConfig(hidden=[16], value_hidden=[8], epochs=1, batch_size=32)
    distill.fit(data, tmp_path / "a.npz", cfg, progress=False)
    distill.fit(data, tmp_path / "b.npz", cfg, init_from=str(tmp_path / "a.npz"), progress=False)
    assert load_policy(tmp_path / "b.npz").metadata["initialised"] == ["policy", "value"]
    other = distill.FitConfig(hidden=[8], value_hidden=[8], epochs=1, batch_size=32)
    distill.fit(data, tmp_path / "c.npz", other, init_from=str(tmp_path / "a.npz"), progress=False)
    assert load_policy(tmp_path / "c.npz").metadata["initialised"] == ["value"]
    for bad, msg in (({"temperature": 0}, "temperature"), ({"epochs": 0}, "epochs"), ({"nope": 1}, "unknown")):
        with pytest.raises(ValueError, match=msg):
            distill.FitConfig(**bad)


def test_sb3_checkpoint_for_ppo_fine_tuning_keeps_the_policy(tmp_path):
    pytest.importorskip("sb3_contrib")
    from expert_helpers import net
    from sb3_contrib import MaskablePPO

    from agents.learned import save_policy
    from mulle_env.gym_env import MulleEnv
    from training.export import policy_from_sb3
    from training.finetune import to_sb3_checkpoint

    path = save_policy(net(4, hidden=(16,), value=(16,)), tmp_path / "p.npz")
    info = to_sb3_checkpoint(path, tmp_path / "init.zip")
    assert info == {"net": "16", "activation": "relu", "value": True}
    # What mulle-train --init-from does with it: a fresh model of the same shape loads it exactly.
    model = MaskablePPO("MlpPolicy", MulleEnv(opponent="random"), device="cpu",
                        policy_kwargs={"net_arch": {"pi": [16], "vf": [16]}, "activation_fn": torch.nn.ReLU})
    model.set_parameters(str(tmp_path / "init.zip"), exact_match=True, device="cpu")
    x = np.random.default_rng(0).random((6, OBS_SIZE), dtype=np.float32)
    pol = load_policy(path)
    assert np.allclose(policy_from_sb3(model.policy).logits(x), pol.logits(x), atol=1e-5)
    with torch.no_grad():
        v = model.policy.predict_values(torch.from_numpy(x)).numpy()[:, 0]
    assert np.allclose(v, pol.value(x), atol=1e-5)
    other = save_policy(net(4, hidden=(16,), value=(8,)), tmp_path / "q.npz")
    assert to_sb3_checkpoint(other, tmp_path / "q.zip")["value"] is False
