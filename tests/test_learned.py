"""The learned agent: numpy policy file format, inference, export round-trip, training smoke run."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

import agents
import mulle_env as me
from agents.learned import DEFAULT_POLICY_PATH, LearnedAgent, MLPPolicy, PolicyFileError, load_policy, save_policy
from mulle_env.codec import NUM_ACTIONS
from mulle_env.observation import OBS_SIZE, encode_state
from training.pool import OpponentPool, parse_weights


def _learned_registered() -> None:
    agents.make("learned")  # a built-in: registered with the others (agents.builtin)


def random_policy(seed: int = 0, hidden=(32, 16), activation="tanh") -> MLPPolicy:
    rng = np.random.default_rng(seed)
    sizes = [OBS_SIZE, *hidden, NUM_ACTIONS]
    ws = [rng.normal(0, 1 / np.sqrt(a), (a, b)).astype(np.float32) for a, b in itertools.pairwise(sizes)]
    bs = [rng.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:]]
    return MLPPolicy(ws, bs, activation, {"note": "test"})


@pytest.fixture
def policy_file(tmp_path):
    return str(save_policy(random_policy(), tmp_path / "p.npz"))


def positions(n_games: int = 4, seed: int = 0):
    """States along random games (both seats to move)."""
    rng = random.Random(seed)
    for g in range(n_games):
        st = me.new_game(seed=seed + g)
        while not st.over:
            yield st.copy()
            st.play_unchecked(rng.choice(st.legal_moves()))


def test_importing_the_agent_needs_no_torch():
    code = "import sys, agents.learned; from agents.learned import LearnedAgent; " \
           "sys.exit(1 if {'torch', 'stable_baselines3', 'sb3_contrib'} & set(sys.modules) else 0)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_save_load_round_trip_keeps_logits(tmp_path, activation):
    pol = random_policy(1, activation=activation)
    back = load_policy(save_policy(pol, tmp_path / "x.npz"))
    assert back.activation == activation and back.metadata == {"note": "test"}
    x = np.random.default_rng(0).random((5, OBS_SIZE), dtype=np.float32)
    assert np.array_equal(back.logits(x), pol.logits(x))


def test_legal_logits_match_full_logits():
    pol = random_policy(2)
    for st in list(positions(1))[:50]:
        obs = encode_state(st, st.to_move)
        ids = st.legal_move_ids()
        full = pol.logits(obs)
        assert np.allclose(pol.legal_logits(obs, ids), full[ids], atol=1e-5)
        assert pol.best_action(obs, ids) == ids[int(np.argmax(full[ids]))]


@pytest.mark.parametrize("sample", [False, True])
def test_learned_agent_plays_only_legal_moves(policy_file, sample):
    bot = LearnedAgent(path=policy_file, sample=sample)
    rng = random.Random(3)
    n = 0
    for st in positions(6, seed=10):
        legal = st.legal_moves()
        move = bot.act(st.view(st.to_move), legal, rng)
        assert move in legal
        n += 1
    assert n == 6 * me.codec.MAX_GAME_LENGTH


def test_argmax_is_deterministic_and_sampling_follows_rng(policy_file):
    st = next(s for s in positions(1, seed=5) if len(s.legal_moves()) > 3)
    view, legal = st.view(st.to_move), st.legal_moves()
    greedy = LearnedAgent(path=policy_file)
    assert len({greedy.act(view, legal, random.Random(i)) for i in range(10)}) == 1
    sampler = LearnedAgent(path=policy_file, sample=True, temperature=5.0)
    picks = [sampler.act(view, legal, random.Random(i)) for i in range(40)]
    assert picks == [sampler.act(view, legal, random.Random(i)) for i in range(40)]
    assert len(set(picks)) > 1


def test_registry_builds_learned_with_path(policy_file):
    _learned_registered()
    bot = agents.make(f"learned:path={policy_file}")
    assert isinstance(bot, LearnedAgent) and bot.path == policy_file
    with pytest.raises(agents.AgentSpecError, match="does not exist"):
        agents.make("learned:path=/nonexistent/policy.npz")


def test_a_policy_with_other_weights_or_metadata_is_another_agent_version(policy_file, tmp_path):
    # The arena keys agents by spec; the version tells a retrained policy file apart.
    _learned_registered()
    version = agents.make(f"learned:path={policy_file}").version
    assert version.startswith("1+") and len(version) == 14
    same = save_policy(load_policy(policy_file), tmp_path / "copy.npz")
    assert agents.make(f"learned:path={same}").version == version  # saved again, loaded again: same agent
    assert LearnedAgent.from_policy(random_policy()).version == version
    other = save_policy(random_policy(seed=1), tmp_path / "other.npz")
    assert agents.make(f"learned:path={other}").version != version
    pol = random_policy()
    pol.metadata["note"] = "re-measured"
    assert LearnedAgent.from_policy(pol).version != version
    pol = random_policy()
    pol.biases[-1][7] += 1e-3  # one bias changed
    assert LearnedAgent.from_policy(pol).version != version
    # netsearch plays the same policy under its own code version (3: the defaults of docs/agents.md).
    assert agents.make(f"netsearch:policy={policy_file}").version == "3" + version[1:]
    shipped = agents.make("learned").version
    assert shipped == f"1+{load_policy(DEFAULT_POLICY_PATH).fingerprint()}" != version


def _rewrite(path, tmp_path, change):
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    change(arrays)
    out = tmp_path / "bad.npz"
    np.savez(out, **arrays)
    return out


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: a.pop("layer1.bias"), "missing array 'layer1.bias'"),
        (lambda a: a.pop("format"), "missing 'format'"),
        (lambda a: a.update(format=np.array("something else")), "format tag"),
        (lambda a: a.update(format_version=np.array(99)), "format version 99"),
        (lambda a: a.update(obs_size=np.array(100)), "observations of 100 floats"),
        (lambda a: a.update(num_actions=np.array(10)), "made for 10 actions"),
        (lambda a: a.update(activation=np.array("gelu")), "activation 'gelu'"),
        (lambda a: a.update({"layer1.weight": a["layer1.weight"][:5]}), "layer 1 reads 5 inputs"),
        (lambda a: a.update({"layer0.weight": a["layer0.weight"][:100]}), "reads observations of 100 floats"),
        (lambda a: a.update({"layer2.bias": a["layer2.bias"][:7]}), "bias shape"),
        (lambda a: a.update({"layer2.weight": a["layer2.weight"][:, :10], "layer2.bias": a["layer2.bias"][:10]}),
         "writes 10 action logits"),
        (lambda a: a["layer0.bias"].__setitem__(0, np.nan), "NaN"),
        (lambda a: a.update({"layer0.weight": a["layer0.weight"].astype(np.int32)}), "must hold floats"),
        (lambda a: a.update(metadata=np.array("{not json")), "metadata, line 1: not valid JSON"),
        # Metadata nested thousands deep raised a bare RecursionError (issue 31): the bounded reader refuses it.
        (lambda a: a.update(metadata=np.array("[" * 5000 + "]" * 5000)), "metadata, line 1: nested more than 64"),
    ],
)
def test_incompatible_files_fail_clearly(policy_file, tmp_path, change, message):
    bad = _rewrite(policy_file, tmp_path, change)
    with pytest.raises(PolicyFileError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_policy(bad)


def test_corrupt_files_fail_clearly(policy_file, tmp_path):
    with open(policy_file, "rb") as fh:
        data = fh.read()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(data[: len(data) // 2])
    text = tmp_path / "text.npz"
    text.write_text("this is not a policy\n")
    for path in (truncated, text):
        with pytest.raises(PolicyFileError, match="not a readable .npz policy file"):
            load_policy(path)
        with pytest.raises(ValueError):
            LearnedAgent(path=str(path))
    with pytest.raises(PolicyFileError, match="does not exist"):
        load_policy(tmp_path / "missing.npz")


def test_pool_weights_and_draws(tmp_path, policy_file):
    assert parse_weights("heuristic=0.6, random=0.4") == {"heuristic": 0.6, "random": 0.4}
    assert parse_weights("pimc:samples~4=1") == {"pimc:samples=4": 1.0}
    for bad in ("heuristic", "heuristic=x", "heuristic=-1", "random=0", "heuristic=nan", "heuristic=inf",
                "heuristic=1,random=-inf"):
        with pytest.raises(ValueError):
            parse_weights(bad)
    snaps = tmp_path / "pool"
    pool = OpponentPool({"random": 1, "self": 1}, snapshot_dir=str(snaps), seed=1)
    names = set()
    for _ in range(20):
        pool.reset()
        names.add(pool.current_name)
    assert names == {"random"}  # no snapshot yet: 'self' stands aside
    snaps.mkdir()
    save_policy(random_policy(), snaps / "step_1.npz")
    for _ in range(40):
        pool.reset()
        names.add(pool.current_name)
    assert names == {"random", "self:step_1"}


def test_pool_plays_in_the_env(tmp_path):
    from mulle_env.gym_env import MulleEnv

    env = MulleEnv(opponent=OpponentPool({"random": 1, "heuristic": 1}, seed=0), seat="alternate")
    _, info = env.reset(seed=0)
    done = False
    while not done:
        _obs, r, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert r in (-1.0, 0.0, 1.0)


def test_shipped_policies_load_and_play():
    _learned_registered()
    bot = agents.make("learned")
    meta = bot.policy.metadata
    # The shipped net is an afterstate net made by `mulle-train fit` (`mulle-expert fit`, its deprecated name, made
    # the generations before 7) or by `mulle-train average` of such nets (generation 8); the PPO policy is kept
    # beside it.
    assert bot.policy.head == "afterstate" and meta["command"][0] in ("mulle-train", "mulle-expert")
    assert meta["command"][1] in ("fit", "average")
    assert os.path.getsize(DEFAULT_POLICY_PATH) < 8 * 2**20
    ppo = agents.make(f"learned:path={os.path.join(os.path.dirname(DEFAULT_POLICY_PATH), 'learned_ppo.npz')}")
    assert ppo.policy.head == "logits" and ppo.policy.metadata.get("timesteps", 0) > 0
    rng = random.Random(0)
    for st in list(positions(1, seed=99))[:60]:
        for b in (bot, ppo):
            assert b.act(st.view(st.to_move), st.legal_moves(), rng) in st.legal_moves()


# ----- with torch (the `train` extra) ----------------------------------------------


def test_export_matches_torch_policy(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from mulle_env.gym_env import MulleEnv
    from training.export import export_model

    torch.manual_seed(0)
    for activation in (torch.nn.Tanh, torch.nn.ReLU):
        model = MaskablePPO("MlpPolicy", MulleEnv(opponent="random"), device="cpu", seed=0,
                            policy_kwargs={"net_arch": {"pi": [64, 32], "vf": [16]}, "activation_fn": activation})
        with torch.no_grad():  # untrained heads are near-uniform; widen them so argmax is not a near tie
            model.policy.action_net.weight.mul_(50)
        pol = export_model(model, tmp_path / "exported.npz", {"test": True})
        back = load_policy(tmp_path / "exported.npz")
        states = list(positions(3, seed=21))
        obs = np.stack([encode_state(s, s.to_move) for s in states])
        masks = np.stack([me.codec.legal_mask(s, dtype=bool) for s in states])
        want, _ = model.predict(obs, action_masks=masks, deterministic=True)
        got = [back.best_action(o, s.legal_move_ids()) for o, s in zip(obs, states)]
        assert len(states) > 500
        assert np.array_equal(np.asarray(got), want)
        with torch.no_grad():
            t_logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(torch.as_tensor(obs)))
        assert np.allclose(back.logits(obs), t_logits.numpy(), atol=1e-4)
        assert pol.num_parameters() == back.num_parameters()


@pytest.mark.slow
def test_tiny_training_run_writes_a_loadable_policy(tmp_path):
    pytest.importorskip("sb3_contrib")
    from training.ppo import main

    out = tmp_path / "run"
    export = tmp_path / "learned.npz"
    rc = main(["--out-dir", str(out), "--steps", "512", "--envs", "2", "--n-steps", "128", "--batch-size", "128",
               "--bc-games", "2", "--bc-workers", "1", "--bc-epochs", "1", "--eval-games", "2",
               "--eval-every", "256", "--checkpoint-every", "256", "--net", "32,32", "--export", str(export),
               "--no-progress", "--seed", "3"])
    assert rc == 0
    pol = load_policy(export)
    assert pol.hidden_sizes == (32, 32) and pol.metadata["seed"] == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["timesteps"] >= 512
    assert (out / "eval.csv").read_text().count("\n") >= 3
    rc = main(["--out-dir", str(out), "--resume", "--steps", "768", "--envs", "2", "--n-steps", "128",
               "--batch-size", "128", "--eval-games", "2", "--eval-every", "256", "--checkpoint-every", "256",
               "--no-progress"])
    assert rc == 0 and json.loads((out / "summary.json").read_text())["timesteps"] >= 768
    ckpt = max((out / "checkpoints").glob("*.zip"))
    rc = main(["--out-dir", str(tmp_path / "stage2"), "--init-from", str(ckpt), "--net", "32,32", "--steps", "256",
               "--envs", "2", "--n-steps", "128", "--batch-size", "128", "--eval-games", "2", "--no-progress",
               "--lr", "1e-5"])
    assert rc == 0
    meta = load_policy(tmp_path / "stage2" / "best.npz").metadata
    assert meta["init_from"] == str(ckpt) and meta["bc"]["games"] == 2


def test_suit_swap_augmentation_is_a_symmetry_of_the_encoding():
    from training.bc import suit_swap_permutations

    obs_perm, act_perm = suit_swap_permutations()

    def swap(x):
        if isinstance(x, str):
            return x.replace("KL", "\0").replace("HJ", "KL").replace("\0", "HJ")
        if isinstance(x, list):
            return [swap(y) for y in x]
        if isinstance(x, dict):
            return {k: swap(v) for k, v in x.items()}
        return x

    for st in list(positions(1, seed=4))[::3]:
        twin = me.GameState.from_dict(swap(st.to_dict()))
        p = st.to_move
        assert np.array_equal(encode_state(st, p)[obs_perm], encode_state(twin, p))
        assert sorted(act_perm[st.legal_move_ids()].tolist()) == twin.legal_move_ids()


def test_learned_agent_refuses_rulesets_its_action_space_cannot_hold():
    if not os.path.isfile(DEFAULT_POLICY_PATH):
        pytest.skip("no shipped policy")
    agent = LearnedAgent()
    st = me.new_game(4, me.Ruleset(forced_capture=False))
    while all(m.id is not None for m in st.legal_moves()):
        st.play(st.legal_moves()[-1])
    with pytest.raises(ValueError, match="forced_capture=True"):
        agent.act(st.view(st.to_move), st.legal_moves(), random.Random(0))


# ----- mulle-train: arguments checked first, argparse-style (issue 11) ------------------------
@pytest.mark.parametrize("argv, message", [
    (["--opponents", "junk"], "--opponents: opponent weight 'junk' must read spec=weight"),
    (["--opponents", "heuristic=-1"], "--opponents: opponent weight 'heuristic=-1' is negative"),
    (["--opponents", "heuristic=nan"], "--opponents: opponent weight 'heuristic=nan' is not a finite number"),
    (["--opponents", "heuristic=inf,random=1"], "--opponents: opponent weight 'heuristic=inf' is not a finite number"),
    (["--opponents", "nosuch=1"], "--opponents: agent spec 'nosuch': unknown agent"),
    (["--eval-opponent", "nosuch"], "--eval-opponent: agent spec 'nosuch'"),
    (["--bc-games", "2", "--bc-teacher", "nosuch"], "--bc-teacher: agent spec 'nosuch'"),
    (["--lr", "-1"], "--lr must be > 0, not -1"),
    (["--batch-size", "0"], "--batch-size must be >= 1, not 0"),
    (["--threads", "0"], "--threads must be >= 1, not 0"),
    (["--steps", "-5"], "--steps must be >= 0, not -5"),
    (["--gamma", "1.5"], "--gamma must be at most 1"),
    (["--eval-games", "41"], "--eval-games plays duplicate pairs"),
    (["--score-scale", "nan"], "--score-scale must be a finite number"),
    (["--net", "a,b"], "--net must be comma-separated widths"),
    (["--init-from", "/nope.zip"], "--init-from '/nope.zip' does not exist"),
    (["--out-dir", "/proc/nope"], "--out-dir '/proc/nope' cannot be written"),
    (["--out-dir", ""], "--out-dir is an empty path; give a directory name"),
    (["--out-dir", "/dev/null/run"], "--out-dir '/dev/null/run': '/dev/null' is a character device, not a directory"),
    (["--export", "/missing/dir/x.npz"], "--export '/missing/dir/x.npz': directory '/missing/dir' does not exist"),
])
def test_train_arguments_are_checked_first_and_exit_2_naming_the_flag(argv, message, capsys, tmp_path):
    from training.ppo import main

    with pytest.raises(SystemExit) as exc:
        main(["--out-dir", str(tmp_path / "run"), *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists() and not os.path.exists("/missing")


def test_train_argument_errors_come_before_the_existing_checkpoints_check(capsys, tmp_path):
    from training.ppo import main

    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    (tmp_path / "run" / "checkpoints" / "step_0000000001.zip").write_bytes(b"")
    with pytest.raises(SystemExit):
        main(["--out-dir", str(tmp_path / "run"), "--lr", "-1"])
    assert "--lr" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--out-dir", str(tmp_path / "run")])
    assert "already holds checkpoints; pass --resume" in capsys.readouterr().err


def test_pool_of_only_self_without_snapshots_says_so(tmp_path):
    from training.pool import OpponentPool

    pool = OpponentPool({"self": 1.0}, snapshot_dir=str(tmp_path))  # built before the trainer's first snapshot
    with pytest.raises(ValueError, match="only 'self'.*no snapshot"):
        pool.reset()
    # Nothing drawn yet: asking it to move says why, not AttributeError on None.
    with pytest.raises(RuntimeError, match="drawn no opponent yet"):
        pool.act(None, [], random.Random(0))


def test_train_help_explains_every_flag():
    from training.ppo import build_parser

    parser = build_parser()
    missing = [a.option_strings[0] for a in parser._actions if a.option_strings and not a.help]
    assert not missing
    assert "Quick start" in parser.epilog


def test_ctrl_c_in_mulle_train_exits_130(monkeypatch, tmp_path, capsys):
    from training import ppo as train_mod

    def interrupt(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_mod, "train", interrupt)
    assert train_mod.main(["--out-dir", str(tmp_path / "run"), "--steps", "4096"]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_steps_rounding_is_said_out_loud(monkeypatch, tmp_path, capsys):
    from training import ppo as train_mod

    monkeypatch.setattr(train_mod, "train", lambda args: None)
    assert train_mod.main(["--out-dir", str(tmp_path / "run"), "--steps", "100"]) == 0
    assert "--steps 100 trains 2048 steps" in capsys.readouterr().out


@pytest.mark.slow
def test_pure_self_play_trains_on_a_fresh_run(tmp_path):
    pytest.importorskip("sb3_contrib")
    from training.ppo import main

    out = tmp_path / "self"
    assert main(["--out-dir", str(out), "--steps", "256", "--envs", "2", "--n-steps", "128", "--batch-size", "128",
                 "--opponents", "self=1", "--eval-games", "2", "--net", "16", "--no-progress"]) == 0
    assert (out / "pool" / "step_0000000000.npz").is_file()
