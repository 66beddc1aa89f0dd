"""Every built-in agent: legal moves only, determinism, pickling, specs and their errors."""

from __future__ import annotations

import pickle
import random

import pytest

import agents
import mulle_env as me
from agents import AgentSpecError
from agents.registry import canonical

# Cheap settings so that the whole file stays fast; the defaults are exercised in test_pimc.
SPECS = ["random", "heuristic", "greedy", "greedy:risk=0", "pimc:samples=2", "pimc:samples=2,rollout=random,horizon=6"]

RULESETS = [
    me.Ruleset(sets=1),
    me.Ruleset(sets=1, forced_capture=False),
    me.Ruleset(sets=1, lock_every_build=True, discard_only_if_no_capture=False, mulle_hand_values=True),
]


def sample_positions(n_games: int = 2, every: int = 7):
    """Positions from random games under several rulesets (every ``every``-th move)."""
    out = []
    for ruleset in RULESETS:
        for seed in range(n_games):
            st = me.new_game(seed=seed, ruleset=ruleset)
            rng = random.Random(seed)
            k = 0
            while not st.over:
                if k % every == 0:
                    out.append(st.copy())
                moves = st.legal_moves()
                st.play(moves[rng.randrange(len(moves))])
                k += 1
    return out


POSITIONS = sample_positions()


@pytest.mark.parametrize("spec", SPECS)
def test_agents_only_return_legal_moves(spec):
    bot = agents.make(spec)
    rng = random.Random(1)
    for st in POSITIONS:
        legal = st.legal_moves()
        move = bot.act(st.view(st.to_move), legal, rng)
        assert move in legal, f"{spec} played {move} in\n{st}"


@pytest.mark.parametrize("spec", SPECS)
def test_agents_play_whole_games(spec):
    bot = agents.make(spec)
    rng = random.Random(5)
    st = me.new_game(seed=11, ruleset=me.Ruleset(sets=1))
    while not st.over:
        st.play(bot.act(st.view(st.to_move), st.legal_moves(), rng))
    assert st.result().scores is not None


@pytest.mark.parametrize("spec", SPECS)
def test_same_rng_state_same_move(spec):
    for st in POSITIONS[::5]:
        view, legal = st.view(st.to_move), st.legal_moves()
        a = agents.make(spec).act(view, legal, random.Random(42))
        b = agents.make(spec).act(view, legal, random.Random(42))
        assert a == b


@pytest.mark.parametrize("spec", SPECS)
def test_agents_pickle_and_act_alike(spec):
    bot = agents.make(spec)
    clone = pickle.loads(pickle.dumps(bot))
    assert clone.spec == bot.spec
    for st in POSITIONS[::9]:
        view, legal = st.view(st.to_move), st.legal_moves()
        assert clone.act(view, legal, random.Random(3)) == bot.act(view, legal, random.Random(3))


@pytest.mark.parametrize("spec", ["heuristic", "greedy", "pimc:samples=4"])
def test_identical_views_give_identical_moves(spec):
    # Agents see only the view: two states that differ only in the cards hidden from
    # seat 0 (opponent hand, deck) must get the same move from the same rng.
    st = me.new_game(seed=4)
    view = st.view(0)
    unseen = [int(c) for c in view.unseen()]
    other = unseen[8:16] + unseen[:8] + unseen[16:]
    st2 = me.GameState.from_view(view, other[:8], other[8:], seed=99)
    assert st2.view(0) == view
    bot = agents.make(spec)
    again = bot.act(st2.view(0), st2.legal_moves(), random.Random(0))
    assert bot.act(view, st.legal_moves(), random.Random(0)) == again


def test_registry_lists_the_built_ins():
    names = agents.available()
    for name in ("random", "heuristic", "greedy", "pimc", "learned"):
        assert name in names
    assert "samples=200" in names["pimc"]


def test_pimc_default_is_200_samples_and_the_old_default_keeps_its_spec():
    assert agents.make("pimc").samples == 200
    old = agents.make("pimc:samples=40")
    assert old.samples == 40 and old.spec == "pimc:samples=40"  # the old default is no longer `pimc`


def test_agents_have_versions():
    # Class default "1"; pimc is "2" (its determinizations and default changed: docs/agents.md).
    assert agents.Agent.version == "1"
    assert {s: agents.make(s).version for s in ("random", "heuristic", "greedy", "pimc", "pimc:samples=40")} == {
        "random": "1", "heuristic": "1", "greedy": "1", "pimc": "2", "pimc:samples=40": "2"}


def test_spec_parameters_are_typed_and_canonical():
    bot = agents.make("pimc: rollout=random , samples=7,horizon=set")
    assert (bot.samples, bot.rollout, bot.horizon) == (7, "random", "set")
    assert bot.spec == "pimc:horizon=set,rollout=random,samples=7"
    assert agents.make(bot.spec).spec == bot.spec
    assert agents.make("greedy:risk=0.5").risk == 0.5


@pytest.mark.parametrize(
    "specs, text",
    [
        # Equal agents get equal specs (arena game ids, seeds and duplicate checks key on them).
        (["pimc", "pimc:samples=200", "pimc:samples=0200", "pimc:horizon=4,rollout=heuristic,width=0"], "pimc"),
        (["pimc:samples=40", "pimc:samples=040"], "pimc:samples=40"),
        (["pimc:samples=8", "pimc:samples=08,width=0"], "pimc:samples=8"),
        (["greedy", "greedy:risk=1", "greedy:risk=1.0"], "greedy"),
        (["greedy:risk=0", "greedy:risk=0.0"], "greedy:risk=0"),
        (["greedy:risk=0.50"], "greedy:risk=0.5"),
        (["pimc:width=3,samples=7", "pimc: samples=7 ,width=3"], "pimc:samples=7,width=3"),
    ],
)
def test_specs_are_canonical_by_value(specs, text):
    for spec in specs:
        assert agents.make(spec).spec == text, spec
        assert canonical(spec) == text, spec
    assert agents.make(text).spec == text


def test_learned_spec_drops_the_default_path():
    from agents.learned import DEFAULT_POLICY_PATH

    assert canonical(f"learned:path={DEFAULT_POLICY_PATH}") == "learned"
    assert canonical("learned:path=mine.npz,temperature=1,sample=no") == "learned:path=mine.npz"
    assert canonical("learned:sample=on") == "learned:sample=true"


def test_netsearch_spec_drops_its_pinned_net():
    from agents.learned import DEFAULT_POLICY_PATH
    from agents.netsearch import DEFAULT_NET_PATH

    # netsearch plays generation 4's net by default (the net its defaults were measured with),
    # whatever net `learned` ships: naming that file is plain netsearch, naming learned's is not.
    assert DEFAULT_NET_PATH.endswith("generations/gen4.npz")
    assert canonical(f"netsearch:policy={DEFAULT_NET_PATH}") == "netsearch"
    assert agents.make("netsearch").net is agents.make(f"netsearch:policy={DEFAULT_NET_PATH}").net
    assert agents.make("netsearch").version == "3+" + agents.make(f"learned:path={DEFAULT_NET_PATH}").version[2:]
    assert canonical(f"netsearch:policy={DEFAULT_POLICY_PATH}") != "netsearch"


def test_canonical_checks_names_and_types():
    with pytest.raises(AgentSpecError, match="unknown agent"):
        canonical("nosuch")
    with pytest.raises(AgentSpecError, match="int"):
        canonical("pimc:samples=many")


def test_a_failed_builtin_import_is_retried(monkeypatch):
    # A module mid-edit must not leave the registry empty for the rest of the process.
    import sys

    from agents import registry

    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_HELP", {})
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.delattr(agents, "builtin", raising=False)
    monkeypatch.delitem(sys.modules, "agents.builtin", raising=False)
    monkeypatch.setitem(sys.modules, "agents.builtin", None)  # makes the import fail
    with pytest.raises(ImportError, match="agents.builtin"):
        agents.make("heuristic")
    monkeypatch.delitem(sys.modules, "agents.builtin")
    assert agents.make("heuristic").spec == "heuristic"


@pytest.mark.parametrize(
    "spec, words",
    [
        ("nosuch", ["unknown agent 'nosuch'", "heuristic", "pimc"]),
        ("pimc:samples=many", ["samples", "int"]),
        ("pimc:depth=3", ["no parameter 'depth'", "samples", "rollout", "horizon"]),
        ("pimc:rollout=smart", ["rollout must be one of", "heuristic", "random"]),
        ("pimc:horizon=0", ["horizon"]),
        ("pimc:samples=0", ["samples must be >= 1"]),
        ("greedy:risk=-1", ["risk"]),
        ("pimc:samples", ["key=value"]),
        ("", ["non-empty string"]),
        ("greedy:risk=nan", ["risk='nan' must be a finite number"]),
        ("greedy:risk=-inf", ["finite"]),
        ("pimc:samples=3,samples=4", ["'samples' is given twice"]),
        ("pimc:samples=x", ["samples='x' must be an int"]),
        ("learned:path=/tmp", ["is a directory"]),
    ],
)
def test_bad_specs_are_clear_errors(spec, words):
    with pytest.raises(AgentSpecError) as err:
        agents.make(spec)
    assert isinstance(err.value, ValueError)
    for w in words:
        assert w in str(err.value)
    # One prefix, said once: "agent spec 'X': reason".
    assert str(err.value).startswith(f"agent spec {spec!r}: ") and str(err.value).count("agent spec") == 1


def test_huge_floats_get_a_short_canonical_spec():
    assert canonical("greedy:risk=1e308") == "greedy:risk=1e+308"
    assert agents.make(canonical("greedy:risk=1e308")).spec == "greedy:risk=1e+308"
    assert canonical("greedy:risk=2.0") == "greedy:risk=2"
