"""mulle-play driven by scripted input: full games, bad input, quitting, replays."""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import position

import mulle_env as me
from agents.play import describe, main

ROOT = Path(__file__).resolve().parents[1]


class Script:
    """An input function: a few scripted lines first, then answers chosen from the last move list.

    ``mode`` picks how a turn is answered once the script is used up: by number, or by
    typing the first listed move in lower case (the notation is case-insensitive).
    """

    def __init__(self, out: io.StringIO, lines=(), seed: int = 0) -> None:
        self.out = out
        self.lines = list(lines)
        self.rng = random.Random(seed)
        self.prompts = 0

    def __call__(self, prompt: str) -> str:
        self.prompts += 1
        if self.lines:
            return self.lines.pop(0)
        if not prompt.startswith("your move"):
            return ""  # replay --step: Enter
        listed = re.findall(r"^\s+(\d+)\. (.+)$", self.out.getvalue().rsplit("Your moves:", 1)[-1], re.M)
        k = self.rng.randrange(len(listed))
        if self.rng.random() < 0.3:
            return "  " + listed[k][1].lower() + " "
        return listed[k][0]


def run(argv, lines=(), seed=0):
    out = io.StringIO()
    script = Script(out, lines, seed)
    code = main(argv, input_fn=script, out=out)
    return code, out.getvalue(), script


def test_full_game_with_bad_input_in_between():
    # "²" and "٣" pass str.isdigit() (and int("٣") is 3): only ASCII numbers are move numbers.
    bad = ["", "help", "0", "999", "-3", "²", "٣", "foo bar", "capture XX 9", "discard RU 10 please",
           "build KL 2 on KL 3 to 9"]
    code, text, script = run(["--opponent", "heuristic", "--seed", "3"], bad)
    assert code == 0
    assert "Final score sheets:" in text and "set 2 P1" in text and "game  P0" in text
    assert re.search(r"P[01] wins \d+ to \d+\.|Draw\.", text)
    assert "is not a move number: choose 1 to" in text
    assert "cannot read 'foo bar' as a move" in text
    assert "unknown card" in text
    assert "cannot read '²' as a move" in text and "cannot read '٣' as a move" in text
    assert text.count("Not played:") >= 9
    assert "Your hand:" in text and "Captured: P0 intake pile" in text and "Table:" in text
    assert "--- Set 2, deal 1: new cards ---" in text and "--- Set 1 over" in text


def test_full_game_at_seat_one_against_pimc_typing_moves():
    code, text, _ = run(["--opponent", "pimc:samples=2", "--seed", "5", "--seat", "1", "--rule", "sets=1"], seed=1)
    assert code == 0 and "Final score sheets:" in text and "set 2" not in text
    assert "you are P1" in text and "Opponent: P0 plays" in text


def test_illegal_move_is_explained():
    st = me.new_game(seed=3)
    hand = st.hands[0]
    not_in_hand = next(f for f in range(52) if f not in hand)
    move = f"discard {me.CARDS[not_in_hand]}"
    _, text, _ = run(["--seed", "3"], [move, "quit"])
    assert f"Not played: illegal move {move!r} for player 0: {me.CARDS[not_in_hand]} is not in your hand" in text


@pytest.mark.parametrize("exc", [EOFError, KeyboardInterrupt])
def test_end_of_input_and_ctrl_c_leave_cleanly(exc):
    out = io.StringIO()

    def stop(prompt):
        raise exc

    assert main(["--seed", "1"], input_fn=stop, out=out) == 0
    assert "Game left at set 1, deal 1" in out.getvalue()


def test_quit_command():
    code, text, _ = run(["--seed", "1"], ["1", "QUIT"])
    assert code == 0 and "Game left" in text


def test_bad_opponent_spec_and_rule():
    code, text, _ = run(["--opponent", "nobody"])
    assert code == 2 and "unknown agent 'nobody'" in text and "pimc" in text
    code, text, _ = run(["--rule", "colour=1"])
    assert code == 2 and "unknown ruleset flag" in text
    code, text, _ = run(["--rule", "sets"])
    assert code == 2 and "key=value" in text
    code, text, _ = run(["--rule", "sets=0"])
    assert code == 2 and "sets" in text
    code, text, _ = run(["--rule", "forced_capture=maybe"])
    assert code == 2 and "forced_capture" in text and "maybe" in text


def test_rules_use_the_engine_parser():
    # The engine's Ruleset.from_strings: yes/no/on/off/1/0 read as booleans.
    code, text, _ = run(["--seed", "2", "--rule", "sets=1", "--rule", "forced_capture=off",
                         "--rule", "mulle_hand_values=YES"], ["quit"])
    assert code == 0 and "Game left at set 1" in text


def test_describe_the_last_capture_of_a_game_and_of_a_set():
    # P0's HJ 7 mulls the loose HJ 7; the engine then sweeps the leftover KL K to the last
    # capturer, which is not what the capture took. With two sets the first set ends here.
    for sets in (1, 2):
        st = position("HJ 7", "", ["HJ 7", "KL K"], ruleset=me.Ruleset(sets=sets))
        move = st.legal_moves()[0]
        assert describe(st, move) == "P0 plays capture HJ 7, taking HJ 7 (1 mulle!)"
        st.play(move)
        assert st.set_no == 2 if sets == 2 else st.over


def recorded_game(seed=9, sets=1):
    rules = me.Ruleset(sets=sets)
    st = me.new_game(seed=seed, ruleset=rules)
    rng = random.Random(seed)
    moves = []
    while not st.over:
        m = st.legal_moves()[rng.randrange(len(st.legal_moves()))]
        moves.append(str(m))
        st.play(m)
    return {"seed": seed, "ruleset": rules.changes(), "moves": moves, "specs": ["random", "random"]}, st


def test_replay_json(tmp_path):
    record, st = recorded_game()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    code, text, _ = run(["--replay", str(path)])
    assert code == 0
    assert f"Move {len(record['moves'])}: " in text and "(random vs random)" in text
    a, b = st.scores()
    assert "Final score sheets:" in text and (f"wins {max(a, b)} to {min(a, b)}" in text or "Draw." in text)


def test_replay_jsonl_game_index_and_step(tmp_path):
    games = [recorded_game(seed)[0] for seed in (1, 2)]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(dict(g, result={"scores": [0, 0]})) for g in games) + "\n")
    code, text, script = run(["--replay", str(path), "--game", "1", "--step"])
    assert code == 0 and "Replay of seed 2" in text
    assert script.prompts == len(games[1]["moves"])
    code, text, _ = run(["--replay", str(path), "--game", "2"])
    assert code == 2 and "games 0 to 1" in text


def test_replay_an_arena_results_file(tmp_path):
    # The arena writes the move count as "moves" and, with --save-games, the list as "move_list".
    record, _ = recorded_game(seed=4)
    line = dict(record, moves=len(record["moves"]), move_list=record["moves"])
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(line) + "\n")
    code, text, _ = run(["--replay", str(path), "--game", "0"])
    assert code == 0 and f"Move {len(record['moves'])}: " in text
    without = dict(line)
    del without["move_list"]
    path.write_text(json.dumps(without) + "\n")
    code, text, _ = run(["--replay", str(path)])
    assert code == 2 and "--save-games" in text


def test_replay_skips_a_torn_line_it_is_not_asked_for(tmp_path):
    games = [recorded_game(seed)[0] for seed in (1, 2)]
    path = tmp_path / "results.jsonl"
    # What a cut-off arena run leaves: whole lines, then part of one.
    path.write_text("\n".join(json.dumps(g) for g in games) + "\n" + json.dumps(games[0])[:40])
    code, text, _ = run(["--replay", str(path), "--game", "0"])
    assert code == 0 and "Replay of seed 1" in text
    code, text, _ = run(["--replay", str(path), "--game", "1"])
    assert code == 0 and "Replay of seed 2" in text
    code, text, _ = run(["--replay", str(path), "--game", "2"])
    assert code == 2 and "game 2 (line 3) is not valid JSON" in text
    # A bad line in the middle keeps its index: game 2 is still the third line.
    path.write_text(json.dumps(games[0]) + "\n{torn\n" + json.dumps(games[1]) + "\n")
    code, text, _ = run(["--replay", str(path), "--game", "2"])
    assert code == 0 and "Replay of seed 2" in text
    code, text, _ = run(["--replay", str(path), "--game", "1"])
    assert code == 2 and "line 2" in text


@pytest.mark.parametrize(
    "content, words",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"moves": []}', "lacks seed"),
        ('{"seed": "x", "moves": []}', "seed must be an integer"),
        ('{"seed": 1, "moves": [3]}', "list of move strings"),
        ('{"seed": 1, "moves": ["build KL 2 on [14] to 16"]}',
         "move 1 ('build KL 2 on [14] to 16') cannot be replayed"),
        ('{"seed": 1, "moves": [], "ruleset": {"colour": 1}}', "unknown ruleset flag"),
        ("", "not valid JSON"),
    ],
)
def test_malformed_replay_files(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, text, _ = run(["--replay", str(path)])
    assert code == 2 and words in text


def test_missing_replay_file(tmp_path):
    code, text, _ = run(["--replay", str(tmp_path / "nope.json")])
    assert code == 2 and "cannot read replay file" in text


def test_unfinished_record_is_shown():
    record, _ = recorded_game()
    record["moves"] = record["moves"][:5]
    path = Path(__import__("tempfile").mkdtemp()) / "short.json"
    path.write_text(json.dumps(record))
    code, text, _ = run(["--replay", str(path)])
    assert code == 0 and "ends before the game does" in text


def test_launcher_runs_from_a_checkout(tmp_path):
    record, _ = recorded_game()
    path = tmp_path / "g.json"
    path.write_text(json.dumps(record))
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "mulle-play"), "--replay", str(path)],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0 and "Final score sheets:" in proc.stdout
