"""Face symmetries: positions the rules cannot tell apart, and nets averaged over them and over each other."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

import agents
import mulle_env as me
from agents.learned import PolicyFileError, load_policy, save_policy
from agents.learned.afterstate import encode_afterstates
from agents.learned.policy import MLPPolicy, average_policies
from mulle_env.engine import GameState, new_game
from mulle_env.engine.cards import CARD_NAMES, FACE_SYMMETRIES, NUM_FACES
from mulle_env.extras import symmetry_columns, with_extras
from mulle_env.observation import OBS_SIZE, encode_state, face_symmetry_columns
from training.cli import train_main

GENERATIONS = "agents/data/generations"
_CARD = re.compile(r"(KL|SP|HJ|RU) (A|10|[2-9]|J|Q|K)")
_BY_NAME = {name: face for face, name in enumerate(CARD_NAMES)}


def _rename(obj, perm):
    """A state's JSON with every card replaced by its image under ``perm``."""
    if isinstance(obj, str):
        return _CARD.sub(lambda m: CARD_NAMES[perm[_BY_NAME[m.group(0)]]], obj)
    if isinstance(obj, list):
        return [_rename(x, perm) for x in obj]
    if isinstance(obj, dict):
        return {k: _rename(v, perm) for k, v in obj.items()}
    return obj


def _mapped(st: GameState, perm) -> GameState:
    return GameState.from_json(json.dumps(_rename(json.loads(st.to_json()), perm)))


def _compose(a, b):
    return tuple(a[b[f]] for f in range(NUM_FACES))


def test_the_symmetries_are_a_group_of_twelve_with_the_suit_swaps_first():
    assert FACE_SYMMETRIES[0] == tuple(range(NUM_FACES))
    assert len(set(FACE_SYMMETRIES)) == len(FACE_SYMMETRIES) == 12
    group = set(FACE_SYMMETRIES)
    assert all(_compose(a, b) in group for a in group for b in group)  # closed, so inverses are in it too
    for perm in FACE_SYMMETRIES:
        assert sorted(perm) == list(range(NUM_FACES))
        for f in range(NUM_FACES):
            # The cards with their own rules stay: every spade, RU 10 (hand value 16, two intake points);
            # every other card goes to one of its rank.
            if CARD_NAMES[f].startswith("SP") or CARD_NAMES[f] == "RU 10":
                assert perm[f] == f
            assert CARD_NAMES[perm[f]].split()[1] == CARD_NAMES[f].split()[1]
    # The first four (what generation 8's file, `symmetries` 4, means): the identity and the three suit swaps,
    # the 10s swapped by KL <-> HJ only. A file's k takes the first k, so this order must not change.
    def swap(a, b, tens):
        return tuple(_BY_NAME[f"{b if s == a else a if s == b else s} {r}"] if r != "10" or tens else f
                     for f, (s, r) in enumerate(name.split() for name in CARD_NAMES))
    assert FACE_SYMMETRIES[1:4] == (swap("KL", "HJ", True), swap("KL", "RU", False), swap("HJ", "RU", False))


def _image(move, perm) -> me.Move:
    return me.Move.from_str(_CARD.sub(lambda m: CARD_NAMES[perm[_BY_NAME[m.group(0)]]], str(move)))


@pytest.mark.parametrize("flags", [{}, {"mulle_hand_values": True, "lock_every_build": True},
                                   {"discard_only_if_no_capture": False, "sets": 1}])
def test_a_symmetric_position_is_the_same_position(flags):
    """Through random games, for every symmetry and position: the image's legal moves are the moves' images and
    its observations the observations' columns. A discard's image leads to the image of where it leads (a build
    or capture may break a tie by card order, RULES.md 4.1.3, and take other cards: near symmetries); the next
    set's deal comes from the seed, not the position, so across a set's end only the scores agree."""
    ruleset = me.Ruleset(**flags)
    cols = face_symmetry_columns()
    rng = random.Random(7)
    for _ in range(1 if flags else 2):
        st = new_game(rng.randrange(10**9), ruleset)
        while not st.over:
            legal = st.legal_moves()
            move = legal[rng.randrange(len(legal))]
            after = st.copy()
            after.play(move)
            for k, perm in enumerate(FACE_SYMMETRIES):
                tw = _mapped(st, perm)
                assert sorted(str(_image(m, perm)) for m in legal) == sorted(str(m) for m in tw.legal_moves())
                for seat in (0, 1):
                    np.testing.assert_array_equal(encode_state(st, seat)[cols[k]], encode_state(tw, seat))
                if move.kind != "discard":
                    continue
                tw.play(_image(move, perm))
                if after.set_no == st.set_no and not after.over:
                    assert tw.to_json() == _mapped(after, perm).to_json()
                else:  # a set ended: the next one is dealt from the seed, so only the scores can agree
                    assert (tw.scores(), tw.over, tw.set_no) == (after.scores(), after.over, after.set_no)
            st = after


def _afterstate_batches(n_games=4, seed=3):
    rng = random.Random(seed)
    out = []
    for _ in range(n_games):
        st = new_game(rng.randrange(10**9))
        while not st.over:
            legal = st.legal_moves()
            if len(legal) > 1:
                obs, _ = encode_afterstates(st.view(st.to_move), legal)
                out.append(obs.copy())
            st.play(legal[rng.randrange(len(legal))])
    return out


def test_extra_inputs_follow_the_symmetries():
    x = np.concatenate(_afterstate_batches(2))
    cols = face_symmetry_columns()
    for name in ("capture-v1", "capture-v4"):
        full = with_extras(x, name)
        ext = symmetry_columns(name, len(FACE_SYMMETRIES))
        for k in range(len(FACE_SYMMETRIES)):
            np.testing.assert_allclose(with_extras(np.ascontiguousarray(x[:, cols[k]]), name), full[:, ext[k]],
                                       atol=2e-6)


def test_average_is_the_mean_of_the_nets_and_of_the_symmetric_positions(tmp_path):
    g6, g7 = load_policy(f"{GENERATIONS}/gen6.npz"), load_policy(f"{GENERATIONS}/gen7.npz")
    both = average_policies([g6, g7])
    sym = average_policies([g6, g7], symmetries=4)
    cols = face_symmetry_columns(4)
    batches = _afterstate_batches(1)
    batches.append(np.concatenate(batches))  # a batch past the sparse path's size too
    for x in batches:
        np.testing.assert_allclose(both.afterstate_values(x), (g6.afterstate_values(x) + g7.afterstate_values(x)) / 2,
                                   atol=1e-6)
        want = np.mean([(g6.afterstate_values(x[:, c]) + g7.afterstate_values(x[:, c])) / 2 for c in cols], axis=0)
        np.testing.assert_allclose(sym.afterstate_values(x), want, atol=1e-6)
    np.testing.assert_allclose(sym.afterstate_values(batches[0][0]), sym.afterstate_values(batches[0][:1])[0])
    # The file keeps the symmetries, and they are part of what the agent's version names.
    back = load_policy(save_policy(sym, tmp_path / "s.npz"))
    assert back.symmetries == 4 and back.fingerprint() == sym.fingerprint() != both.fingerprint()
    assert load_policy(save_policy(both, tmp_path / "b.npz")).symmetries == 1
    with np.load(tmp_path / "b.npz") as z:
        assert "symmetries" not in z.files  # files without symmetries are written as before


def test_side_by_side_nets_run_block_by_block_as_the_dense_product_would():
    """An average's block-diagonal hidden layers are found and run per block (half the products for two
    nets); the values are the dense layers' to float rounding, for every symmetry count. A dense net
    (any zero outside a diagonal block would be chance) and a net with an idle unit keep the dense product."""
    g6, g7 = load_policy(f"{GENERATIONS}/gen6.npz"), load_policy(f"{GENERATIONS}/gen7.npz")
    rng = np.random.default_rng(1)
    narrow = MLPPolicy([g7.weights[0][:, :64], (rng.normal(size=(64, 32)) / 8).astype(np.float32),
                        (rng.normal(size=(32, 1)) / 8).astype(np.float32)],
                       [g7.biases[0][:64], np.zeros(32, np.float32), np.zeros(1, np.float32)],
                       g7.activation, head="afterstate", extras=g7.extras)
    three = average_policies([g6, g7, narrow])
    assert [(r0, r1, c0, c1) for r0, r1, c0, c1, _ in three._blocks[0]] == [
        (0, 256, 0, 256), (256, 512, 256, 512), (512, 576, 512, 544)]
    assert g7._blocks == [None]
    idle = [w.copy() for w in three.weights]
    idle[1][:, 255] = 0  # a unit of layer 1 that reads nothing, on a block's edge: the dense product must write it
    with_idle = MLPPolicy(idle, three.biases, three.activation, head="afterstate", extras=three.extras)
    assert with_idle._blocks == [None]

    def dense(net, x):
        h = with_extras(x, net.extras)
        for i, (w, b) in enumerate(zip(net.weights, net.biases)):
            h = h @ w + b
            if i < len(net.weights) - 1:
                h = np.maximum(h, 0) if net.activation == "relu" else np.tanh(h)
        return h[:, 0]

    cols = face_symmetry_columns()
    batches = _afterstate_batches(1)
    batches.append(np.concatenate(batches))
    for x in batches:
        np.testing.assert_allclose(with_idle.afterstate_values(x), dense(with_idle, x), rtol=1e-5, atol=2e-6)
    for k in (1, 4, 12):
        net = average_policies([g6, g7, narrow], symmetries=k)
        for x in batches:
            want = np.mean([dense(net, x[:, c]) for c in cols[:k]], axis=0)
            np.testing.assert_allclose(net.afterstate_values(x), want, rtol=1e-5, atol=2e-6)
        assert net.afterstate_values(batches[0][:0]).shape == (0,)  # an empty batch, as a plain net allows


def test_the_agent_version_names_the_block_by_block_forward_pass():
    """Plain nets hash as they always did (their games keep their agent version); an averaged or symmetric net
    is computed block by block, which may break a near tie the other way than the dense product did, so the
    agent playing it is another version than the one generation 8 was measured as (1+3b8a592e7f38)."""
    g6, g7 = load_policy(f"{GENERATIONS}/gen6.npz"), load_policy(f"{GENERATIONS}/gen7.npz")
    assert (g6.fingerprint(), g7.fingerprint()) == ("33a5fe1b778e", "0c6480bddc3b")
    g8 = load_policy(f"{GENERATIONS}/gen8.npz")
    assert g8.fingerprint() != "3b8a592e7f38"
    assert average_policies([g6, g7]).fingerprint() != average_policies([g6, g7], symmetries=4).fingerprint()


def test_average_of_nets_without_hidden_layers():
    rng = np.random.default_rng(0)
    one = [MLPPolicy([rng.normal(size=(OBS_SIZE, 1)).astype(np.float32)], [np.full(1, b, np.float32)], "relu",
                     head="afterstate") for b in (1.0, 3.0)]
    x = rng.random((5, OBS_SIZE)).astype(np.float32)
    both = average_policies(one, symmetries=2)
    cols = face_symmetry_columns(2)
    want = np.mean([(one[0].afterstate_values(x[:, c]) + one[1].afterstate_values(x[:, c])) / 2 for c in cols], axis=0)
    np.testing.assert_allclose(both.afterstate_values(x), want, rtol=1e-5, atol=1e-5)


def test_bad_symmetries_and_unlike_nets_are_refused(tmp_path):
    g7 = load_policy(f"{GENERATIONS}/gen7.npz")
    for bad in (0, 13, 2.0, True):
        with pytest.raises(PolicyFileError, match="symmetries must be an int from 1 to 12"):
            MLPPolicy(g7.weights, g7.biases, g7.activation, head="afterstate", extras=g7.extras, symmetries=bad)
    ppo = load_policy("agents/data/learned_ppo.npz")
    with pytest.raises(PolicyFileError, match="only an afterstate net averages over symmetries"):
        MLPPolicy(ppo.weights, ppo.biases, ppo.activation, symmetries=2)
    with pytest.raises(ValueError, match="policy 1 is not an afterstate net"):
        average_policies([g7, ppo])
    shallow = MLPPolicy([g7.weights[0][:, :8], np.ones((8, 1), np.float32)], [g7.biases[0][:8], np.zeros(1)],
                        g7.activation, head="afterstate", extras=g7.extras)
    with pytest.raises(ValueError, match="policy 1 differs in depth"):
        average_policies([g7, shallow])
    with pytest.raises(ValueError, match="at least one"):
        average_policies([])
    # A file saying so is refused at load, naming the file.
    path = save_policy(g7, tmp_path / "g.npz")
    with np.load(path) as z:
        arrays = dict(z)
    np.savez(tmp_path / "bad.npz", **{**arrays, "symmetries": np.array(13)})
    with pytest.raises(PolicyFileError, match="bad.npz.*symmetries must be"):
        load_policy(tmp_path / "bad.npz")


def test_train_average_writes_a_file_the_arena_plays(tmp_path, capsys):
    out = tmp_path / "avg.npz"
    assert train_main(["average", f"{GENERATIONS}/gen6.npz", f"{GENERATIONS}/gen7.npz", "--symmetries", "4",
                       "--out", str(out)]) == 0
    bot = agents.make(f"learned:path={out}")
    st = new_game(11)
    legal = st.legal_moves()
    assert bot.act(st.view(st.to_move), legal, random.Random(0)) in legal
    assert load_policy(out).metadata["symmetries"] == 4
    with pytest.raises(SystemExit) as exc:  # a logits net: bad usage, named before anything is read further
        train_main(["average", "agents/data/learned_ppo.npz", "--out", str(tmp_path / "x.npz")])
    assert exc.value.code == 2
    assert "'agents/data/learned_ppo.npz' holds a logits net; average takes afterstate nets" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()
    assert OBS_SIZE == 524  # the columns above are the layout's
