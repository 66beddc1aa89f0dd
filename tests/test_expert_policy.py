"""Policy files record the observation layout they were made for; the value head; batched logits."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from expert_helpers import net

from agents.learned import DEFAULT_POLICY_PATH, PolicyFileError, load_policy, save_policy
from agents.learned.policy import V1_LAYOUT
from mulle_env import observation as ob
from mulle_env.codec import NUM_ACTIONS
from mulle_env.engine import observation_layout as layout
from mulle_env.observation import OBS_SIZE


def rewrite(path, out, change):
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    change(arrays)
    np.savez(out, **arrays)
    return out


def test_fingerprint_is_stable_and_follows_every_part_of_the_layout(monkeypatch):
    fp = ob.layout_fingerprint()
    assert len(fp) == 16 and fp == ob.layout_fingerprint(json.loads(json.dumps(ob.layout_description())))
    # The frozen version-1 layout is today's: version-1 files (the shipped one) keep loading.
    assert V1_LAYOUT == ob.layout_description()
    moved = dict(ob.OBS_SLICES)
    moved["hand"], moved["loose"] = moved["loose"], moved["hand"]  # same size, other order
    monkeypatch.setattr(layout, "OBS_SLICES", moved)
    assert ob.layout_fingerprint() != fp
    monkeypatch.undo()
    monkeypatch.setattr(layout, "SCORE_SCALE", 50.0)
    assert ob.layout_fingerprint() != fp


def test_round_trip_with_value_head_and_version_2_files_still_load(tmp_path):
    pol = net()
    path = save_policy(pol, tmp_path / "p.npz")
    with np.load(path) as z:
        assert int(z["format_version"]) == 3 and str(z["obs_fingerprint"]) == ob.layout_fingerprint()
        assert str(z["head"]) == "logits"
        v2 = {k: z[k] for k in z.files if k != "head"}
    v2["format_version"] = np.array(2)
    np.savez(tmp_path / "v2.npz", **v2)
    old = load_policy(tmp_path / "v2.npz")
    assert old.head == "logits" and old.fingerprint() == pol.fingerprint()
    back = load_policy(path)
    x = np.random.default_rng(1).random((5, OBS_SIZE), dtype=np.float32)
    assert back.has_value and np.allclose(back.value(x), pol.value(x))
    assert back.value(x).shape == (5,) and np.allclose(back.value(x[0]), pol.value(x)[0], atol=1e-6)
    assert np.allclose(back.logits(x), pol.logits(x))
    plain = load_policy(save_policy(net(value=None), tmp_path / "q.npz"))
    assert not plain.has_value
    with pytest.raises(ValueError, match="no value head"):
        plain.value(x)


def test_batch_legal_logits_equal_one_at_a_time():
    pol = net(hidden=(32, 16))
    rng = np.random.default_rng(2)
    x = rng.random((4, OBS_SIZE), dtype=np.float32)
    legal = [rng.choice(NUM_ACTIONS, size=k, replace=False) for k in (3, 1, 7, 2)]
    rows = np.concatenate([[i] * len(ids) for i, ids in enumerate(legal)])
    got = pol.batch_legal_logits(x, rows, np.concatenate(legal))
    want = np.concatenate([pol.legal_logits(x[i], ids) for i, ids in enumerate(legal)])
    assert np.allclose(got, want, atol=1e-5)


PPO_POLICY = os.path.join(os.path.dirname(DEFAULT_POLICY_PATH), "learned_ppo.npz")


def test_the_ppo_version_1_file_loads_while_its_layout_is_todays():
    with np.load(PPO_POLICY) as z:
        assert int(z["format_version"]) == 1 and "obs_fingerprint" not in z.files
    pol = load_policy(PPO_POLICY)
    assert pol.num_actions == NUM_ACTIONS and pol.head == "logits"
    # Its fingerprint (the version of the agent playing it) is what it was before heads existed.
    assert pol.fingerprint() == "c3df10ce5167"


def test_files_for_another_layout_are_refused_naming_the_difference(tmp_path, monkeypatch):
    v2 = save_policy(net(), tmp_path / "v2.npz")
    layout_keys = ("obs_version", "obs_layout", "obs_fingerprint", "value")
    v1 = rewrite(v2, tmp_path / "v1.npz", lambda a: [a.pop(k) for k in list(a) if k.startswith(layout_keys)]
                 and a.update(format_version=np.array(1)))
    load_policy(v1)  # today's layout is the version-1 layout
    moved = dict(ob.OBS_SLICES)
    moved["hand"], moved["loose"] = moved["loose"], moved["hand"]
    monkeypatch.setattr(layout, "OBS_SLICES", moved)
    for path, what in ((v2, "made for observation layout"), (v1, "version-1 files were made for")):
        with pytest.raises(PolicyFileError, match=rf"{what} .*slice 'hand': \[0:52\] in the file, \[52:104\] here"):
            load_policy(path)
    monkeypatch.undo()
    monkeypatch.setattr(layout, "OBS_VERSION", 2)
    with pytest.raises(PolicyFileError, match="version: 1 in the file, 2 here"):
        load_policy(v2)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: a.update(obs_fingerprint=np.array("0123456789abcdef")), "does not match the stored obs_layout"),
        (lambda a: a.pop("obs_layout"), "missing 'obs_layout'"),
        (lambda a: a.update(obs_layout=np.array("{oops")), "obs_layout, line 1: not valid JSON"),
        (lambda a: a.update(obs_version=np.array(7)), "obs_version 7 disagrees"),
        (lambda a: a.pop("value1.bias"), "missing array 'value1.bias' \\(value_layers is 2\\)"),
        (lambda a: a.update({"value1.weight": np.zeros((8, 3), np.float32), "value1.bias": np.zeros(3)}),
         "value head: the last layer writes 3 numbers, not 1"),
        (lambda a: a.update(format_version=np.array(4)), "format version 4 is not supported"),
    ],
)
def test_bad_version_2_files_fail_clearly(tmp_path, change, message):
    path = save_policy(net(), tmp_path / "p.npz")
    with pytest.raises(PolicyFileError, match=message):
        load_policy(rewrite(path, tmp_path / "bad.npz", change))
