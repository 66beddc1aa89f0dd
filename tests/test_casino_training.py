"""Training for Casino from nothing (issue 50, item 6): policy files that know their game, ``learned`` at Casino,
``mulle-train ppo --game casino`` and ``mulle-train expert --game casino``, and what they refuse.

Tiny sizes, as tests/test_training_smoke.py's: each road runs end to end in seconds on 2 cores, and
what it writes plays in ``mulle-arena --game casino`` as ``learned:path=FILE``. How strong a short
run's net is: docs/learning.md, "Casino".
"""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.learned.casino import CasinoLearnedAgent
from agents.learned.policy import (
    MLPPolicy,
    PolicyFileError,
    PolicyGameError,
    RulesetMismatchError,
    game_layout,
    load_policy,
    save_policy,
)
from mulle_env import casino
from mulle_env.engine import GameLoop
from mulle_env.games import casino as ce
from training.cli import train_main

#: Casino agents of helper code besides random, as the registry has them now (the pool mixes those that exist).
CASINO_AGENTS = [n for n in ("heuristic", "greedy") if agents.plays(n, "casino")]


def casino_net(hidden: int = 8, seed: int = 0, ruleset: dict[str, object] | None = None,
               value: bool = False) -> MLPPolicy:
    rng = np.random.default_rng(seed)
    w = [rng.normal(0, 0.3, (ce.OBS_SIZE, hidden)).astype(np.float32),
         rng.normal(0, 0.3, (hidden, ce.MOVE_ACTIONS)).astype(np.float32)]
    b = [np.zeros(hidden, np.float32), rng.normal(0, 0.1, ce.MOVE_ACTIONS).astype(np.float32)]
    vw = [rng.normal(0, 0.1, (ce.OBS_SIZE, 4)).astype(np.float32), rng.normal(0, 0.1, (4, 1)).astype(np.float32)]
    vb = [np.zeros(4, np.float32), np.zeros(1, np.float32)]
    return MLPPolicy(w, b, "relu", {"made": "test"}, vw if value else (), vb if value else (), ruleset=ruleset,
                     game="casino")


def play(bots: list[object], seed: int = 0, rules: dict[str, object] | None = None) -> casino.GameState:
    state = casino.new_game(seed, casino.Ruleset.from_dict(rules or {"rounds": 1}))
    loop = GameLoop(state, bots, [random.Random(seed), random.Random(seed + 1)])
    loop.start()
    loop.run()
    return state


def exit_code(argv: list[str], lines: list[str] | None = None) -> int:
    """``mulle-train ARGV``'s exit status: bad usage exits (``SystemExit``) 2, a refused run returns it."""
    try:
        return train_main(argv, out=(lines.append if lines is not None else print))
    except SystemExit as exc:
        return int(exc.code or 0)


def arena_plays(policy: Path, tmp_path: Path, opponent: str = "random") -> None:
    """``mulle-arena --game casino learned:path=POLICY OPPONENT --games 2`` plays both games."""
    from arena.cli import main as arena_main

    out = tmp_path / f"arena_{policy.stem}.jsonl"
    code = arena_main(["--game", "casino", f"learned:path={policy}", opponent, "--games", "2", "--workers", "1",
                       "--seed", "3", "--out", str(out), "--quiet"])
    assert code == 0
    lines = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    assert len(lines) == 2 and all(ln["status"] == "ok" for ln in lines), lines
    assert all(ln["game"] == "mulle_env.casino" for ln in lines)


# ----- policy files know their game ----------------------------------------------------------------


def test_a_casino_file_records_its_game_and_layout_and_round_trips(tmp_path):
    pol = casino_net(value=True)
    path = save_policy(pol, tmp_path / "c.npz")
    with np.load(path) as z:
        assert str(z["game"]) == "casino" and int(z["obs_size"]) == ce.OBS_SIZE
        assert int(z["num_actions"]) == ce.MOVE_ACTIONS == 504
        assert json.loads(str(z["obs_layout"])) == ce.layout_description() == game_layout("casino")
    back = load_policy(path)
    assert back.game == "casino" and back.fingerprint() == pol.fingerprint() and back.has_value
    x = np.random.default_rng(1).random((3, ce.OBS_SIZE), dtype=np.float32)
    assert np.allclose(back.logits(x), pol.logits(x)) and np.allclose(back.value(x), pol.value(x))
    # The same weights as a Mulle net could not exist (another size); the game is part of the agent's version.
    assert pol.fingerprint() != MLPPolicy(pol.weights, pol.biases, "relu", {"made": "test"}, game="casino",
                                          ruleset={"sweeps": False}).fingerprint()


def test_mulle_files_load_as_mulle_and_every_new_file_says_its_game(tmp_path):
    shipped = load_policy(agents.make("learned").path)
    assert shipped.game == "mulle"
    path = save_policy(load_policy(Path(agents.make("learned").path).with_name("learned_ppo.npz")), tmp_path / "m.npz")
    with np.load(path) as z:
        assert str(z["game"]) == "mulle"
        arrays = {k: z[k] for k in z.files if k != "game"}
    np.savez(tmp_path / "old.npz", **arrays)  # as every file made before the key: Mulle
    assert load_policy(tmp_path / "old.npz").game == "mulle"


def test_a_file_of_one_game_is_refused_by_the_others_agent_naming_its_game(tmp_path):
    path = save_policy(casino_net(), tmp_path / "c.npz")
    with pytest.raises(agents.AgentSpecError, match=r"is a Casino net \(its game is 'casino'\), and this agent plays "
                                                    r"Mulle: play it at Casino \(mulle-arena --game casino"):
        agents.make(f"learned:path={path}")
    with pytest.raises(agents.AgentSpecError, match="is a Casino net"):
        agents.make(f"netsearch:policy={path}")
    mulle = agents.make("learned").path
    with pytest.raises(agents.AgentSpecError, match=r"is a Mulle net \(its game is 'mulle'\), and this agent plays "
                                                    r"Casino.*mulle-train ppo --game casino"):
        agents.make(f"learned:path={mulle}", game="casino")
    with pytest.raises(PolicyGameError):
        CasinoLearnedAgent.from_policy(load_policy(mulle))


def test_learned_at_casino_plays_the_shipped_net_and_a_missing_one_names_learned_path(monkeypatch, capsys, tmp_path):
    import agents.learned.casino as learned_casino

    bot = agents.make("learned", game="casino")
    assert bot.path == learned_casino.DEFAULT_CASINO_POLICY_PATH and bot.policy.game == "casino"
    assert bot.policy.head == "afterstate"  # what a capture takes is exact; the net scores what the move leaves
    meta = bot.policy.metadata
    assert meta["command"][:2] == ["mulle-train", "fit"] and meta["game"] == "casino"  # the pipeline's own fit
    assert Path(bot.path).stat().st_size < 4 * 2**20
    state = play([bot, agents.make("greedy", game="casino")], seed=5)
    assert state.over and len(state.sheets) == 1
    assert agents.plays("learned", "casino") and "learned" in agents.available(game="casino")
    arena_plays(Path(bot.path), tmp_path, "greedy")
    # An install without the package data: the message names learned:path=FILE.
    monkeypatch.setattr(learned_casino, "DEFAULT_CASINO_POLICY_PATH", str(tmp_path / "gone.npz"))
    with pytest.raises(agents.AgentSpecError, match=r"shipped Casino net .* is missing.*learned:path=FILE"):
        agents.make("learned", game="casino")


def test_bad_casino_files_are_refused_saying_why(tmp_path):
    path = save_policy(casino_net(), tmp_path / "c.npz")
    with np.load(path) as z:
        good = {k: z[k] for k in z.files}

    def bad(**changes: object) -> str:
        arrays = {**good, **{k: np.array(v) for k, v in changes.items()}}
        np.savez(tmp_path / "bad.npz", **arrays)
        with pytest.raises(PolicyFileError) as exc:
            load_policy(tmp_path / "bad.npz")
        return str(exc.value)

    assert "game 'chess' is not one this code plays nets of" in bad(game="chess")
    assert "a Casino net made for observations of 524 floats" in bad(obs_size=524)
    assert "a Casino net made for 2812 actions" in bad(num_actions=2812)
    assert "the net writes 504 numbers, but an afterstate net writes 1" in bad(head="afterstate")
    layout = ce.layout_description()
    layout["slices"] = [["loose", 0, 52], ["hand", 52, 104], *layout["slices"][2:]]
    from mulle_env.observation import layout_fingerprint

    moved = bad(obs_layout=json.dumps(layout, sort_keys=True), obs_fingerprint=layout_fingerprint(layout))
    assert "slice 'hand': [52:104] in the file, [0:52] here" in moved and "Retrain" in moved
    mulle_sized = {**good, "game": np.array("mulle")}  # a Casino net's layers relabelled as Mulle's
    np.savez(tmp_path / "relabelled.npz", **mulle_sized)
    with pytest.raises(PolicyFileError, match="456 floats, but this mulle_env encodes 524"):
        load_policy(tmp_path / "relabelled.npz")


# ----- learned plays Casino ------------------------------------------------------------------------


def test_learned_at_casino_plays_the_masked_argmax_legally_and_samples_by_the_rng(tmp_path):
    pol = casino_net()
    path = save_policy(pol, tmp_path / "c.npz")
    bot = agents.make(f"learned:path={path}", game="casino")
    assert isinstance(bot, CasinoLearnedAgent) and bot.plays("casino") and not bot.plays("mulle")
    assert bot.version == f"2+{pol.fingerprint()}" and bot.spec == f"learned:path={path}"  # 2: the endgame solved
    state = casino.new_game(4)
    for _ in range(12):
        legal = state.legal_moves()
        view = state.view(state.to_move)
        move = bot.act(view, legal, random.Random(0))
        full = pol.logits(ce.encode_view(view))
        assert move in legal and move.id == max((m.id for m in legal), key=lambda i: (full[i], -i))
        state.play(move)
    sampler = agents.make(f"learned:path={path},sample=true,temperature=2", game="casino")
    view, legal = state.view(state.to_move), state.legal_moves()
    assert sampler.act(view, legal, random.Random(5)) == sampler.act(view, legal, random.Random(5))
    finished = play([pickle.loads(pickle.dumps(bot)), agents.make("random", game="casino")])
    assert finished.over


def test_learned_at_casino_checks_the_rules_it_was_trained_for(tmp_path):
    bot = CasinoLearnedAgent.from_policy(casino_net(ruleset={"sweeps": False}))
    bot.check_ruleset(casino.Ruleset(sweeps=False, rounds=1, target_score=11))  # game length: any
    with pytest.raises(RulesetMismatchError, match=r"sweeps=True \(trained for False\).*--game casino"):
        bot.check_ruleset(casino.Ruleset())
    with pytest.raises(ValueError, match="gather_all=False"):
        bot.check_ruleset(casino.Ruleset(sweeps=False, gather_all=False))


# ----- mulle-train ppo --game casino ---------------------------------------------------------------

PPO_SMALL = ["--envs", "2", "--n-steps", "64", "--batch-size", "64", "--epochs", "1", "--net", "16",
             "--eval-games", "2", "--eval-every", "128", "--checkpoint-every", "128", "--threads", "1",
             "--no-progress"]


def test_ppo_casino_from_nothing_makes_a_policy_the_arena_plays(tmp_path):
    out = tmp_path / "ppo"
    policy = tmp_path / "ppo.npz"
    pool = ",".join(f"{n}=1" for n in ["random", *CASINO_AGENTS, "self"])
    code = train_main(["ppo", "--game", "casino", "--out-dir", str(out), "--steps", "256", "--opponents", pool,
                       "--eval-opponent", CASINO_AGENTS[-1] if CASINO_AGENTS else "random",
                       "--export", str(policy), *PPO_SMALL])
    assert code == 0 and policy.is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["timesteps"] == 256 and json.loads((out / "state.json").read_text())["game"] == "casino"
    pol = load_policy(policy)
    assert pol.game == "casino" and pol.metadata["game"] == "casino" and pol.hidden_sizes == (16,)
    assert sorted(p.name for p in (out / "pool").glob("*.npz"))  # the 'self' snapshots are Casino nets too
    assert all(load_policy(p).game == "casino" for p in (out / "pool").glob("*.npz"))
    arena_plays(policy, tmp_path)
    # --resume with the other game is refused, naming both.
    assert exit_code(["ppo", "--out-dir", str(out), "--steps", "512", "--resume", *PPO_SMALL]) == 2


@pytest.mark.parametrize("argv, words", [
    (["--bc-games", "4"], "--bc-games: the behaviour-cloning warm start is Mulle's"),
    (["--opponents", "nosuch=1"], "unknown agent 'nosuch'; agents that play casino"),
    (["--eval-opponent", "nosuch"], "--eval-opponent: agent spec 'nosuch'"),
])
def test_ppo_casino_refuses_mulle_only_options_by_name(argv, words, tmp_path, capsys):
    out = tmp_path / "never"
    base = ["ppo", "--game", "casino", "--out-dir", str(out), "--opponents", "random=1", "--eval-opponent", "random"]
    assert exit_code([*base, *argv]) == 2
    assert words in capsys.readouterr().err
    assert not out.exists()


def test_ppo_casino_scales_rewards_by_a_rounds_points_and_mulles_defaults_stay(capsys):
    from training.cli import _apply_game as apply_game
    from training.cli import build_parser

    for argv, scale in ((["ppo"], 100.0), (["ppo", "--game", "casino"], 11.0),
                        (["ppo", "--game", "casino", "--score-scale", "50"], 50.0)):
        parser = build_parser()
        apply_game(parser, argv)
        assert parser.parse_args(argv).score_scale == scale


# ----- mulle-train expert --game casino ------------------------------------------------------------


EXPERT = ["--first-teacher", "pimc:samples=2", "--teacher", "pimc:samples=2", "--first-games", "4", "--games", "2",
          "--shard-games", "2", "--hidden", "16", "--first-epochs", "1", "--epochs", "1", "--batch-size", "64",
          "--screen-opponents", "random", "--screen-games", "2", "--workers", "1", "--rule", "rounds=1",
          "--no-progress"]


def test_expert_casino_from_nothing_makes_a_champion_the_arena_plays(tmp_path):
    root = tmp_path / "expert"
    lines: list[str] = []
    code = train_main(["expert", "--game", "casino", "--out-dir", str(root), "--generations", "2", "--on-policy",
                       "--net", "logits", *EXPERT], out=lines.append)
    assert code == 0, lines
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["settings"]["game"] == "casino" and manifest["settings"]["extras"] is None
    g0, g1 = manifest["generations"]
    assert g0["teacher"] == "pimc:samples=2" and g1["teacher"] == "pimc:samples=2"  # pimc searches with no net
    assert g1["driver"] == f"learned:path={root / 'gen_000' / 'policy.npz'}"  # --on-policy: the champion plays
    assert g0["fit"]["net"] == "logits" and g0["promoted"] and "learned|random" in g0["eval"]
    spec = json.loads((root / "gen_000" / "data" / "spec.json").read_text())
    assert spec["game"] == "casino" and spec["afterstates"] is False
    champion = load_policy(root / "champion.npz")
    assert champion.game == "casino" and champion.head == "logits" and champion.has_value
    assert champion.ruleset["rounds"] == 1  # the rules it was trained for, recorded
    arena_plays(root / "champion.npz", tmp_path)  # under the default rules: rounds and target_score are free
    # The same directory as a Mulle run is refused, naming the game.
    assert exit_code(["expert", "--out-dir", str(root), "--generations", "2", "--first-games", "4",
                      "--shard-games", "2", "--no-progress"], lines) == 2


def test_expert_casino_netsearch_teacher_searches_with_the_champion(tmp_path):
    root = tmp_path / "ns"
    lines: list[str] = []
    argv = [a if a != "pimc:samples=2" else "netsearch:samples=2,width=2,depth=2" for a in EXPERT]
    argv[argv.index("--first-teacher") + 1] = "pimc:samples=2"  # generation 0 has no net to search with
    code = train_main(["expert", "--game", "casino", "--out-dir", str(root), "--generations", "2", "--net", "logits",
                       *argv], out=lines.append)
    assert code == 0, lines
    g0, g1 = json.loads((root / "manifest.json").read_text())["generations"]
    assert g0["teacher"] == "pimc:samples=2"
    assert g1["teacher"] == f"netsearch:depth=2,policy={root / 'gen_000' / 'policy.npz'},samples=2,width=2"
    assert json.loads((root / "gen_001" / "data" / "spec.json").read_text())["teacher"] == g1["teacher"]


def test_expert_casino_quick_recipe_sets_casinos_flags_and_explicit_flags_win(tmp_path):
    from training.recipes import CASINO_RECIPES

    root = tmp_path / "quick"
    lines: list[str] = []
    small = ["--first-teacher", "pimc:samples=2", "--first-games", "4", "--shard-games", "2", "--hidden", "16",
             "--first-epochs", "1", "--screen-games", "2", "--workers", "1", "--rule", "rounds=1", "--no-progress"]
    assert train_main(["expert", "--game", "casino", "--recipe", "quick", "--out-dir", str(root), *small],
                      out=lines.append) == 0, lines
    assert lines[0].startswith("mulle-train: recipe quick: --first-teacher pimc:samples=2, --first-games 4")
    manifest = json.loads((root / "manifest.json").read_text())
    quick = CASINO_RECIPES["quick"]
    assert manifest["settings"]["screen_opponents"] == quick["screen_opponents"] == ["greedy"]
    assert manifest["settings"]["batch_size"] == quick["batch_size"]  # the recipe's, not Mulle's 1024
    assert len(manifest["generations"]) == quick["generations"] == 1
    assert "learned|greedy" in manifest["generations"][0]["eval"]


def test_casino_teacher_data_hold_casinos_observations_and_move_ids(tmp_path):
    from training import teacher

    summary = teacher.generate(tmp_path / "d", "pimc:samples=2", 2, seed=3, shard_games=2, progress=False,
                               rules={"rounds": 1}, game="casino")
    assert summary["complete"]
    data = teacher.load(tmp_path / "d")
    assert data["obs"].shape[1] == ce.OBS_SIZE and (data["legal"] < ce.MOVE_ACTIONS).all()
    first = data["legal"][0][data["legal"][0] >= 0]
    assert np.isfinite(data["values"][0][: len(first)]).all() and data["action"][0] in first
    assert (data["banked"] == 0).all()  # one round: nothing is banked before its end
    with pytest.raises(teacher.TeacherDataError, match="other settings.*game"):
        teacher.generate(tmp_path / "d", "pimc:samples=2", 2, seed=3, shard_games=2, progress=False,
                         rules={"rounds": 1})


@pytest.mark.parametrize("argv, words", [
    (["--extras", "capture-v3"], "--extras is Mulle-only"),
    (["--records", "games.jsonl"], "--records is Mulle-only"),
    (["--recipe", "standard"], "--recipe: unknown recipe 'standard' for casino; the recipes are quick"),
    (["--teacher", "greedy"], "--teacher 'greedy' cannot value moves"),
    (["--first-teacher", "random"], "--first-teacher 'random' cannot value moves"),
    (["--rule", "gather_all=false"], "--rule: gather_all=false: Casino's nets write one logit per move id"),
    (["--screen-opponents", "nosuch"], "unknown agent 'nosuch'; agents that play casino"),
])
def test_expert_casino_refuses_mulle_only_options_by_name(argv, words, tmp_path, capsys):
    out = tmp_path / "never"
    assert exit_code(["expert", "--game", "casino", "--out-dir", str(out), "--screen-opponents", "random", *argv]) == 2
    assert words in capsys.readouterr().err
    assert not out.exists()


def test_the_stages_one_by_one_data_then_fit_make_a_casino_net(tmp_path, capsys):
    data, policy = tmp_path / "data", tmp_path / "net.npz"
    lines: list[str] = []
    assert exit_code(["data", str(data), "--game", "casino", "--teacher", "pimc:samples=2", "--games", "2",
                      "--shard-games", "2", "--rule", "rounds=1", "--no-progress"], lines) == 0
    assert json.loads((data / "spec.json").read_text())["game"] == "casino"
    # fit reads the game from the data: an afterstate net by default, which needs data with afterstates.
    assert exit_code(["fit", str(data), "--out", str(policy), "--no-progress"], lines) == 1
    assert "holds no afterstates" in capsys.readouterr().err
    assert exit_code(["fit", str(data), "--out", str(policy), "--net", "logits", "--hidden", "16", "--epochs", "1",
                      "--no-progress"], lines) == 0
    assert load_policy(policy).game == "casino" and load_policy(policy).ruleset["rounds"] == 1
    arena_plays(policy, tmp_path)


def test_casinos_suit_swap_is_a_symmetry_of_its_observation_and_moves():
    # Swapping clubs and hearts in a position swaps its observation by obs_perm and its legal move ids by act_perm,
    # the augmentation a Casino fit shows half its decisions under (training.games.CASINO.suit_swap).
    from training.games import CASINO

    obs_perm, act_perm = CASINO.suit_swap()
    assert sorted(obs_perm.tolist()) == list(range(ce.OBS_SIZE))
    assert (act_perm[act_perm] == np.arange(len(act_perm))).all() and (act_perm != np.arange(len(act_perm))).any()
    assert (obs_perm != np.arange(ce.OBS_SIZE)).sum() == 7 * 26  # the 26 clubs and hearts of each face block
    rng = random.Random(4)
    checked = 0
    for seed in range(6):
        st = casino.new_game(seed, casino.Ruleset(rounds=1))
        while not st.is_over():
            text = json.dumps(st.to_dict()).replace("KL", "\0").replace("HJ", "KL").replace("\0", "HJ")
            twin = casino.GameState.from_dict(json.loads(text), st.ruleset)
            for seat in (0, 1):
                assert (ce.encode_state(st, seat)[obs_perm] == ce.encode_state(twin, seat)).all()
            assert sorted(act_perm[list(st.legal_ids())].tolist()) == sorted(twin.legal_ids())
            checked += 1
            moves = st.legal_moves()
            st.play(moves[rng.randrange(len(moves))])
    assert checked > 200
