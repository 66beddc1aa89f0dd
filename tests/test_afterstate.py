"""Afterstate nets: the encoding of the positions moves leave, the v3 policy file, the agent, the fit, netsearch."""

from __future__ import annotations

import importlib.util
import itertools
import random

import numpy as np
import pytest

import agents
import mulle_env as me
from agents.learned import MLPPolicy, PolicyFileError, load_policy, save_policy
from agents.learned.afterstate import afterstate_scores, encode_afterstates
from agents.learned.policy import VALUE_SCALE
from agents.pimc import determinize
from agents.rollout import set_value
from mulle_env.engine import GameState, new_game
from mulle_env.native import NATIVE  # the afterstates are written by the env layer's compiled module
from mulle_env.observation import OBS_SIZE, encode_state
from training import teacher


def positions(n=40, seed=0):
    """Random mid-game states (random play from random deals), the player to move having a choice."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        st = new_game(seed=rng.randrange(10**6))
        for _ in range(rng.randrange(1, 150)):
            if st.over:
                break
            legal = st.legal_moves()
            st.play(legal[rng.randrange(len(legal))])
        if not st.over and len(st.legal_moves()) > 1:
            out.append(st)
    return out


def afterstate_net(seed=0, hidden=(16,)) -> MLPPolicy:
    rng = np.random.default_rng(seed)
    sizes = [OBS_SIZE, *hidden, 1]
    ws = [rng.normal(0, 1 / np.sqrt(a), (a, b)).astype(np.float32) for a, b in itertools.pairwise(sizes)]
    bs = [rng.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:]]
    return MLPPolicy(ws, bs, "relu", {"note": "test"}, head="afterstate")


def test_afterstates_are_what_the_mover_sees_after_the_move():
    checked = 0
    for st in positions():
        p = st.to_move
        legal = st.legal_moves()
        obs, banked = encode_afterstates(st.view(p), legal)
        assert obs.shape == (len(legal), OBS_SIZE) and banked.shape == (len(legal),)
        for i, m in enumerate(legal):
            real = st.copy()
            real.play(m)
            # Exactly the mover's own view of the real position, unless the move ended the deal
            # (then the real game deals from the deck, which the mover cannot know).
            if real.deal_no == st.deal_no and real.set_no == st.set_no and len(real.hands[1 - p]):
                assert np.array_equal(obs[i], encode_state(real, p)), m
                assert banked[i] == set_value(real, p)
                checked += 1
    assert checked > 100


def test_afterstates_do_not_depend_on_hidden_cards():
    # Two real games that the mover cannot tell apart (same view, other opponent hand and deck):
    # after each move, the mover's real encodings agree with each other and with the afterstate.
    rng = random.Random(3)
    checked = 0
    for st in positions(15, seed=1):
        p = st.to_move
        view = st.view(p)
        legal = st.legal_moves()
        hand, deck = determinize(view, rng)
        other = GameState.from_view(view, hand, deck, seed=7)
        assert other.view(p) == view and (other.hands[1 - p] != st.hands[1 - p] or other.deck != st.deck)
        after, _ = encode_afterstates(view, legal)
        for i, m in enumerate(legal):
            a, b = st.copy(), other.copy()
            a.play(m)
            b.play(m)
            if a.deal_no == st.deal_no and a.set_no == st.set_no and len(a.hands[1 - p]):
                assert np.array_equal(encode_state(a, p), encode_state(b, p))
                assert np.array_equal(after[i], encode_state(b, p))
                checked += 1
    assert checked > 30


def test_policy_file_v3_round_trip_and_refusals(tmp_path):
    net = afterstate_net()
    path = save_policy(net, tmp_path / "a.npz")
    back = load_policy(path)
    assert back.head == "afterstate" and back.fingerprint() == net.fingerprint()
    x = np.random.default_rng(0).random((5, OBS_SIZE)).astype(np.float32)
    assert np.allclose(back.afterstate_values(x), net.afterstate_values(x))
    with pytest.raises(ValueError, match="afterstate net"):
        back.legal_logits(x[0], [1, 2])
    # The head is part of the fingerprint: the same layers as a logits net would be another agent.
    with np.load(path) as z:
        arrays = dict(z)
    bad = dict(arrays, head=np.array("policy-gradient"))
    np.savez(tmp_path / "bad.npz", **bad)
    with pytest.raises(PolicyFileError, match="head 'policy-gradient' is not supported; supported: logits, "):
        load_policy(tmp_path / "bad.npz")
    wide = dict(arrays)
    wide["layer1.weight"] = np.zeros((16, 3), np.float32)
    wide["layer1.bias"] = np.zeros(3, np.float32)
    np.savez(tmp_path / "wide.npz", **wide)
    with pytest.raises(PolicyFileError, match="writes 3 numbers, not 1"):
        load_policy(tmp_path / "wide.npz")
    with pytest.raises(PolicyFileError, match="head 'x'"):
        MLPPolicy(net.weights, net.biases, head="x")


def test_logits_files_keep_their_fingerprint_and_version():
    from expert_helpers import net as logits_net

    pol = logits_net()
    assert pol.head == "logits"
    # The fingerprint of a logits net hashes exactly what it hashed before the head existed.
    import hashlib
    import json

    h = hashlib.sha256()
    h.update(pol.activation.encode())
    for tag, arrays in (("w", pol.weights), ("b", pol.biases), ("vw", pol.value_weights), ("vb", pol.value_biases)):
        for a in arrays:
            h.update(f"|{tag}{a.shape}{a.dtype.str}|".encode())
            h.update(np.ascontiguousarray(a).tobytes())
    h.update(json.dumps(pol.metadata, sort_keys=True, separators=(",", ":")).encode())
    assert pol.fingerprint() == h.hexdigest()[:12]


def test_the_agent_plays_the_best_banked_plus_net_score(tmp_path):
    net = afterstate_net(seed=2)
    path = save_policy(net, tmp_path / "a.npz")
    bot = agents.make(f"learned:path={path}")
    rng = random.Random(0)
    for st in positions(20, seed=4):
        view = st.view(st.to_move)
        legal = st.legal_moves()
        obs, banked = encode_afterstates(view, legal)
        score = banked + VALUE_SCALE * net.afterstate_values(obs)
        assert bot.act(view, legal, rng) == legal[int(np.argmax(score))]
    # A net that writes 0 everywhere plays the move that banks the most points (the first on a tie).
    zero = MLPPolicy([np.zeros((OBS_SIZE, 1), np.float32)], [np.zeros(1, np.float32)], head="afterstate")
    flat = agents.learned.LearnedAgent.from_policy(zero)
    for st in positions(20, seed=5):
        view = st.view(st.to_move)
        legal = st.legal_moves()
        best = max(range(len(legal)), key=lambda i: (encode_afterstates(view, legal)[1][i], -i))
        assert flat.act(view, legal, rng) == legal[best]
    sampler = agents.make(f"learned:path={path},sample=true,temperature=0.5")
    st = positions(1, seed=6)[0]
    assert sampler.act(st.view(st.to_move), st.legal_moves(), rng) in st.legal_moves()


def test_netsearch_with_an_afterstate_net(tmp_path):
    path = save_policy(afterstate_net(seed=3), tmp_path / "a.npz")
    one = agents.make(f"netsearch:policy={path},depth=1")
    learned = agents.make(f"learned:path={path}")
    two = agents.make(f"netsearch:policy={path},depth=2,samples=3,width=3")
    rng = random.Random(1)
    for st in positions(8, seed=7):
        view = st.view(st.to_move)
        legal = st.legal_moves()
        assert one.act(view, legal, random.Random(0)) == learned.act(view, legal, rng)
        vals = two.move_values(view, legal, random.Random(5))
        assert 1 <= len(vals) <= 3 and all(m in legal for m, _ in vals)
        assert vals == two.move_values(view, legal, random.Random(5))  # seeded: the same values
    # depth=2 by hand: each candidate against the opponent's best-scored reply in each determinization,
    # that reply's score negated (a point difference from the opponent's seat), averaged.
    for st in positions(6, seed=8):
        view = st.view(st.to_move)
        me = view.player
        legal = st.legal_moves()
        got = dict(two.move_values(view, legal, random.Random(9)))
        scores = afterstate_scores(two.net, view, legal)
        cands = [legal[i] for i in np.argsort(-scores, kind="stable")[:3]]
        if len(cands) == 1:
            continue
        states = two._played(view, random.Random(9), cands)
        want = np.zeros(len(cands))
        for k, child in enumerate(states):
            if child.over:
                v = set_value(child, me)
            else:
                mover = child.to_move
                best = afterstate_scores(two.net, child.view(mover), child.legal_moves()).max()
                v = best if mover == me else -best
            want[k % len(cands)] += v / two.samples
        assert np.allclose([got[m] for m in cands], want)
    with pytest.raises(agents.AgentSpecError, match="afterstate net"):
        agents.make(f"netsearch:policy={path},leaf=value")
    with pytest.raises(agents.AgentSpecError, match="prior applies to logits policies"):
        agents.make(f"netsearch:policy={path},prior=1")


def test_netsearch_plays_whole_games_with_an_afterstate_net(tmp_path):
    from mulle_env.engine import Match

    path = save_policy(afterstate_net(seed=4), tmp_path / "a.npz")
    bots = [agents.make(f"netsearch:policy={path},depth=3,samples=2,width=2"), agents.make("greedy")]
    match = Match(seed=11, ruleset={"sets": 1})
    result = match.play_out(bots, [random.Random(0), random.Random(1)])
    assert match.state.over and len(result.sheets[0]) == 1


@pytest.fixture(scope="module")
def after_data(tmp_path_factory):
    d = tmp_path_factory.mktemp("afterdata")
    teacher.generate(d, "pimc:samples=2,horizon=2", games=4, seed=5, shard_games=2, progress=False,
                     rules={"sets": 1}, afterstates=True)
    return d


@pytest.mark.skipif(NATIVE is None, reason="mulle_env._native runs on the compiled core only")
def test_compiled_afterstates_equal_the_reference_loop():
    from agents.learned.afterstate import reference_afterstates, state_afterstates
    from mulle_env.engine import Ruleset

    rng = random.Random(3)
    checked = empty_opponent = 0
    # Every position along random games, forced moves included, under the default rules and
    # with discards allowed beside captures: the mover's last card against an empty
    # opponent hand is the corner where a move could end the deal (it must not).
    games = [(seed, ruleset) for seed in range(12) for ruleset in (None, Ruleset(discard_only_if_no_capture=False))]
    states = []
    for seed, ruleset in games:
        st = new_game(seed=1000 + seed, ruleset=ruleset)
        r = random.Random(seed)
        while not st.over:
            if seed % 3 == 0 or r.random() < 0.3:
                states.append(st.copy())
            legal = st.legal_moves()
            st.play(legal[r.randrange(len(legal))])
    for st in states:
        p = st.to_move
        legal = st.legal_moves()
        view = st.view(p)
        empty_opponent += not st.hands[1 - p]
        base = GameState.from_view(view, [0] * max(1, view.opponent_hand_size), [0] * view.deck_size)
        want_obs = np.empty((len(legal), OBS_SIZE), dtype=np.float32)
        want_banked = np.empty(len(legal))
        reference_afterstates(base, p, legal, want_obs, want_banked)
        # From the view (the learned agent), and straight from the full state or a
        # determinization of it (netsearch): the hidden cards never matter.
        got = [encode_afterstates(view, legal), state_afterstates(st, p, legal)]
        hand, deck = determinize(view, rng)
        got.append(state_afterstates(GameState.from_view(view, hand, deck, seed=1), p, legal))
        for obs, banked in got:
            assert np.array_equal(obs, want_obs) and np.array_equal(banked, want_banked)
        checked += len(legal)
    assert checked > 2000 and empty_opponent > 20
    st = positions(1)[0]
    legal_ids = set(st.legal_move_ids())
    illegal = next(i for i in range(1000) if i not in legal_ids)
    buf, banked = np.empty((1, OBS_SIZE), dtype=np.float32), np.empty(1)
    with pytest.raises(ValueError, match="not legal here"):
        NATIVE.write_afterstates(st, st.to_move, [illegal], buf, banked)
    with pytest.raises(ValueError, match="not to move"):
        NATIVE.write_afterstates(st, 1 - st.to_move, [], buf, banked)
    with pytest.raises(ValueError, match="afterstate buffer"):
        NATIVE.write_afterstates(st, st.to_move, sorted(legal_ids)[:2], buf, banked)
    with pytest.raises(ValueError, match="not legal here"):  # an id is an int: True is not move id 1
        NATIVE.write_afterstates(st, st.to_move, [True], buf, banked)
    with pytest.raises(TypeError, match="compiled core"):  # only states of the compiled core
        NATIVE.write_afterstates(me.engine.backends()["python"].new_game(1), 0, [], buf, banked)


def test_afterstates_of_no_moves_or_of_the_wrong_player():
    from agents.learned.afterstate import state_afterstates

    st = positions(1)[0]
    obs, banked = state_afterstates(st, st.to_move, [])
    assert obs.shape == (0, OBS_SIZE) and banked.shape == (0,)
    with pytest.raises(ValueError, match="not to move"):
        state_afterstates(st, 1 - st.to_move, st.legal_moves())


def test_teacher_data_holds_each_labelled_moves_afterstate(after_data):
    from training.afterfit import move_rows

    d = teacher.load(after_data)
    decision, value, start = move_rows(d)
    assert d["after_obs"].shape == (len(decision), OBS_SIZE) and d["after_obs"].dtype == np.float16
    assert np.array_equal(value, d["values"][d["legal"] >= 0]) and start[0] == 0
    # Each row is the afterstate of its move: replaying game 0 (self-play, both seats recorded) finds them.
    from mulle_env.engine import Match
    from training.teacher import _stream, deal_seed

    bot = teacher.LabellingAgent(agents.make("pimc:samples=2,horizon=2"), afterstates=True)
    Match(seed=deal_seed(5, 0), ruleset={"sets": 1}).play_out([bot, bot], [_stream(5, 0, 0), _stream(5, 0, 1)])
    g0 = np.flatnonzero(d["game"] == 0)
    assert len(bot.after) == len(g0)
    for i, (obs, banked) in zip(g0, bot.after):
        rows = slice(start[i], start[i] + len(banked))
        assert np.array_equal(d["after_obs"][rows], obs) and np.array_equal(d["after_banked"][rows], banked)
    spec = (after_data / "spec.json").read_text()
    assert '"afterstates": true' in spec
    # A rerun without afterstates is another data set: refused, not mixed in.
    with pytest.raises(teacher.TeacherDataError, match="afterstates"):
        teacher.generate(after_data, "pimc:samples=2,horizon=2", games=4, seed=5, shard_games=2, progress=False,
                         rules={"sets": 1})


torch_tests = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


@torch_tests
def test_fit_learns_the_teacher_values_and_resumes_exactly(after_data, tmp_path):
    import torch

    from training.afterfit import AfterstateConfig, fit_afterstate

    d = teacher.load(after_data)
    cfg = AfterstateConfig(hidden=[16], epochs=3, batch_size=64, seed=1)
    fig = fit_afterstate(d, tmp_path / "whole.npz", cfg, progress=False)
    assert 0 <= fig["heldout_agreement"] <= 1 and fig["heldout_regret_points"] >= 0

    def stop(figures):
        if figures["epoch"] == 2:
            raise KeyboardInterrupt

    ckpt = tmp_path / "fit.pt"
    with pytest.raises(KeyboardInterrupt):
        fit_afterstate(d, tmp_path / "resumed.npz", cfg, checkpoint=ckpt, progress=False, log=stop)
    fit_afterstate(d, tmp_path / "resumed.npz", cfg, checkpoint=ckpt, progress=False)
    a, b = load_policy(tmp_path / "whole.npz"), load_policy(tmp_path / "resumed.npz")
    assert a.head == b.head == "afterstate"
    for wa, wb in zip(a.weights, b.weights):
        assert np.array_equal(wa, wb)
    # Fitting lowers the error on the data it saw well below the error of predicting 0.
    from training.afterfit import _build, _load_numpy, move_rows

    _, value, _ = move_rows(d)
    target = value - d["after_banked"]
    net = _build(cfg)
    assert _load_numpy(net, a)
    with torch.no_grad():
        pred = net(torch.from_numpy(d["after_obs"].astype(np.float32)))[:, 0].numpy() * VALUE_SCALE
    assert np.mean((pred - target) ** 2) < 0.7 * np.mean(target**2)
    with pytest.raises(ValueError, match="no afterstates"):
        fit_afterstate({k: v for k, v in d.items() if k != "after_obs"}, tmp_path / "x.npz", cfg, progress=False)


@torch_tests
def test_cli_data_then_fit(tmp_path, capsys):
    from training.cli import expert_main as main

    out = tmp_path / "data"
    assert main(["data", str(out), "--teacher", "pimc:samples=2,horizon=2", "--games", "2", "--shard-games", "2",
                 "--afterstates", "--no-progress"]) == 0
    pol = tmp_path / "p.npz"
    assert main(["fit", str(out), "--out", str(pol), "--hidden", "8", "--epochs", "1", "--batch-size", "64",
                 "--no-progress"]) == 0
    assert load_policy(pol).head == "afterstate"
    assert load_policy(pol).metadata["command"][:2] == ["mulle-expert", "fit"]
    # Data without afterstates cannot make an afterstate net: exit 1 with the reason.
    plain = tmp_path / "plain"
    assert main(["data", str(plain), "--teacher", "pimc:samples=2,horizon=2", "--games", "2", "--shard-games", "2",
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["fit", str(plain), "--out", str(tmp_path / "q.npz"), "--no-progress"]) == 1
    assert "no afterstates" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["data", str(tmp_path / "z"), "--games", "3", "--shard-games", "2"])
    assert exc.value.code == 2
    # --driver: the driver's moves, the teacher's values; an unknown driver is a usage error.
    driven = tmp_path / "driven"
    assert main(["data", str(driven), "--teacher", "pimc:samples=2,horizon=2", "--games", "2", "--shard-games", "2",
                 "--driver", "heuristic", "--no-progress"]) == 0
    assert teacher.check_data_dir(driven)["driver"] == "heuristic"
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["data", str(tmp_path / "w"), "--driver", "nosuchagent"])
    assert exc.value.code == 2 and "nosuchagent" in capsys.readouterr().err


def test_compact_loading_holds_the_same_encodings_in_a_byte_each(after_data, monkeypatch):
    full = teacher.load(after_data)
    lean = teacher.load(after_data, large=("after_obs",), compact=True)
    assert "obs" not in lean and isinstance(lean["after_obs"], teacher.CodedRows)
    assert lean["after_obs"].codes.dtype == np.uint8 and lean["after_obs"].shape == full["after_obs"].shape
    rows = np.array([0, 3, len(full["after_obs"]) - 1])
    assert np.array_equal(lean["after_obs"][rows], full["after_obs"][rows].astype(np.float32))
    assert np.array_equal(lean["after_obs"].astype(np.float32), full["after_obs"].astype(np.float32))
    for k in full:
        if k not in ("obs", "after_obs"):
            assert np.array_equal(lean[k], full[k], equal_nan=lean[k].dtype.kind == "f"), k
    # More distinct values than a byte holds: float16 after all, the same numbers. The
    # capacity holds the first shard's values, so the switch comes after codes were written.
    first = sorted(after_data.glob("shard_*.npz"))[0]
    with np.load(first) as z:
        first_values = len(np.unique(z["after_obs"].view(np.uint16)))
    assert len(np.unique(full["after_obs"].view(np.uint16))) > first_values
    monkeypatch.setattr(teacher._Coder, "capacity", first_values)
    wide = teacher.load(after_data, large=("after_obs",), compact=True)
    assert wide["after_obs"].dtype == np.float16 and np.array_equal(wide["after_obs"], full["after_obs"])
    with pytest.raises(ValueError, match="large must name"):
        teacher.load(after_data, large=("actions",))


def test_data_sets_with_and_without_afterstates_load_together(after_data, tmp_path):
    plain = tmp_path / "plain"
    teacher.generate(plain, "pimc:samples=2,horizon=2", games=2, seed=6, shard_games=2, progress=False,
                     rules={"sets": 1})
    both = teacher.load([after_data, plain])
    alone = teacher.load(after_data)
    assert "after_obs" not in both and "after_banked" not in both
    assert len(both["action"]) > len(alone["action"]) and both["obs"].shape[1] == OBS_SIZE


def test_every_generation_is_kept_with_its_measured_strength(tmp_path):
    import json
    from pathlib import Path

    from agents.learned import DEFAULT_POLICY_PATH

    root = Path(__file__).resolve().parents[1]
    manifest = json.loads((root / "agents" / "data" / "generations" / "manifest.json").read_text())
    gens = manifest["generations"]
    assert [g["generation"] for g in gens] == list(range(len(gens))) and len(gens) >= 2
    for g in gens:
        pol = load_policy(root / g["policy"].split(" ")[0])
        assert pol.head == "afterstate" and (root / g["policy"].split(" ")[0]).stat().st_size < 10 * 2**20
        for match in g["eval"].values():
            assert match["games"] >= 200 and 0 <= match["score_low"] <= match["score"] <= match["score_high"] <= 1
    # The shipped policy is the newest generation's file.
    newest = root / gens[-1]["policy"].split(" ")[0]
    assert newest.read_bytes() == Path(DEFAULT_POLICY_PATH).read_bytes()
    pytest.importorskip("matplotlib")
    from training.cli import expert_main as main

    out = tmp_path / "gens.png"
    assert main(["plot", str(root / "agents" / "data" / "generations" / "manifest.json"), "--out", str(out)],
                out=lambda _: None) == 0
    assert out.stat().st_size > 1000


@torch_tests
def test_ranking_term_is_the_kl_divergence_of_the_move_softmaxes(after_data, tmp_path):
    import torch

    from training.afterfit import AfterstateConfig, _build, _Stepper, fit_afterstate, move_rows
    from training.stream import MemorySource

    d = teacher.load(after_data)
    # Some moves left unvalued: decision 3 keeps one labelled move (no order: out of the mean), 4 keeps two.
    d["values"] = d["values"].copy()
    d["values"][3, 1:] = np.nan
    d["values"][4, 2:] = np.nan
    d["values"][7, 0] = np.nan
    decision, value, _ = move_rows(d)
    labelled = np.isfinite(value)
    assert (d["legal"][3] >= 0).sum() > 1 and labelled[decision == 3].sum() == 1
    weight = np.linspace(0.5, 2.0, len(d["legal"])).astype(np.float32)
    for temp in (0.5, 3.0):
        cfg = AfterstateConfig(hidden=[8], rank_coef=2.0, rank_temperature=temp)
        step = _Stepper(_build(cfg), cfg, 16)
        step.load(MemorySource(d, weight), [0])
        decs = np.arange(3, 40)
        rows = np.flatnonzero(np.isin(decision, decs) & labelled)
        pred = torch.from_numpy(np.random.default_rng(0).normal(0, 1, len(rows)).astype(np.float32))
        seg = np.searchsorted(decs, decision[rows])
        for w in (None, torch.from_numpy(weight[decs][seg])):
            got = float(step._ranking(pred, rows, seg, w))
            # The same divergence decision by decision, in float64 from the definitions.
            kls, ws = [], []
            for i, dec in enumerate(decs):
                r = rows[seg == i]
                if len(r) < 2:
                    continue
                net = (d["after_banked"][r] + pred.numpy()[seg == i] * VALUE_SCALE) / temp
                t = value[r] / temp
                p = np.exp(t - t.max()) / np.exp(t - t.max()).sum()
                lq = net - net.max() - np.log(np.exp(net - net.max()).sum())
                lp = t - t.max() - np.log(np.exp(t - t.max()).sum())
                kls.append(float(np.sum(p * (lp - lq))))
                ws.append(1.0 if w is None else float(weight[dec]))
            want = 2.0 * np.average(kls, weights=ws)
            assert got == pytest.approx(want, rel=1e-4, abs=1e-6)
    # A net whose values are the teacher's up to a shift per decision has nothing to learn from it.
    exact = torch.from_numpy(((value[rows] - d["after_banked"][rows]) / VALUE_SCALE + 3.0).astype(np.float32))
    assert float(step._ranking(exact, rows, seg, None)) == pytest.approx(0.0, abs=1e-5)
    # Fitted with the term, the net orders the moves nearer the teacher's: the divergence drops.
    cfg = AfterstateConfig(hidden=[16], epochs=4, batch_size=64, seed=1, rank_coef=1.0, rank_temperature=1.0,
                           augment=False)
    step = _Stepper(_build(cfg), cfg, 16)
    step.load(MemorySource(d), [0])
    valued = np.flatnonzero(labelled)

    def divergence():
        with torch.no_grad():
            pred = step.net(torch.from_numpy(d["after_obs"][valued].astype(np.float32)))[:, 0]
            return float(step._ranking(pred, valued, decision[valued], None))

    before = divergence()
    fit_afterstate(d, tmp_path / "ranked.npz", cfg, progress=False)
    from training.afterfit import _load_numpy

    assert _load_numpy(step.net, load_policy(tmp_path / "ranked.npz"))
    assert load_policy(tmp_path / "ranked.npz").metadata["config"]["rank_coef"] == 1.0
    ranked = divergence()
    assert ranked < 0.8 * before
    # ... and nearer than the same fit by regression alone.
    fit_afterstate(d, tmp_path / "plain.npz", AfterstateConfig(**{**cfg, "rank_coef": 0.0}), progress=False)
    assert _load_numpy(step.net, load_policy(tmp_path / "plain.npz"))
    assert ranked < divergence()
    for bad in ({"rank_coef": -1.0}, {"rank_temperature": 0.0}, {"rank_coef": float("nan")},
                {"rank_temperature": float("inf")}):
        with pytest.raises(ValueError, match="rank_coef must be a number >= 0 and rank_temperature one > 0"):
            AfterstateConfig(**bad)


@torch_tests
def test_new_fit_settings_at_their_defaults_keep_old_checkpoints_resumable(after_data, tmp_path):
    import torch

    from training.afterfit import AfterstateConfig, fit_afterstate

    d = teacher.load(after_data)
    new = {"rank_coef", "rank_temperature", "augment_symmetries"}

    def key_config(cfg, name):
        def stop(figures):
            raise KeyboardInterrupt

        ckpt = tmp_path / f"{name}.pt"
        with pytest.raises(KeyboardInterrupt):
            fit_afterstate(d, tmp_path / f"{name}.npz", cfg, checkpoint=ckpt, progress=False, log=stop)
        return torch.load(ckpt, weights_only=False)["key"]["config"]

    # The key a checkpoint is resumed by names only the settings fits had before these existed...
    plain = key_config(AfterstateConfig(hidden=[8], epochs=2, batch_size=64), "plain")
    assert set(plain) == set(AfterstateConfig.DEFAULTS) - new
    # ... and the new ones once they change what the fit computes.
    ranked = key_config(AfterstateConfig(hidden=[8], epochs=2, batch_size=64, rank_coef=0.5), "ranked")
    assert (ranked["rank_coef"], ranked["rank_temperature"]) == (0.5, 1.0) and "augment_symmetries" not in ranked
    sym = key_config(AfterstateConfig(hidden=[8], epochs=2, batch_size=64, augment_symmetries=4), "sym")
    assert sym["augment_symmetries"] == 4 and "rank_coef" not in sym


@torch_tests
def test_cli_fit_with_a_ranking_term(after_data, tmp_path, capsys):
    from training.cli import expert_main as main

    pol = tmp_path / "r.npz"
    assert main(["fit", str(after_data), "--out", str(pol), "--hidden", "8", "--epochs", "1", "--batch-size", "64",
                 "--rank-coef", "0.5", "--rank-temperature", "2", "--no-progress"]) == 0
    cfg = load_policy(pol).metadata["config"]
    assert (cfg["rank_coef"], cfg["rank_temperature"]) == (0.5, 2.0)
    capsys.readouterr()
    assert main(["fit", str(after_data), "--out", str(tmp_path / "l.npz"), "--net", "logits", "--rank-coef", "1",
                 "--no-progress"]) == 1
    assert "--rank-coef is for afterstate fits" in capsys.readouterr().err
    assert main(["fit", str(after_data), "--out", str(tmp_path / "l.npz"), "--net", "logits",
                 "--augment-symmetries", "4", "--no-progress"]) == 1
    assert "--augment-symmetries is for afterstate fits" in capsys.readouterr().err
    assert main(["fit", str(after_data), "--out", str(tmp_path / "t.npz"), "--rank-temperature", "2",
                 "--no-progress"]) == 1
    assert "give --rank-coef above 0 too" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(after_data), "--out", str(pol), "--augment-symmetries", "13"])
    assert exc.value.code == 2 and "an integer from 1 to 12" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(after_data), "--out", str(pol), "--rank-coef", "-1"])
    assert exc.value.code == 2


@torch_tests
def test_fits_can_show_each_decision_as_any_of_the_first_face_symmetries(after_data, tmp_path):
    import torch

    from mulle_env.extras import with_extras
    from mulle_env.observation import face_symmetry_columns
    from training.afterfit import AfterstateConfig, _build, _Stepper, fit_afterstate, move_rows
    from training.stream import MemorySource

    d = teacher.load(after_data)
    decision, _, _ = move_rows(d)
    cfg = AfterstateConfig(hidden=[8], augment_symmetries=4, extras="capture-v4")
    seen = []

    class Spy(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            seen.append(x.numpy().copy())
            return self.net(x)

    step = _Stepper(Spy(_build(cfg)), cfg, 16)
    step.load(MemorySource(d), [0])
    decs = np.arange(len(d["legal"]))
    step.loss(decs, 0, 0)
    shown, cols = seen[-1], face_symmetry_columns(4)
    plain = d["after_obs"].astype(np.float32)
    base = plain.shape[1]

    def same(got: np.ndarray, want: np.ndarray) -> bool:
        # The encoding's columns are copied: exactly equal. The extra inputs are float sums that numpy computes
        # over the whole batch in the fit and over one decision here; another batch size (or processor, or BLAS
        # kernel) sums in another order and may differ in the last bits, so those compare within float32 rounding.
        return (np.array_equal(got[:, :base], want[:, :base])
                and np.allclose(got[:, base:], want[:, base:], rtol=1e-5, atol=1e-6))

    used = set()
    for i in decs:
        rows = np.flatnonzero(decision == i)
        # Every move of a decision in the same symmetric position, the extras computed from it.
        ks = [k for k in range(4) if same(shown[rows], with_extras(plain[rows][:, cols[k]], "capture-v4"))]
        assert ks, f"decision {i} is shown in no symmetric position"
        used.update(ks)
    assert used == {0, 1, 2, 3}
    # Two symmetries are the coin fits always drew: the same decisions swapped as before there was a choice.
    from training.bc import suit_swap_permutations

    seen.clear()
    cfg2 = AfterstateConfig(hidden=[8], extras="capture-v4", seed=3)
    step = _Stepper(Spy(_build(cfg2)), cfg2, 16)
    step.load(MemorySource(d), [0])
    step.loss(decs, 1, 5)
    flip = np.random.default_rng([3, 1, 5]).random(len(decs)) < 0.5
    swapped = plain.copy()
    swap = flip[decision]
    swapped[swap] = swapped[swap][:, suit_swap_permutations()[0]]
    assert flip.any() and not flip.all()
    assert same(seen[-1], with_extras(swapped, "capture-v4"))
    fit_afterstate(d, tmp_path / "sym.npz", AfterstateConfig(hidden=[8], epochs=1, batch_size=64,
                                                             augment_symmetries=12), progress=False)
    assert load_policy(tmp_path / "sym.npz").metadata["config"]["augment_symmetries"] == 12
    with pytest.raises(ValueError, match="augment_symmetries must be from 1 to 12"):
        AfterstateConfig(augment_symmetries=13)
