"""The ``ismcts`` agent (agents/ismcts.py): OpenSpiel's ISMCTS playing from a seat's view only."""

import random

import pytest

import agents
import mulle_env as me
from agents.registry import AgentSpecError, available

pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install -e '.[openspiel]'")
ismcts = pytest.importorskip("agents.ismcts")


def test_registered_with_its_parameters():
    assert "ismcts" in available()
    assert "simulations=200" in available()["ismcts"] and "uct_c=20.0" in available()["ismcts"]
    bot = agents.make("ismcts:simulations=30,uct_c=5,evaluator=random,rollouts=2")
    assert (bot.simulations, bot.uct_c, bot.evaluator, bot.rollouts) == (30, 5.0, "random", 2)
    assert bot.spec == "ismcts:evaluator=random,rollouts=2,simulations=30,uct_c=5"


@pytest.mark.parametrize("spec, reason", [
    ("ismcts:simulations=0", "simulations must be >= 1"),
    ("ismcts:evaluator=nn", "evaluator must be one of rollout, random"),
    ("ismcts:uct_c=-1", "uct_c must be >= 0"),
    ("ismcts:rollouts=0", "rollouts must be >= 1"),
    ("ismcts:horizon=0", "horizon must be >= 1"),
])
def test_bad_parameters_say_what_is_allowed(spec, reason):
    with pytest.raises(AgentSpecError, match=reason):
        agents.make(spec)


def test_forced_capture_false_is_refused_up_front():
    with pytest.raises(ValueError, match="forced_capture=True"):
        agents.make("ismcts").check_ruleset(me.Ruleset(forced_capture=False))


def _decide(spec, state, seed):
    return agents.make(spec).act(state.view(state.to_move), state.legal_moves(), random.Random(seed))


def test_plays_a_legal_move_reproducibly_from_the_rng():
    state = me.new_game(seed=12)
    for spec in ("ismcts:simulations=40", "ismcts:simulations=4,evaluator=random"):
        move = _decide(spec, state, 3)
        assert move in state.legal_moves()
        assert _decide(spec, state, 3) == move


def test_it_never_sees_the_hidden_cards():
    # Two states the seat cannot tell apart (the opponent's hand and the deck dealt differently)
    # get the same decision from the same random numbers.
    state = me.new_game(seed=21)
    for _ in range(5):
        state.play(state.legal_moves()[0])
    view = state.view(state.to_move)
    unseen = [int(c) for c in view.unseen()]
    random.Random(4).shuffle(unseen)
    other = me.GameState.from_view(view, unseen[:view.opponent_hand_size], unseen[view.opponent_hand_size:], seed=99)
    assert other.hands[1 - view.player] != state.hands[1 - view.player]
    assert other.view(view.player) == view
    assert _decide("ismcts:simulations=30", state, 8) == _decide("ismcts:simulations=30", other, 8)


def test_the_search_values_the_obvious_mulle(monkeypatch):
    # A mulle capture worth 26 points against a discard: the search must find it.
    state = me.GameState.from_dict({
        "to_move": 0,
        "hands": [["KL K", "SP 3"], ["HJ 5", "RU 6"]],
        "table": ["KL K", "HJ 9"],
        "deck": [],
    })
    bot = agents.make("ismcts:simulations=60")
    values = dict(bot.move_values(state.view(0), state.legal_moves(), random.Random(1)))
    best = max(values, key=values.get)
    assert str(best) == "capture KL K"
    assert sum(values.values()) == pytest.approx(1.0)


def test_plays_arena_games_without_forfeits(tmp_path):
    from arena.cli import main

    out = tmp_path / "r.jsonl"
    code = main(["ismcts:simulations=8", "random", "--games", "2", "--workers", "1", "--seed", "4",
                 "--rule", "sets=1", "--out", str(out), "--quiet"])
    assert code == 0
    import json

    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2 and all(line["status"] == "ok" and line["forfeit"] is None for line in lines)


def test_ismcts_plays_casino_from_its_view_through_the_arena(tmp_path):
    # Issue 50, item 5: OpenSpiel's ISMCTS on python_casino plays in the arena as `ismcts` at --game casino.
    import json

    import agents
    from arena.cli import main as arena_main
    from mulle_env import casino

    bot = agents.make("ismcts:simulations=8", game="casino")
    st = casino.new_game(5, {"rounds": 1})
    rng = random.Random(0)
    for _ in range(6):
        move = bot.act(st.view(st.to_move), st.legal_moves(), rng)
        assert move in st.legal_moves()
        st.play(move)
    with pytest.raises(ValueError, match="gather_all=True only"):
        bot.check_ruleset(casino.Ruleset(gather_all=False))
    out = tmp_path / "r.jsonl"
    assert arena_main(["ismcts:simulations=4", "random", "--game", "casino", "--rule", "rounds=1", "--games", "2",
                       "--workers", "1", "--out", str(out), "--quiet"]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["status"] for x in lines] == ["ok", "ok"] and lines[0]["game"] == "mulle_env.casino"


def test_registering_and_listing_the_agents_does_not_load_openspiel() -> None:
    """OpenSpiel costs about 30 MB resident: the live server and arenas of other agents must not pay for it
    (it put mulle-serve over docs/live.md's memory figure); it loads when an ismcts search runs."""
    import subprocess
    import sys

    code = ("import sys, random, agents, live.server; agents.available(); agents.available(game='casino'); "
            "a = agents.make('ismcts:simulations=4'); print('pyspiel' in sys.modules); "
            "import mulle_env as me; s = me.new_game(seed=1); a.act(s.view(s.to_move), s.legal_moves(), "
            "random.Random(0)); print('pyspiel' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"], out
