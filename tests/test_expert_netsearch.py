"""netsearch: legal play, determinism, width, leaves, spec and refusals."""

from __future__ import annotations

import pickle
import random

import pytest
from expert_helpers import net

import agents
from agents.learned import save_policy
from agents.netsearch import NetSearchAgent
from mulle_env.engine import Match, new_game


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("nets")
    return str(save_policy(net(1, hidden=(16,)), d / "v.npz")), str(save_policy(net(1, value=None), d / "p.npz"))


def a_position(seed=2, at=12):
    st = new_game(seed)
    rng = random.Random(seed)
    while at or len(st.legal_moves()) < 4:
        st.play(rng.choice(st.legal_moves()))
        at = max(0, at - 1)
    return st


def test_plays_whole_games_legally_against_pimc(files):
    bot = agents.make(f"netsearch:policy={files[0]},samples=2,width=3,depth=2")
    result = Match(seed=3, ruleset={"sets": 1}).play_out([bot, agents.make("pimc:samples=2")],
                                                        [random.Random(1), random.Random(2)])
    assert len(result.scores) == 2
    assert bot.leaf == "value" and agents.make(f"netsearch:policy={files[1]}").leaf == "score"


def test_move_values_width_order_and_determinism(files):
    st = a_position()
    view, legal = st.view(st.to_move), st.legal_moves()
    bot = NetSearchAgent(policy=files[0], samples=3, width=3, depth=3)
    values = bot.move_values(view, legal, random.Random(5))
    assert len(values) == 3 and values == bot.move_values(view, legal, random.Random(5))
    ids = [m.id for m in legal]
    z = bot.net.legal_logits(__import__("mulle_env").observation.encode_view(view), ids)
    top = [legal[i] for i in sorted(range(len(legal)), key=lambda i: -z[i])[:3]]
    assert [m for m, _ in values] == top
    everything = NetSearchAgent(policy=files[0], samples=2, width=0).move_values(view, legal, random.Random(5))
    assert sorted(str(m) for m, _ in everything) == sorted(map(str, legal))
    best = max(values, key=lambda mv: mv[1])[1]
    assert bot.act(view, legal, random.Random(5)) == next(m for m, v in values if v == best)
    # depth=1 scored by points: every candidate is worth what it banks now, identical in every determinization.
    flat = NetSearchAgent(policy=files[1], samples=4, width=0, depth=1).move_values(view, legal, random.Random(0))
    again = NetSearchAgent(policy=files[1], samples=1, width=0, depth=1).move_values(view, legal, random.Random(9))
    assert flat == again
    assert pickle.loads(pickle.dumps(bot)).move_values(view, legal, random.Random(5)) == values


def test_prior_moves_values_toward_the_policy(files):
    st = a_position()
    view, legal = st.view(st.to_move), st.legal_moves()
    plain = NetSearchAgent(policy=files[0], samples=2, width=4).move_values(view, legal, random.Random(1))
    leaned = NetSearchAgent(policy=files[0], samples=2, width=4, prior=3.0).move_values(view, legal, random.Random(1))
    gaps = [b - a for (_, a), (_, b) in zip(plain, leaned)]
    assert gaps == sorted(gaps, reverse=True) and gaps[0] > gaps[-1]  # the policy's favourite gains most


def test_bad_parameters_are_refused(files):
    for spec, msg in ((f"netsearch:policy={files[1]},leaf=value", "needs a policy file with a value head"),
                      ("netsearch:samples=0", "samples must be"), ("netsearch:leaf=magic", "leaf must be one of"),
                      ("netsearch:depth=0", "depth must be"), ("netsearch:policy=/no/such.npz", "does not exist")):
        with pytest.raises(agents.AgentSpecError, match=msg):
            agents.make(spec)
    assert agents.canonical("netsearch:samples=32,depth=5,width=4") == "netsearch"


def test_act_takes_the_best_value_earliest_on_a_tie(files, monkeypatch):
    st = new_game(3)
    view, legal = st.view(st.to_move), st.legal_moves()
    bot = NetSearchAgent(policy=files[0], samples=1)
    a, b, c = legal[:3]
    for values, expected in (([(a, 1.0), (b, 1.0 + 1e-12), (c, 0.25)], a), ([(a, 1.0), (b, 1.5), (c, 1.5 + 1e-10)], b)):
        monkeypatch.setattr(bot, "move_values", lambda *args, values=values: values)
        assert bot.act(view, legal, random.Random(0)) == expected
