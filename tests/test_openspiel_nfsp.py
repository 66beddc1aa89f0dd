"""examples/openspiel_nfsp.py: OpenSpiel's NFSP on python_mulle, its average policy exported and played."""

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
import mulle_env as me
from agents.learned.policy import load_policy
from mulle_env.observation import encode_state

pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install -e '.[openspiel]'")
torch = pytest.importorskip("torch", reason="NFSP's networks need torch (the rllib or train extra)")
pytest.importorskip("tree", reason="OpenSpiel's pytorch NFSP imports dm-tree (pip install dm-tree, or the rllib extra)")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import openspiel_nfsp as nf  # noqa: E402


def test_bad_arguments_exit_2(capsys, tmp_path):
    assert nf.main(["--episodes", "0"]) == 2
    assert nf.main(["--hidden", "x"]) == 2
    assert "--hidden takes positive sizes" in capsys.readouterr().err
    (tmp_path / "f").write_text("x")
    assert nf.main(["--out", str(tmp_path / "f")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_self_play_exports_the_average_policy_exactly(tmp_path):
    out = tmp_path / "nfsp"
    assert nf.main(["--episodes", "2", "--eval-every", "2", "--eval-games", "0", "--hidden", "8",
                    "--out", str(out)]) == 0
    curve = json.loads((out / "curve.json").read_text())
    assert [p["episodes"] for p in curve["points"]] == [2]
    policy = load_policy(out / "seat1.npz")
    assert policy.activation == "relu" and policy.hidden_sizes == (8,)
    assert policy.metadata["episodes"] == 2 and policy.metadata["seat"] == 1
    # The file computes what the exported network computes.
    rebuilt = nf.nfsp.NFSP(1, 524, 2812, [8], reservoir_buffer_capacity=10, anticipatory_param=0.1, seed=1)
    layers = nf.average_policy_layers(rebuilt)
    with torch.no_grad():
        for lin, w, b in zip(layers, policy.weights, policy.biases):
            lin.weight.copy_(torch.from_numpy(w.T))
            lin.bias.copy_(torch.from_numpy(b))
    state = me.new_game(seed=3, ruleset=me.Ruleset(sets=1))
    obs = encode_state(state, 0)
    with torch.no_grad():
        expected = rebuilt._avg_network(torch.from_numpy(obs)[None])[0].numpy()
    np.testing.assert_allclose(policy.logits(obs), expected, rtol=1e-5, atol=1e-5)
    bot = agents.make(f"learned:path={out / 'seat0.npz'}")
    assert bot.act(state.view(0), state.legal_moves(), random.Random(0)) in state.legal_moves()
