"""Games by short name in the arena, and agents at the games they play (issue 50).

A game is named by a short name (``mulle``, ``casino``: the one table ``arena.game.GAMES``) or by
its module's path; both spellings are one game with one set of game ids. Agents declare the games
they play (``agents.Agent.games``); a tournament that seats an agent at a game it does not play is
refused before the first game, naming the agents that do play it. The fake game
``arena_agents:NamedTakeAway`` has a short name of its own (``takeaway``), which only ``random``
(any game) plays; ``arena_agents:TakeAway`` has none, so every agent may sit at it.
"""

from __future__ import annotations

import json

import pytest

import agents
from agents.base import ANY_GAME, DEFAULT_GAMES, Agent, declares
from arena import Plan, ProcessBackend, cli, run
from arena.game import GAMES, AgentGameError, UnknownGameError, game_name, resolve_game, seating_refusal
from arena.worker import load_game

NAMED = "arena_agents:NamedTakeAway"
INIT = "arena_agents:register"


def _players(message: str, game: str) -> set[str]:
    """The agents a refusal names as playing ``game``: those the registry says play it (random among them)."""
    listed = set(message.split(f"the agents that play {game}: ")[1].split(" (mulle-arena")[0].split(", "))
    assert "random" in listed and listed == set(agents.available(game=game)), message
    return listed


def _error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        cli.parse_args(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


# ----- agents declare their games -----------------------------------------------------------------


#: The built-in agents (ismcts only with OpenSpiel); other tests register agents of their own in this process.
BUILTINS = {"random", "heuristic", "greedy", "pimc", "netsearch", "learned", "ismcts"} & set(agents.available())
#: Built-in agents that do not play Casino (yet): what a refusal at Casino is tested with.
NOT_CASINO = sorted(n for n in BUILTINS if not agents.plays(n, "casino"))


def test_every_builtin_agent_declares_its_games():
    for name in BUILTINS:
        assert isinstance(agents.make(name).games, tuple) and agents.make(name).games, name
    assert agents.make("random").games == (ANY_GAME,)
    assert BUILTINS <= set(agents.available(game="mulle"))  # every built-in plays Mulle
    for game in ("mulle", "casino", "no such game"):  # the listing and the question agree
        assert set(agents.available(game=game)) == {n for n in agents.available() if agents.plays(n, game)}
    assert BUILTINS & set(agents.available(game="no such game")) == {"random"}  # random plays whatever has moves
    assert "netsearch" not in NOT_CASINO  # its search plays Casino with Casino's nets (agents/casino/netsearch.py)
    assert "learned" not in NOT_CASINO  # a Casino policy file plays Casino (learned:path=FILE)


def test_plays_asks_a_built_agent_or_a_specs_registered_class():
    assert agents.plays("pimc:samples=3", "mulle") and not agents.plays("pimc:samples=3", "chess")
    assert agents.plays(agents.make("random"), "chess") and not agents.make("heuristic").plays("chess")
    assert agents.plays("netsearch", "casino") and not agents.make("netsearch").plays("casino")  # Mulle's netsearch
    assert agents.plays("learned", "casino") and not agents.make("learned").plays("casino")  # Mulle's learned
    with pytest.raises(agents.AgentSpecError, match="unknown agent 'pimcc'.*did you mean 'pimc'"):
        agents.plays("pimcc", "mulle")

    class Mine(Agent):
        pass

    mine = Mine()
    assert Mine.games == DEFAULT_GAMES == ("mulle",) and mine.plays("mulle") and not mine.plays("casino")
    mine.games = ("casino",)  # per instance: a policy file knows the game it learnt
    assert agents.plays(mine, "casino") and not agents.plays(mine, "mulle")
    assert agents.plays(object(), "mulle") and not agents.plays(object(), "casino")  # declares nothing: Mulle


def test_a_declaration_is_names_not_letters():
    assert declares("casino", "casino") and not declares("casino", "c")  # ("casino") without its comma
    assert declares(("mulle", "casino"), "casino") and declares((ANY_GAME,), "chess")
    assert not declares(None, "mulle") and not declares(42, "mulle")


# ----- the short-name table ------------------------------------------------------------------------


def test_short_names_resolve_to_their_modules_and_paths_stay_paths():
    assert GAMES["mulle"] == "mulle_env" and GAMES["casino"] == "mulle_env.casino"
    assert resolve_game("mulle") == "mulle_env" and resolve_game("casino") == "mulle_env.casino"
    assert resolve_game("mulle_env") == "mulle_env" and resolve_game(NAMED) == NAMED
    import mulle_env

    assert load_game("mulle") is load_game("mulle_env") is mulle_env
    # Mulle's module predates GAME_NAME: the table names it. A module's own GAME_NAME wins.
    assert game_name(mulle_env, "mulle_env") == "mulle" == game_name(mulle_env, "mulle")
    assert game_name(load_game(NAMED), NAMED) == "takeaway"
    assert game_name(load_game("arena_agents:TakeAway"), "arena_agents:TakeAway") is None


def test_mulle_by_short_name_is_the_default_game(tmp_path):
    out = str(tmp_path / "r.jsonl")
    short, _ = cli.parse_args(["random", "heuristic", "--game", "mulle", "--out", out])
    default, _ = cli.parse_args(["random", "heuristic", "--out", out])
    path, _ = cli.parse_args(["random", "heuristic", "--game", "mulle_env", "--out", out])
    assert short.game == default.game == path.game == "mulle_env"
    ids = {a.game: [t["game_id"] for t in Plan(tuple(a.specs), 4, game=a.game).tasks()] for a in (short, path)}
    assert len(ids) == 1
    assert Plan(("random", "heuristic"), 2, game="mulle").game == "mulle_env"


@pytest.mark.parametrize("name, words", [
    ("casnio", ["no game is named 'casnio' (did you mean 'casino'?)"]),
    ("tarot", ["no game is named 'tarot'"]),  # not "chess": python-chess comes with pettingzoo[classic]
    ("no_such.module", ["no game is named 'no_such.module'"]),
    ("no_such_module:Game", ["no game is named 'no_such_module:Game'"]),
])
def test_an_unknown_game_is_refused_naming_the_known_ones(name, words, capsys, tmp_path):
    out = tmp_path / "r.jsonl"
    err = _error(["random", "heuristic", "--game", name, "--out", str(out)], capsys)
    for w in words + ["the games by short name: casino (mulle_env.casino), mulle (mulle_env)",
                      "or give the import path of a game module"]:
        assert w in err, err
    assert not out.exists()
    with pytest.raises(UnknownGameError):
        load_game(name)


def test_a_game_missing_a_module_of_its_own_is_not_called_unknown(monkeypatch, tmp_path):
    # The game exists but imports something absent: that import error is the game's, said as it is.
    (tmp_path / "needy_game.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_xyz"):
        load_game("needy_game")


# ----- agents at games they do not play ---------------------------------------------------------------


def test_an_agent_at_a_game_it_does_not_play_is_refused_before_any_game(capsys, tmp_path):
    out = tmp_path / "r.jsonl"
    err = _error(["random", "heuristic", "pimc", "--game", NAMED, "--out", str(out)], capsys)
    assert "agents 'heuristic', 'pimc' do not play takeaway" in err, err
    _players(err, "takeaway")
    assert f"mulle-arena --agents --game {NAMED} lists them" in err
    assert not out.exists()  # refused before the results file was made


def test_the_refusal_uses_the_short_name_given(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(GAMES, "takeaway", NAMED)
    err = _error(["random", "greedy", "--game", "takeaway", "--out", str(tmp_path / "r.jsonl")], capsys)
    assert "--game takeaway: agent 'greedy' does not play takeaway" in err, err
    assert "mulle-arena --agents --game takeaway lists them" in err


def test_the_api_refuses_the_same_tournament(tmp_path):
    out = tmp_path / "r.jsonl"
    with pytest.raises(AgentGameError, match="agent 'heuristic' does not play takeaway") as exc:
        run(Plan(("random", "heuristic"), 2, game=NAMED), str(out), ProcessBackend(1), progress=False)
    _players(str(exc.value) + " (mulle-arena", "takeaway")
    assert not out.exists()
    assert seating_refusal(["random", "heuristic"], load_game("mulle"), "mulle") is None


def test_a_game_without_a_short_name_seats_every_agent():
    # No agent can declare a game that has no name, so none is refused (one that cannot play it forfeits).
    assert seating_refusal(["random", "heuristic"], load_game("arena_agents:TakeAway"), "arena_agents:TakeAway") \
        is None


def test_agents_that_play_the_game_play_it_and_their_lines_name_it(tmp_path, monkeypatch):
    out = tmp_path / "r.jsonl"
    plan = Plan(("random", "answer"), 4, game=NAMED, worker_init=INIT)
    done = run(plan, str(out), ProcessBackend(1), progress=False)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert done.played == 4 and all(ln["status"] == "ok" for ln in lines)
    assert {(ln["game"], ln["engine_version"]) for ln in lines} == {(NAMED, "takeaway-2")}
    # By its short name it is the same tournament: nothing is played again.
    monkeypatch.setitem(GAMES, "takeaway", NAMED)
    again = run(Plan(("random", "answer"), 4, game="takeaway", worker_init=INIT), str(out), ProcessBackend(1),
                progress=False)
    assert again.played == 0 and len(again.lines) == 4


def test_resume_never_mixes_the_lines_of_two_games(tmp_path):
    out = tmp_path / "r.jsonl"
    run(Plan(("random", "answer"), 2, game=NAMED, worker_init=INIT), str(out), ProcessBackend(1), progress=False)
    mulle = run(Plan(("random", "answer"), 2, ruleset={"sets": 1}, worker_init=INIT), str(out), ProcessBackend(1),
                progress=False)
    assert mulle.played == 2 and {ln["game"] for ln in mulle.lines} == {"mulle_env"}
    assert any("2 line(s) belong to other tournaments" in n for n in mulle.notes), mulle.notes
    back = run(Plan(("random", "answer"), 2, game=NAMED, worker_init=INIT), str(out), ProcessBackend(1),
               progress=False)
    assert back.played == 0 and {ln["game"] for ln in back.lines} == {NAMED}


# ----- mulle-arena --agents -----------------------------------------------------------------------------


def test_agents_lists_the_agents_of_the_game(capsys):
    assert cli.main(["--agents"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("agents that play mulle (mulle-arena --game mulle SPEC SPEC ...")
    assert all(f"  {name}: " in text for name in agents.available())
    assert cli.main(["--agents", "--game", NAMED]) == 0
    text = capsys.readouterr().out
    assert f"agents that play takeaway (mulle-arena --game {NAMED} SPEC" in text
    listed = [ln.split(":")[0].strip() for ln in text.splitlines()[1:]]
    assert listed == list(agents.available(game="takeaway")) and BUILTINS & set(listed) == {"random"}


def test_agents_of_a_game_without_a_short_name_are_all_of_them(capsys):
    assert cli.main(["--agents", "--game", "arena_agents:TakeAway"]) == 0
    text = capsys.readouterr().out
    assert "has no short name (GAME_NAME), so no agent declares it" in text
    assert len(text.splitlines()) == 1 + len(agents.available()) and "  heuristic: " in text


def test_agents_takes_no_specs_and_refuses_an_unknown_game(capsys):
    assert "--agents lists the agents and plays nothing; give it without agent specs" in _error(
        ["--agents", "random", "heuristic"], capsys)
    assert "no game is named 'casnio'" in _error(["--agents", "--game", "casnio"], capsys)


def test_too_few_specs_names_the_agents_of_the_game(capsys):
    err = _error(["random", "--game", NAMED], capsys)
    assert "give at least 2 agent specs, not 1; agents that play takeaway: " in err and "random" in err
    assert "heuristic" not in err
    err = _error([], capsys)
    assert "give at least 2 agent specs, not 0; agents that play mulle: " in err and "heuristic, " in err


# ----- Casino, the second game ----------------------------------------------------------------------------


def test_casino_by_short_name_or_module_is_one_tournament_whose_lines_name_it(tmp_path, capsys, caplog):
    from mulle_env import casino

    out = tmp_path / "r.jsonl"
    # random is the one built-in that plays Casino so far; "answer" (a random player of the tests) is its opponent.
    argv = ["random", "answer", "--games", "4", "--worker-init", INIT, "--rule", "target_score=11", "--quiet",
            "--out", str(out)]
    assert cli.main([*argv, "--game", "casino"]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 4 and all(ln["status"] == "ok" for ln in lines), lines
    assert {(ln["game"], ln["engine_version"], ln["engine_backend"]) for ln in lines} == {
        ("mulle_env.casino", casino.ENGINE_VERSION, casino.BACKEND)}
    assert all(ln["ruleset"]["target_score"] == 11 and max(ln["scores"]) >= 11 for ln in lines)
    for ln in lines:  # the game's own check of what a Casino game can end with
        casino.check_result({k: ln[k] for k in ("scores", "winner", "sheets")},
                            casino.Ruleset.from_dict(ln["ruleset"]))
    capsys.readouterr()
    assert cli.main([*argv, "--game", "mulle_env.casino"]) == 0  # the module path: the same games, none replayed
    assert len(out.read_text().splitlines()) == 4
    # A Mulle tournament of the same agents on the same file counts none of the Casino lines, and back.
    mulle = ["random", "answer", "--games", "2", "--worker-init", INIT, "--rule", "sets=1", "--quiet",
             "--out", str(out)]
    assert cli.main(mulle) == 0
    assert "4 line(s) belong to other tournaments" in caplog.text
    assert [json.loads(x)["game"] for x in out.read_text().splitlines()][4:] == ["mulle_env"] * 2
    assert cli.main([*argv, "--game", "casino"]) == 0
    assert len(out.read_text().splitlines()) == 6  # nothing of Casino played again


def test_a_mulle_agent_at_casino_is_refused_naming_the_agents_that_play_it(capsys, tmp_path, own_registry):
    import arena_agents

    out = tmp_path / "r.jsonl"
    arena_agents.register_takers()  # every built-in plays Casino: taker plays Mulle (and take-away) only
    mulle_only = (NOT_CASINO or ["taker"])[0]
    err = _error(["random", mulle_only, "--game", "casino", "--out", str(out)], capsys)
    assert f"--game casino: agent '{mulle_only}' does not play casino" in err, err
    _players(err, "casino")
    assert not out.exists()
    # A Mulle agent's check of the rules never sees a Casino ruleset: the game is asked first.
    err = _error(["random", "taker", "--game", "casino", "--rule", "rounds=1", "--out", str(out)], capsys)
    assert "agent 'taker' does not play casino" in err, err


def test_agents_of_casino_are_listed(capsys):
    assert cli.main(["--agents", "--game", "casino"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("agents that play casino (mulle-arena --game casino SPEC SPEC")
    listed = {ln.split(":")[0].strip() for ln in text.splitlines()[1:]}
    assert "random" in listed and listed == set(agents.available(game="casino")) and not set(NOT_CASINO) & listed


# ----- one name, one agent per game ------------------------------------------------------------------


@pytest.fixture()
def own_registry(monkeypatch):
    """The registry as it is, restored after the test (registrations here must not leak into other tests)."""
    from agents import registry

    agents.available()  # the built-ins are in
    monkeypatch.setattr(registry, "_REGISTRY", {k: dict(v) for k, v in registry._REGISTRY.items()})
    monkeypatch.setattr(registry, "_HELP", {k: dict(v) for k, v in registry._HELP.items()})
    return registry


def test_a_name_is_the_agent_of_the_game_asked_for(own_registry):
    import arena_agents

    from agents.heuristic import HeuristicAgent

    agents.register("heuristic", arena_agents.TakeawayTaker, "take-away's winning rule")
    assert type(agents.make("heuristic")) is HeuristicAgent  # without a game: Mulle's, as before
    assert type(agents.make("heuristic", game="mulle")) is HeuristicAgent
    assert type(agents.make("heuristic", game="takeaway")) is arena_agents.TakeawayTaker
    assert agents.plays("heuristic", "takeaway") and agents.plays("heuristic", "mulle")
    assert agents.available(game="takeaway")["heuristic"] == "take-away's winning rule"
    assert agents.available()["heuristic"].startswith("the seeds' priority order")  # Mulle's description
    assert agents.canonical("heuristic", game="takeaway") == "heuristic"
    with pytest.raises(agents.AgentSpecError, match=r"agent 'pimc' does not play takeaway \(it plays casino, mulle\); "
                                                    r"the agents that play takeaway: .*heuristic"):
        agents.make("pimc", game="takeaway")
    with pytest.raises(agents.AgentSpecError, match="unknown agent 'nosuch'; agents that play takeaway: "):
        agents.make("nosuch", game="takeaway")


def test_registering_for_every_game_replaces_every_game_and_games_can_be_given(own_registry):
    import arena_agents

    agents.register("taker", arena_agents.MulleTaker)
    agents.register("taker", arena_agents.TakeawayTaker)
    assert agents.plays("taker", "mulle") and agents.plays("taker", "takeaway") and not agents.plays("taker", "x")
    agents.register("taker", arena_agents.Crasher)  # a random player: every game
    assert type(agents.make("taker", game="takeaway")) is type(agents.make("taker")) is arena_agents.Crasher

    def factory():  # a function declares nothing: its registration says which games
        return arena_agents.TakeawayTaker()

    agents.register("fn", factory, "a function", games=("takeaway",))
    assert agents.plays("fn", "takeaway") and not agents.plays("fn", "mulle")
    for bad in ((), (1,), ("",), 5):
        with pytest.raises(ValueError, match="must be short names of games"):
            agents.register("bad", factory, games=bad)


def test_an_instance_may_narrow_its_games_but_not_widen_them(own_registry):
    class Narrow(Agent):
        """Plays the game its parameter names (as a policy file knows the game it learnt)."""

        def __init__(self, game: str = "mulle") -> None:
            self.games = (game,)

    agents.register("narrow", Narrow, games=("mulle", "casino"))
    assert agents.make("narrow:game=casino", game="casino").games == ("casino",)
    with pytest.raises(agents.AgentSpecError, match="this agent plays casino, not mulle"):
        agents.make("narrow:game=casino")
    with pytest.raises(agents.AgentSpecError, match="does not play chess"):
        agents.make("narrow:game=chess", game="chess")  # the registration decides first


def test_the_arena_seats_the_agent_of_its_game(tmp_path):
    # "taker" is Mulle's random player at Mulle and take-away's winning rule at take-away: the lines say which played.
    out = tmp_path / "r.jsonl"
    init = "arena_agents:register_takers"
    run(Plan(("random", "taker"), 4, game=NAMED, worker_init=init), str(out), ProcessBackend(1), progress=False)
    run(Plan(("random", "taker"), 2, ruleset={"sets": 1}, worker_init=init), str(out), ProcessBackend(1),
        progress=False)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    versions = {(ln["game"], v) for ln in lines for s, v in zip(ln["specs"], ln["agent_versions"]) if s == "taker"}
    assert versions == {(NAMED, "takeaway-taker-1"), ("mulle_env", "mulle-taker-1")}
    takeaway = [ln for ln in lines if ln["game"] == NAMED]
    assert sum(ln["specs"][ln["winner"]] == "taker" for ln in takeaway) >= 3  # the winning rule wins
