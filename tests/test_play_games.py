"""mulle-play --game: Casino (any game of the arena's protocol) on the plain screen of terminal.textplay.

Mulle keeps its own screen (tests/test_play_cli.py); ``--game casino`` plays Casino with the
position as the game renders it, numbered moves in the game's notation, typed moves read by
the game's own parser, the agent asked whether it plays the game.
"""

from __future__ import annotations

import io
import json
import random
import re

import pytest

import agents
from terminal.cli import main


class Script:
    """Input: a few scripted lines, then a random listed move number (or, now and then, a listed move typed)."""

    def __init__(self, out: io.StringIO, lines=(), seed: int = 0) -> None:
        self.out, self.lines, self.rng = out, list(lines), random.Random(seed)
        self.turns = self.typed = 0

    def __call__(self, prompt: str) -> str:
        if self.lines:
            return self.lines.pop(0)
        self.turns += 1
        screen = self.out.getvalue().rsplit("Your moves:\n", 1)[-1]
        listed = re.findall(r"(\d+)\. (.+?)(?=\s{3}\d+\. |\n|$)", screen)
        number, text = self.rng.choice(listed)
        if self.rng.random() < 0.3:
            self.typed += 1
            return f"  {text.lower()} "  # the notation is read whatever the case
        return number


def run(argv, lines=(), seed=0):
    out = io.StringIO()
    script = Script(out, lines, seed)
    code = main(argv, input_fn=script, out=out)
    return code, out.getvalue(), script


def flat(text: str) -> str:
    """``text`` with its lines joined: messages are wrapped to the screen, the tests read their words."""
    return " ".join(text.split())


def test_a_whole_game_of_casino_against_random_with_bad_input_in_between():
    bad = ["", "help", "0", "99", "foo bar", "capture XX 3", "trail KL 2 please"]
    code, text, script = run(["--game", "casino", "--opponent", "random", "--seed", "3", "--rule", "rounds=1"], bad)
    assert code == 0, text
    assert flat(text).startswith("Casino, seed 3: you are seat 0, your opponent (seat 1) is random.")
    assert "-- Casino: your turn (seat 0) ---" in text and "Your moves:\n 1. " in text
    assert "seat 1 (random) plays " in text and "seat 0 (you) plays " in text and script.typed > 0
    assert "Not played: 99 is not a move number: choose 1 to" in text
    assert "cannot read 'foo bar' as a move: malformed move" in flat(text)  # the game's own parser says why
    assert "unknown card 'XX 3'" in flat(text)
    assert text.count("Not played:") == 5
    assert "Final score sheets:" in text and re.search(r"seat [01] \((you|random)\) wins \d+ to \d+\.|Draw\.", text)
    sheet = text.split("Final score sheets:\n", 1)[1].splitlines()
    assert sheet[0].startswith("round ") and "big casino" in sheet[0] and "spades" in sheet[0]  # the game's items
    assert [ln.split()[0] for ln in sheet[1:3]] == ["1", "1"] and sheet[3].startswith("Game: ")  # rounds=1
    assert max(map(len, text.splitlines())) <= 79  # an 80-column terminal never wraps a line


def test_the_default_casino_opponent_is_one_that_plays_casino():
    code, text, _ = run(["--game", "casino", "--seed", "1"], ["quit"])
    expected = "heuristic" if agents.plays("heuristic", "casino") else "random"
    assert code == 0 and f"your opponent (seat 1) is {expected}." in flat(text)
    assert "Game left after 0 moves; scores so far seat 0 (you) 0, seat 1" in flat(text)


def test_an_illegal_move_is_explained_by_the_game():
    code, text, _ = run(["--game", "casino", "--seed", "3", "--opponent", "random"], ["trail KL 2", "quit"])
    assert code == 0 and "Not played: illegal move 'trail KL 2' for seat 0: KL 2 is not in the hand of seat 0" in \
        flat(text)


def test_the_screen_is_the_games_view_of_the_seat():
    from mulle_env import casino

    code, text, _ = run(["--game", "casino", "--seed", "5", "--seat", "1", "--opponent", "random"], ["quit"])
    st = casino.new_game(seed=5)
    st.play(text.split("seat 0 (random) plays ", 1)[1].split("\n", 1)[0])
    assert code == 0 and casino.render(st, 1) in text  # what seat 1 may see, as the game renders it
    assert " ".join(casino.render(st, None).splitlines()[2].split()[3:]) not in text  # not seat 0's hand


def test_a_mulle_agent_at_casino_is_refused_naming_the_agents_that_play_it(capsys, monkeypatch):
    # Every built-in plays Casino (netsearch with Casino's nets, issue 51): the tests' taker plays Mulle only.
    import arena_agents

    from agents import registry

    agents.available()  # the built-ins are in; the registration below is undone after the test
    monkeypatch.setattr(registry, "_REGISTRY", {k: dict(v) for k, v in registry._REGISTRY.items()})
    monkeypatch.setattr(registry, "_HELP", {k: dict(v) for k, v in registry._HELP.items()})
    arena_agents.register_takers()
    with pytest.raises(SystemExit) as exc:
        main(["--game", "casino", "--opponent", "taker"], input_fn=lambda p: "quit", out=io.StringIO())
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--opponent taker: agent 'taker' does not play casino" in err, err
    listed = err.split("the agents that play casino: ")[1].strip().split(", ")
    assert "random" in listed and set(listed) == set(agents.available(game="casino"))


@pytest.mark.parametrize("argv, words", [
    (["--game", "casnio"], "no game is named 'casnio' (did you mean 'casino'?); the games by short name: casino"),
    (["--game", "3"], "--game 3: a game's number only applies with --replay FILE; to play another game, name it"),
    (["--replay", "r.jsonl", "--game", "casino"], "--game with --replay picks a game of the results file by its "
                                                  "number (0-based), not 'casino'"),
    (["--game", "casino", "--rule", "no_such_flag=1"], "--rule: "),
])
def test_bad_game_arguments_exit_2(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv, input_fn=lambda p: "quit", out=io.StringIO())
    assert exc.value.code == 2
    assert words in capsys.readouterr().err


def test_mulle_by_its_short_name_is_mulles_own_screen():
    code, text, _ = run(["--game", "mulle", "--seed", "3", "--opponent", "random"], ["quit"])
    assert code == 0 and "Mulle, seed 3: you are P0" in text and "this set: mulles" in text


def test_the_saved_record_is_the_game_and_replays_by_the_game_not_by_mulle_play(tmp_path):
    from mulle_env import casino

    path = tmp_path / "c.json"
    code, text, _ = run(["--game", "casino", "--seed", "4", "--opponent", "random", "--save", str(path)],
                        ["1", "1", "1", "quit"])
    assert code == 0 and f"Game record saved to {path}" in flat(text)
    record = json.loads(path.read_text())
    assert record["game"] == "mulle_env.casino" and record["seed"] == 4 and record["specs"] == ["person", "random"]
    assert len(record["moves"]) == 6 and record["ruleset"] == casino.Ruleset().to_dict()
    casino.replay(record["seed"], record["moves"], record["ruleset"])  # every move legal, in order
    out = io.StringIO()
    assert main(["--replay", str(path)], input_fn=lambda p: "", out=out) == 2
    assert "is a game of mulle_env.casino, and --replay shows games of Mulle only so far" in flat(out.getvalue())


def test_an_agent_that_fails_ends_the_game_with_status_1():
    import arena_agents

    arena_agents.register()  # crasher: a random player that raises at its move `at`
    code, text, _ = run(["--game", "casino", "--seed", "2", "--seat", "1", "--opponent", "crasher:at=2"])
    assert code == 1 and "The game cannot go on: " in text and "boom" in flat(text)
    assert "Game left (the agent failed) after" in flat(text)
