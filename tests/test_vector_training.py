"""MaskablePPO on the batched vector env: the sb3 adapter, self-play, and ``mulle-train --vec batched``."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from mulle_env.vector_env import MulleVectorEnv  # noqa: E402
from training.sb3_vec import SB3VectorEnv  # noqa: E402

SMALL = {"net_arch": [16, 16]}


def test_maskable_ppo_runs_a_few_hundred_steps_on_the_vector_env():
    venv = SB3VectorEnv(MulleVectorEnv(8, opponent="random", ruleset={"sets": 1}, seat="alternate"))
    env = VecMonitor(venv)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=128, n_epochs=1, seed=0, policy_kwargs=SMALL,
                        device="cpu")
    model.learn(512)
    assert model.num_timesteps == 512
    assert len(model.ep_info_buffer) >= 8  # 48 decisions a game: every env finished a game, seen through VecMonitor
    obs = env.reset()
    masks = np.stack(env.env_method("action_masks"))
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert masks[np.arange(8), actions].all()


def test_adapter_reports_terminal_observations_and_seeds_like_dummy_vec_env():
    a = SB3VectorEnv(MulleVectorEnv(3, opponent="random", ruleset={"sets": 1}))
    b = SB3VectorEnv(MulleVectorEnv(3, opponent="random", ruleset={"sets": 1}))
    a.seed(4)
    b.seed(4)
    oa, ob = a.reset(), b.reset()
    assert np.array_equal(oa, ob) and not np.array_equal(oa[0], oa[1])
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(50):
        masks = np.stack(a.env_method("action_masks"))
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        prev = oa
        oa, rewards, dones, infos = a.step(acts)
        assert oa is not prev  # a copy: sb3 still holds the previous observation
        for i in np.flatnonzero(dones):
            ends += 1
            assert infos[i]["terminal_observation"].shape == oa[i].shape and rewards[i] in (-1, 0, 1)
    assert ends == 3
    with pytest.raises(ValueError, match="SAME_STEP"):
        SB3VectorEnv(MulleVectorEnv(2, opponent="random", autoreset_mode="NextStep"))


def test_self_play_trains_with_the_live_network_on_the_other_seat():
    venv = SB3VectorEnv(MulleVectorEnv(4, opponent="self", ruleset={"sets": 1}, seat="alternate"))
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=1, seed=0, policy_kwargs=SMALL,
                        device="cpu")
    venv.use_policy(model.policy)
    model.learn(256)
    assert model.num_timesteps == 256


def test_mulle_train_batched(tmp_path, capsys):
    from training.ppo import main

    out = tmp_path / "run"
    rc = main(["--out-dir", str(out), "--steps", "256", "--vec", "batched", "--envs", "8", "--n-steps", "32",
               "--batch-size", "128", "--epochs", "1", "--opponents", "random=1", "--eval-games", "2",
               "--net", "16,16", "--no-progress", "--seed", "2"])
    assert rc == 0
    assert json.loads((out / "summary.json").read_text())["timesteps"] >= 256
    for flags, message in [(["--opponents", "selfplay=1"], "needs --vec batched"),
                           (["--opponents", "selfplay=1,random=1", "--vec", "batched"], "cannot be mixed")]:
        with pytest.raises(SystemExit) as exc:
            main(["--out-dir", str(tmp_path / "x"), "--no-progress", *flags])
        assert exc.value.code == 2 and message in capsys.readouterr().err
