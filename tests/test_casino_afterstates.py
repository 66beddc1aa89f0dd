"""Casino's afterstates (issue 51, item 3): the encoder, the data that store them, the fit and ``learned`` playing
an afterstate net, and ``mulle-train expert --game casino`` fitting one.

What is checked: an afterstate is the position the move leaves as the mover sees it (equal to the real game's
wherever the move deals nothing), nothing hidden enters it (the same afterstates from every determinization of a
view), the points banked are the totals' change plus ``pimc``'s leaf, the data a replay adds are the bytes a
labelling run with afterstates writes, and the files say their kind and game (a Mulle afterstate net is refused at
Casino and the reverse). Tiny sizes: seconds on 2 cores. How strong the shipped net is: docs/casino.md.
"""

from __future__ import annotations

import filecmp
import json
import random
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.casino.greedy import expected_best_reply
from agents.casino.playout import evaluate
from agents.learned.casino import (
    CasinoLearnedAgent,
    best_afterstate,
    casino_afterstate_scores,
    encode_casino_afterstates,
    expected_replies,
)
from agents.learned.policy import MLPPolicy, PolicyGameError, load_policy, save_policy
from mulle_env import casino
from mulle_env.games import casino as ce
from training import teacher
from training.cli import train_main

HAND = ce.OBS_SLICES["scalars"].start + ce.SCALAR_FEATURES.index("hand_size")


def positions(games: int = 6, seed: int = 0, rules: dict[str, object] | None = None):
    """``(state, view, legal)`` of every decision of ``games`` random games (the seat to move's view)."""
    r = random.Random(seed)
    for g in range(games):
        st = casino.new_game(seed * 100 + g, rules)
        while not st.over:
            legal = st.legal_moves()
            yield st, st.view(st.to_move), legal
            st.play(r.choice(legal))


def after_net(hidden: int = 8, seed: int = 0) -> MLPPolicy:
    rng = np.random.default_rng(seed)
    w = [rng.normal(0, 0.3, (ce.OBS_SIZE, hidden)).astype(np.float32),
         rng.normal(0, 0.3, (hidden, 1)).astype(np.float32)]
    b = [np.zeros(hidden, np.float32), np.zeros(1, np.float32)]
    return MLPPolicy(w, b, "relu", {"made": "test"}, head="afterstate", game="casino")


def test_an_afterstate_is_the_position_the_move_leaves_and_banks_the_totals_change_plus_pimcs_leaf():
    checked = dealt = 0
    for st, view, legal in positions():
        p = view.player
        obs, banked = encode_casino_afterstates(view, legal, replies=False)
        with_replies = encode_casino_afterstates(view, legal)
        assert np.array_equal(with_replies[0], obs)
        assert np.allclose(with_replies[1], banked - expected_replies(view, legal))
        assert obs.shape == (len(legal), ce.OBS_SIZE) and obs.dtype == np.float32 and banked.dtype == np.float64
        for i, move in enumerate(legal):
            real = st.copy()
            real.play(move)
            a, b = real.scores()
            a0, b0 = st.scores()
            exact = (a - b) - (a0 - b0) if p == 0 else (b - a) - (b0 - a0)
            if real.round != st.round or real.over:
                assert banked[i] == exact  # a round scored by the move: its points are in the totals
            else:
                assert banked[i] == pytest.approx(exact + evaluate(real, p))
            deals = view.opponent_hand_size == 0 and view.stock_size > 0
            if not deals and real.round == st.round:
                # Nothing is dealt: the afterstate is the real position, from the mover's seat.
                assert np.array_equal(obs[i], ce.encode_state(real, p))
                checked += 1
            elif deals:
                # The deal's last card: the next hands are not dealt from cards the mover cannot know.
                assert obs[i][HAND] == 0 and ce.encode_state(real, p)[HAND] > 0
                dealt += 1
    assert checked > 500 and dealt > 20


def test_nothing_hidden_enters_an_afterstate():
    # Two states that differ only in the cards the mover cannot see give the same afterstates.
    r = random.Random(3)
    compared = 0
    for st, view, legal in positions(4, seed=1):
        unseen = view.unseen()
        r.shuffle(unseen)
        k = view.opponent_hand_size
        other = casino.GameState.from_view(view, unseen[:k], unseen[k:], seed=r.getrandbits(63))
        assert other.view(view.player) == view
        a = encode_casino_afterstates(view, legal)
        b = encode_casino_afterstates(other.view(view.player), other.legal_moves())
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        compared += 1
    assert compared > 100


def test_afterstates_refuse_a_view_not_to_move_and_write_into_a_buffer():
    st = casino.new_game(2)
    view = st.view(1 - st.to_move)
    with pytest.raises(ValueError, match="player to move"):
        encode_casino_afterstates(view, st.legal_moves())
    view = st.view(st.to_move)
    buf = np.full((40, ce.OBS_SIZE), 7.0, np.float32)
    obs, _ = encode_casino_afterstates(view, st.legal_moves(), out=buf)
    assert obs.base is buf and (buf[len(st.legal_moves()):] == 7.0).all()
    assert encode_casino_afterstates(view, [])[0].shape == (0, ce.OBS_SIZE)


def test_learned_plays_a_casino_afterstate_net_by_banked_points_plus_the_nets(tmp_path):
    path = save_policy(after_net(), tmp_path / "after.npz")
    policy = load_policy(path)
    assert (policy.game, policy.head, policy.num_actions) == ("casino", "afterstate", ce.MOVE_ACTIONS)
    # The net alone: with the endgame solve (the default) the last deal plays perfect moves (test_casino_endgame.py).
    bot = agents.make(f"learned:path={path},endgame=false", game="casino")
    assert isinstance(bot, CasinoLearnedAgent)
    rng = random.Random(0)
    played = 0
    for _st, view, legal in positions(2, seed=2):
        if len(legal) < 2:
            continue
        scores = casino_afterstate_scores(policy, view, legal)
        assert bot.act(view, legal, rng) == legal[int(np.argmax(scores))]
        played += 1
    assert played > 50
    # Kinds and games: a Mulle afterstate net is refused at Casino and this one at Mulle, naming the game.
    mulle = agents.make("learned").path
    assert load_policy(mulle).head == "afterstate"
    with pytest.raises(agents.AgentSpecError, match=r"is a Mulle net \(its game is 'mulle'\).*plays Casino"):
        agents.make(f"learned:path={mulle}", game="casino")
    with pytest.raises(agents.AgentSpecError, match=r"is a Casino net \(its game is 'casino'\).*plays Mulle"):
        agents.make(f"learned:path={path}")
    with pytest.raises(PolicyGameError):
        CasinoLearnedAgent.from_policy(load_policy(mulle))
    # An afterstate net scores positions: it plays gather_all=false, which a logits net cannot.
    st = casino.new_game(4, {"gather_all": False, "rounds": 1})
    policy = after_net()
    policy.ruleset = {**policy.ruleset, "gather_all": False}
    sampler = CasinoLearnedAgent.from_policy(policy, sample=True)
    while not st.over:
        view = st.view(st.to_move)
        st.play(sampler.act(view, st.legal_moves(), rng))


def test_afterstate_data_replayed_are_the_bytes_a_labelling_run_writes(tmp_path):
    kw = {"seed": 5, "shard_games": 1, "progress": False, "game": "casino", "rules": {"rounds": 1}}
    teacher.generate(tmp_path / "plain", "pimc:samples=1", 2, **kw)
    teacher.generate(tmp_path / "direct", "pimc:samples=1", 2, afterstates=True, **kw)
    summary = teacher.replay_afterstates(tmp_path / "plain", tmp_path / "replayed")
    assert summary == {"shards": 2, "made": 2, "new_decisions": summary["new_decisions"]}
    for name in ("spec.json", "shard_00000.npz", "shard_00001.npz"):
        assert filecmp.cmp(tmp_path / "direct" / name, tmp_path / "replayed" / name, shallow=False), name
    data = teacher.load(tmp_path / "direct")
    assert data["after_obs"].shape == (int((data["legal"] >= 0).sum()), ce.OBS_SIZE)
    # Going on: a rerun makes nothing, labelling more games goes on in the replayed directory.
    assert teacher.replay_afterstates(tmp_path / "plain", tmp_path / "replayed")["made"] == 0
    assert teacher.generate(tmp_path / "replayed", "pimc:samples=1", 3, afterstates=True, **kw)["made"] == 1
    # What cannot be replayed says why.
    with pytest.raises(teacher.TeacherDataError, match="holds afterstates already"):
        teacher.replay_afterstates(tmp_path / "direct", tmp_path / "x")
    teacher.generate(tmp_path / "vs", "pimc:samples=1", 2, opponents=["random"], **kw)
    with pytest.raises(teacher.TeacherDataError, match="only self-play data sets without a driver"):
        teacher.replay_afterstates(tmp_path / "vs", tmp_path / "y")
    shard = tmp_path / "plain" / "shard_00001.npz"
    with np.load(shard) as z:
        arrays = {k: z[k] for k in z.files}
    legal = arrays["legal"][0][arrays["legal"][0] >= 0]
    arrays["action"][0] = legal[legal != arrays["action"][0]][0]  # another legal move: the game goes elsewhere
    np.savez_compressed(shard, **arrays)
    with pytest.raises(teacher.TeacherDataError, match="shard_00001.npz: decision 2 of game 1 is not the replayed"):
        teacher.replay_afterstates(tmp_path / "plain", tmp_path / "z")
    arrays["action"][0] = 500  # a move id no position there has
    np.savez_compressed(shard, **arrays)
    with pytest.raises(teacher.TeacherDataError, match="decision 1 of game 1 played a move that is not legal"):
        teacher.replay_afterstates(tmp_path / "plain", tmp_path / "z2")


def test_mulle_data_are_not_replayed(tmp_path):
    teacher.generate(tmp_path / "m", "pimc:samples=1", 2, shard_games=2, progress=False, rules={"sets": 1})
    with pytest.raises(ValueError, match="Mulle's data sets are not replayed"):
        teacher.replay_afterstates(tmp_path / "m", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_shared_afterstate_fit_makes_a_casino_net_and_refuses_mulles_inputs(tmp_path):
    from training.afterfit import AfterstateConfig, fit_afterstate

    teacher.generate(tmp_path / "d", "pimc:samples=1", 4, seed=1, shard_games=2, progress=False, game="casino",
                     rules={"rounds": 1}, afterstates=True)
    data = teacher.load(tmp_path / "d", large=("after_obs",), compact=True)
    out = tmp_path / "net.npz"
    figures = fit_afterstate(data, out, AfterstateConfig(hidden=[16], epochs=1), progress=False, game="casino",
                             ruleset={"rounds": 1})
    assert 0 <= figures["heldout_agreement"] <= 1
    net = load_policy(out)
    assert (net.game, net.head, net.ruleset["rounds"], net.metadata["game"]) == ("casino", "afterstate", 1, "casino")
    for bad in ({"extras": "capture-v3"}, {"augment_symmetries": 4}):
        with pytest.raises(ValueError, match="read Mulle's layout"):
            fit_afterstate(data, tmp_path / "bad.npz", AfterstateConfig(hidden=[16], epochs=1, **bad),
                           progress=False, game="casino")
    with pytest.raises(ValueError, match="a 'mulle' net, and this fit's data are 'casino'"):
        fit_afterstate(data, tmp_path / "bad.npz", AfterstateConfig(hidden=[256, 256], epochs=1),
                       init_from=agents.make("learned").path, progress=False, game="casino")
    # mulle-train fit reads the game from the data and fits the afterstate net by default.
    lines: list[str] = []
    assert train_main(["fit", str(tmp_path / "d"), "--out", str(tmp_path / "cli.npz"), "--hidden", "16",
                       "--epochs", "1", "--no-progress"], out=lines.append) == 0, lines
    assert load_policy(tmp_path / "cli.npz").head == "afterstate"


def test_expert_casino_fits_afterstate_nets_by_default_and_refuses_what_does_not_fit(tmp_path, capsys):
    root = tmp_path / "run"
    small = ["--first-teacher", "pimc:samples=1", "--first-games", "4", "--shard-games", "2", "--hidden", "16",
             "--first-epochs", "1", "--screen-opponents", "random", "--screen-games", "2", "--workers", "1",
             "--rule", "rounds=1", "--generations", "1", "--no-progress"]
    lines: list[str] = []
    assert train_main(["expert", "--game", "casino", "--out-dir", str(root), *small], out=lines.append) == 0, lines
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["settings"]["net"] == "afterstate" and manifest["generations"][0]["fit"]["net"] == "afterstate"
    assert json.loads((root / "gen_000" / "data" / "spec.json").read_text())["afterstates"] is True
    champion = load_policy(root / "champion.npz")
    assert (champion.game, champion.head) == ("casino", "afterstate")
    # The same directory with logits nets is another run.
    assert train_main(["expert", "--game", "casino", "--out-dir", str(root), "--net", "logits", *small],
                      out=lines.append) == 2
    assert "--net: 'afterstate' there, 'logits' now" in capsys.readouterr().err
    # Casino's netsearch searches with logits nets; Mulle's pipeline fits afterstate nets only.
    assert train_main(["expert", "--game", "casino", "--out-dir", str(tmp_path / "ns"), "--teacher",
                       "netsearch:samples=2", *small], out=lines.append) == 2
    assert "netsearch searches with a logits net" in capsys.readouterr().err
    assert train_main(["expert", "--out-dir", str(tmp_path / "m"), "--net", "logits", "--first-games", "2",
                       "--shard-games", "2", "--no-progress"], out=lines.append) == 2
    assert "Mulle's pipeline fits afterstate nets" in capsys.readouterr().err


def test_a_casino_run_made_before_net_resumes_as_logits(tmp_path):
    # A manifest without "net" was a logits run at Casino: resumed with --net logits, refused without it.
    import argparse

    from training.pipeline import Pipeline

    args = argparse.Namespace(out_dir=str(tmp_path), game="casino", net="logits", argv=[],
                              **{k: None for k in ("first_teacher", "teacher", "first_games", "games", "shard_games",
                                                   "seed", "data_window", "hidden", "extras", "first_epochs",
                                                   "epochs", "batch_size", "lr", "screen_opponents", "screen_games",
                                                   "screen_seed", "rules", "records", "on_policy")})
    run = Pipeline(args, out=lambda _: None)
    assert run.open() is None
    manifest = json.loads(Path(run.path).read_text())
    del manifest["settings"]["net"]
    Path(run.path).write_text(json.dumps(manifest))
    assert Pipeline(args, out=lambda _: None).open() is None
    args.net = None
    assert "--net: 'logits' there, 'afterstate' now" in (Pipeline(args, out=lambda _: None).open() or "")


def test_the_reply_is_greedys_and_the_agent_reckons_fewer_of_them_for_the_same_move():
    from agents.casino.effects import Pricing, is_last_play, table_after, view_table

    policy = after_net(seed=3)
    compared = 0
    for _st, view, legal in positions(3, seed=4):
        replies = expected_replies(view, legal)
        if is_last_play(view):
            assert not replies.any()
        else:
            plans, pricing, table = view.move_plans(), Pricing(view), view_table(view)
            last = view.stock_size == 0 and len(view.hand) == 1 and view.opponent_hand_size == 1
            i = len(legal) // 2
            assert replies[i] == expected_best_reply(table_after(table, plans[legal[i]], view.player),
                                                     1 - view.player, pricing, last)
            assert expected_replies(view, legal, [i]).tolist() == [replies[i]]
        assert best_afterstate(policy, view, legal) == int(np.argmax(casino_afterstate_scores(policy, view, legal)))
        compared += 1
    assert compared > 100


def test_mulle_train_data_replay_from_adds_the_afterstates(tmp_path, capsys):
    teacher.generate(tmp_path / "plain", "pimc:samples=1", 2, seed=2, shard_games=2, progress=False, game="casino",
                     rules={"rounds": 1})
    lines: list[str] = []
    assert train_main(["data", str(tmp_path / "after"), "--replay-from", str(tmp_path / "plain"), "--no-progress"],
                      out=lines.append) == 0
    assert lines[-1].endswith("1 of 1 shards replayed now (%d decisions with their afterstates)"
                              % len(teacher.load(tmp_path / "plain")["action"]))
    assert json.loads((tmp_path / "after" / "spec.json").read_text())["afterstates"] is True
    assert train_main(["data", str(tmp_path / "again"), "--replay-from", str(tmp_path / "after")]) == 1
    assert "holds afterstates already" in capsys.readouterr().err


def test_the_shipped_nets_learned_an_afterstate_net_and_netsearch_a_logits_net():
    from agents.learned.casino import DEFAULT_CASINO_POLICY_PATH, DEFAULT_CASINO_SEARCH_POLICY_PATH

    learned = agents.make("learned", game="casino")
    assert learned.path == DEFAULT_CASINO_POLICY_PATH
    assert (learned.policy.game, learned.policy.head) == ("casino", "afterstate")
    search = agents.make("netsearch", game="casino")
    assert search.path == DEFAULT_CASINO_SEARCH_POLICY_PATH
    assert (search.net.game, search.net.head) == ("casino", "logits") and search.net.has_value
    with pytest.raises(agents.AgentSpecError, match="casino_learned.npz is an afterstate net"):
        agents.make(f"netsearch:policy={DEFAULT_CASINO_POLICY_PATH}", game="casino")
