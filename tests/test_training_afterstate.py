"""PPO with an afterstate actor (training/afterstate_policy.py): the sb3 adapter's Dict observation, the policy's
logits and export, the warm start on afterstates, and ``mulle-train ppo --actor afterstate`` (docs/learning.md)."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from agents.learned.agent import LearnedAgent  # noqa: E402
from agents.learned.policy import load_policy  # noqa: E402
from mulle_env.afterstates import AFTERSTATE_SIZE  # noqa: E402
from mulle_env.extras import extras_size  # noqa: E402
from mulle_env.vector_env import MulleVectorEnv  # noqa: E402
from training.afterstate_policy import AfterstatePolicy  # noqa: E402
from training.cli import train_main  # noqa: E402
from training.sb3_vec import SB3VectorEnv  # noqa: E402

SMALL = {"net_arch": {"pi": [16, 16], "vf": [16, 16]}}
TINY = ["--envs", "8", "--n-steps", "32", "--batch-size", "128", "--epochs", "1", "--net", "16,16",
        "--eval-games", "2", "--eval-every", "256", "--checkpoint-every", "256", "--no-progress"]


def _env(k: int = 4, slots: int = 48, extras: str | None = None) -> SB3VectorEnv:
    return SB3VectorEnv(MulleVectorEnv(k, opponent="heuristic", reward="score_delta", seat="alternate"),
                        afterstate_slots=slots, afterstate_extras=extras)


def test_the_dict_observation_holds_each_legal_moves_afterstate_and_the_masks_match() -> None:
    env = _env(extras="capture-v2")
    env.seed(3)
    obs = env.reset()
    width = AFTERSTATE_SIZE + extras_size("capture-v2")
    assert obs["after"].shape == (4, 48, width) and obs["obs"].shape[0] == 4
    for _ in range(20):
        ids, offsets = env.venv.legal_ids()
        masks = np.stack(env.env_method("action_masks"))
        for i in range(4):
            legal = ids[offsets[i]:offsets[i + 1]]
            slotted = obs["ids"][i][obs["ids"][i] >= 0].astype(int)
            assert list(slotted) == list(legal) and list(np.flatnonzero(masks[i])) == list(legal)
            assert not obs["after"][i, len(legal):].any()  # empty slots are zero
        acts = np.array([np.flatnonzero(m)[0] for m in masks])
        obs, _, _, _ = env.step(acts)


def test_positions_with_more_moves_than_slots_offer_their_first_ones_and_are_counted() -> None:
    env = _env(slots=2)
    env.seed(1)
    env.reset()
    ids, offsets = env.venv.legal_ids()
    masks = np.stack(env.env_method("action_masks"))
    for i in range(4):
        legal = list(ids[offsets[i]:offsets[i + 1]])
        assert list(np.flatnonzero(masks[i])) == legal[:2]
    assert env.truncated_positions == sum(1 for i in range(4) if offsets[i + 1] - offsets[i] > 2)
    assert env.truncated_positions > 0


def test_a_fresh_actor_takes_points_greedily_and_its_file_plays_as_the_torch_policy_does() -> None:
    env = _env()
    model = MaskablePPO(AfterstatePolicy, env, n_steps=16, batch_size=32, seed=0, device="cpu", policy_kwargs=SMALL)
    policy = model.policy
    env.seed(5)
    obs = env.reset()
    tensors = {k: torch.as_tensor(v) for k, v in obs.items()}
    logits = policy.action_logits(tensors).detach().numpy()
    for i in range(4):
        n = int((obs["ids"][i] >= 0).sum())
        got = logits[i, obs["ids"][i][:n].astype(int)]
        np.testing.assert_allclose(got, obs["banked"][i][:n] / 2.0, rtol=1e-6)  # zero last layer, temperature 2
    # Give the actor weights, then its exported file must choose what the torch policy's best score chooses.
    with torch.no_grad():
        for p in policy.actor.parameters():
            p.copy_(torch.randn_like(p) * 0.05)
    pol = policy.to_numpy()
    assert pol.head == "afterstate" and pol.extras is None
    agent = LearnedAgent.from_policy(pol)
    masks = np.stack(env.env_method("action_masks"))
    want, _ = model.predict(obs, action_masks=masks, deterministic=True)
    for i in range(4):
        st = env.venv._core.stepper.state(i)
        seat = int(env.venv._core.seats[i])
        move = agent.act(st.view(seat), st.legal_moves(), random.Random(0))
        assert move.id == int(want[i])


def test_the_adapter_refuses_self_play_and_the_policy_refuses_a_plain_observation() -> None:
    env = _env()
    with pytest.raises(ValueError, match="afterstate actor needs that seat's afterstates"):
        env.use_policy(None)  # type: ignore[arg-type]
    plain = SB3VectorEnv(MulleVectorEnv(2, opponent="random"))
    with pytest.raises(ValueError, match="Dict observation"):
        MaskablePPO(AfterstatePolicy, plain, n_steps=16, batch_size=32, device="cpu")
    with pytest.raises(ValueError, match="extra-input block"):
        _env(extras="capture-v9")


def test_the_warm_start_clones_greedy_on_afterstates_and_a_run_resumes(tmp_path) -> None:
    out, export = tmp_path / "run", tmp_path / "p.npz"
    lines: list[str] = []
    argv = ["ppo", "--out-dir", str(out), "--vec", "batched", "--actor", "afterstate", "--extras", "capture-v1",
            "--opponents", "heuristic=1", "--reward", "score_delta", "--bc-games", "4", "--bc-epochs", "1",
            "--bc-workers", "1", "--export", str(export), *TINY]
    assert train_main([*argv, "--steps", "256"], out=lines.append) == 0
    pol = load_policy(export)
    assert pol.head == "afterstate" and pol.extras == "capture-v1" and pol.has_value
    assert pol.weights[0].shape[0] == AFTERSTATE_SIZE + extras_size("capture-v1")
    assert "temperature_points" in pol.metadata
    # The checkpoint loads with its custom policy and trains on.
    assert train_main([*argv, "--steps", "512", "--resume"], out=lines.append) == 0
    model = MaskablePPO.load(sorted((out / "checkpoints").glob("step_*.zip"))[-1], device="cpu")
    assert isinstance(model.policy, AfterstatePolicy) and model.num_timesteps == 512
    assert model.policy.extras == "capture-v1"


@pytest.mark.parametrize(("extra", "says"), [
    (["--vec", "dummy"], "--actor afterstate needs --vec batched"),
    (["--vec", "batched", "--game", "casino"], "casino offers no afterstates yet"),
    (["--vec", "batched", "--opponents", "selfplay=1"], "cannot play --opponents selfplay"),
    (["--vec", "batched", "--extras", "nope"], "no extra-input block"),
])
def test_bad_afterstate_flags_are_refused_naming_them(tmp_path, capsys, extra, says) -> None:
    with pytest.raises(SystemExit) as exc:
        train_main(["ppo", "--out-dir", str(tmp_path / "x"), "--actor", "afterstate", *extra, "--steps", "0"])
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_extras_without_an_afterstate_actor_are_refused(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit):
        train_main(["ppo", "--out-dir", str(tmp_path / "x"), "--extras", "capture-v1", "--steps", "0"])
    assert "--extras is an afterstate actor's input" in capsys.readouterr().err


def test_max_minutes_stops_training_early_enough_for_the_last_update_and_the_final_evaluation(tmp_path, capsys
                                                                                                ) -> None:
    import json

    out = tmp_path / "run"
    argv = ["ppo", "--out-dir", str(out), "--vec", "batched", "--actor", "afterstate", "--opponents", "heuristic=1",
            "--reward", "score_delta", "--steps", "1000000", "--max-minutes", "0.3", *TINY]
    assert train_main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert 0 < summary["timesteps"] < 1_000_000
    # The stop keeps the measured update and evaluation in hand, and says so.
    said = capsys.readouterr().out
    assert "--max-minutes 0.3 reached" in said and "for the last update and the final evaluation" in said, said


def test_a_run_resumed_with_another_actor_is_refused_naming_both(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    base = ["ppo", "--out-dir", str(out), "--vec", "batched", "--opponents", "random=1", "--steps", "256", *TINY]
    assert train_main(base) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        train_main([*base, "--resume", "--actor", "afterstate", "--extras", "capture-v4", "--steps", "512"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "holds a run of --actor logits" in err and "asks for --actor afterstate --extras capture-v4" in err, err
