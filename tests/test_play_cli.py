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

import agents
import mulle_env as me
from terminal.cli import describe, main

ROOT = Path(__file__).resolve().parents[1]


class Script:
    """An input function: a few scripted lines first, then answers chosen from the last screen.

    Once the script is used up, a turn is answered by a move number from the screen, or
    (about a third of the time) by asking for ``help`` and then typing a listed move in
    lower case (the notation is case-insensitive).
    """

    def __init__(self, out: io.StringIO, lines=(), seed: int = 0) -> None:
        self.out = out
        self.lines = list(lines)
        self.rng = random.Random(seed)
        self.prompts = 0
        self.typed = 0
        self.screens = []

    def __call__(self, prompt: str) -> str:
        self.prompts += 1
        if self.lines:
            return self.lines.pop(0)
        if not prompt.startswith("your move"):
            return ""  # replay --step: Enter
        text = self.out.getvalue()
        if text.rstrip().endswith("Ctrl-C leaves at once."):  # just asked for help: type a listed move
            listed = re.findall(r"^\s+\d+\. (.+)$", text.rsplit("Your moves in the notation", 1)[-1], re.M)
            self.typed += 1
            return "  " + self.rng.choice(listed).lower() + " "
        screen = text.rsplit("\n-- Set ", 1)[-1]
        self.screens.append("-- Set " + screen)
        numbers = [int(n) for n in re.findall(r"(?<![\d-])(\d+)\. ", screen.split("\n", 5)[-1])]
        if self.rng.random() < 0.3:
            return "help"
        return str(self.rng.randint(1, max(numbers)))


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
    assert "Final score sheets:" in text and "set 2 P1 (heuristic)" in text and "game  P0 (you)" in text
    assert re.search(r"P[01] \((you|heuristic)\) wins \d+ to \d+\.|Draw\.", text)
    assert "is not a move number: choose 1 to" in text
    assert "cannot read 'foo bar' as a move" in text
    assert "unknown card" in text
    assert "cannot read '²' as a move" in text and "cannot read '٣' as a move" in text
    assert text.count("Not played:") >= 9
    assert "Table  " in text and "this set: mulles  mulle pts  tabbes  intake pts  bonus" in text
    assert "--- Set 2, deal 1: 8 new cards each" in text and "--- Set 1 over: P0 (you)" in text
    assert "2 per intake point above 20" in text  # the score labels are explained
    assert max(map(len, text.splitlines())) <= 79  # an 80-column terminal never wraps a line


def test_full_game_at_seat_one_against_pimc_typing_moves():
    code, text, script = run(["--opponent", "pimc:samples=2", "--seed", "5", "--seat", "1", "--rule", "sets=1"], seed=1)
    assert code == 0 and "Final score sheets:" in text and "set 2" not in text
    assert script.typed > 3 and "Not played" not in text  # moves typed in lower case from the help list
    assert "you are P1" in text and "P0 (pimc:samples=2) plays" in text and "P1 (you) plays" in text
    assert max(map(len, text.splitlines())) <= 79


def test_every_turn_fits_an_80_by_24_terminal():
    # The screen at a person's turn (position, hand, numbered moves, prompt) must fit 80x24
    # even with 30+ legal moves, or the table and scores scroll away.
    from terminal.cli import ordered_moves, render_turn, seat_labels

    labels = seat_labels(["person", "pimc:samples=30,rollout=greedy"], person=0)
    most = 0
    for rules in ({}, {"forced_capture": False}):
        for seed in range(6):
            m = me.Match(seed, rules)
            rng = random.Random(seed)
            while not m.over:
                moves = ordered_moves(m)
                lines = render_turn(m, labels, moves).splitlines()
                assert len(lines) + 1 <= 24 and max(map(len, lines)) <= 79, "\n".join(lines)
                most = max(most, len(moves))
                m.play(moves[rng.randrange(len(moves))])
    assert most >= 30


def test_a_capture_says_what_it_takes_before_it_is_played():
    # Seed 3: P0 can take HJ 2 with its twin (a mulle) and RU K takes four cards at once.
    code, text, script = run(["--seed", "3", "--opponent", "random"], ["help", "quit"])
    first = text.split("your move", 1)[0]
    m = me.Match(3)
    for move in m.legal_moves():
        if move.kind == "capture":
            taken = ", ".join(str(me.CARDS[f]) for f in m.preview(move).taken)
            assert re.search(rf"^ {move.card}\s.*\d+\. take {taken}", first, re.M), (str(move), first)
    assert "take HJ 2 (1 mulle)" in first
    # help lists the moves in the notation, numbered as on the screen.
    numbered = dict(re.findall(r"(\d+)\. take ([^ ]+ [^ ,(]+)", first))
    assert all(n in text.split("Your moves in the notation", 1)[1] for n in numbered)


def test_forced_capture_off_lists_taken_cards_once():
    # Bug: the move text "capture KL 8 taking KL 7, SP A" was followed by ", taking KL 7, SP A" again.
    code, text, _ = run(["--seed", "3", "--rule", "forced_capture=false", "--rule", "sets=1"], ["1"], seed=2)
    assert code == 0 and "Final score sheets:" in text and max(map(len, text.splitlines())) <= 79
    assert "plays capture KL 8, taking KL 7, SP A\n" in text
    plays = [ln for ln in text.splitlines() if " plays capture " in ln]
    assert plays and not [ln for ln in plays if ln.count("taking") != 1]


def test_illegal_move_is_explained():
    st = me.new_game(seed=3)
    hand = st.hands[0]
    not_in_hand = next(f for f in range(52) if f not in hand)
    move = f"discard {me.CARDS[not_in_hand]}"
    _, text, _ = run(["--seed", "3"], [move, "quit"])
    assert f"Not played: illegal move {move!r} for player 0: {me.CARDS[not_in_hand]} is not in your hand" in text


def test_end_of_input_leaves_cleanly():
    out = io.StringIO()

    def stop(prompt):
        raise EOFError

    assert main(["--seed", "1"], input_fn=stop, out=out) == 0
    assert "Game left at set 1, deal 1" in out.getvalue()


def test_ctrl_c_at_the_prompt_leaves_with_status_130():
    out = io.StringIO()

    def stop(prompt):
        raise KeyboardInterrupt

    assert main(["--seed", "1"], input_fn=stop, out=out) == 130
    assert "Game left (interrupted) at set 1, deal 1" in out.getvalue()


def test_ctrl_c_while_the_agent_thinks(monkeypatch, tmp_path):
    # Bug: Ctrl-C during the agent's move raised a raw KeyboardInterrupt out of main().
    import terminal.cli as play

    class Slow(agents.Agent):
        spec = "slow"

        def act(self, view, legal_moves, rng):
            raise KeyboardInterrupt

    monkeypatch.setattr(play, "make", lambda spec: Slow())
    save = tmp_path / "left.json"
    code, text, _ = run(["--seat", "1", "--seed", "4", "--save", str(save)])
    assert code == 130 and "Game left (interrupted) at set 1, deal 1, after 0 moves" in text
    assert json.loads(save.read_text())["moves"] == []  # what was played is kept


def test_ctrl_c_in_a_real_process_while_pimc_thinks():
    import signal
    import time

    # SIGINT's default handler even if the test runner was started with SIGINT ignored.
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "mulle-play"), "--opponent", "pimc:samples=100000", "--seat", "1",
         "--seed", "2"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    line = ""
    while "score" not in line.lower() and time.monotonic() < deadline:
        line = proc.stdout.readline()  # the intro is printed before the agent's first move
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err + out
    assert "Game left (interrupted)" in out


def test_replay_flags_without_replay_are_refused(capsys):
    for argv, flag in ((["--step"], "--step"), (["--game", "3"], "--game"),
                       (["--replay", "x.json", "--seed", "3"], "--seed"),
                       (["--replay", "x.json", "--opponent", "random"], "--opponent"),
                       (["--replay", "x.json", "--rule", "sets=1"], "--rule"),
                       (["--save", "/no/such/dir/g.json"], "--save")):
        with pytest.raises(SystemExit) as exc:
            main(argv, input_fn=lambda p: "quit", out=io.StringIO())
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert f"error: {flag}" in err, (argv, err)


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
    assert f"Move {len(record['moves'])}: " in text and "(P0 (random) vs P1 (random))" in text
    a, b = st.scores()
    assert "Final score sheets:" in text and (f"wins {max(a, b)} to {min(a, b)}" in text or "Draw." in text)


def test_replay_names_seats_by_spec_with_both_hands_and_a_fixed_order(tmp_path):
    # Bug: replays called the seats "you"/"opponent" and flipped them at every move.
    record, _ = recorded_game(seed=6)
    record["specs"] = ["greedy", "heuristic"]
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    code, text, _ = run(["--replay", str(path)])
    assert code == 0
    assert "you" not in text.lower().replace("your", "") and "opponent" not in text.lower()
    positions = text.split("\n-- Set ")[1:]
    assert len(positions) == len(record["moves"])
    for pos in positions:
        hands = re.findall(r"^(P[01] \(\w+\)) +hand ", pos, re.M)
        assert hands == ["P0 (greedy)", "P1 (heuristic)"], pos
        assert pos.index("\nP0 (greedy)") < pos.index("\nP1 (heuristic)")
    moves = re.findall(r"^Move \d+: (P[01] \(\w+\)) plays", text, re.M)
    st = me.new_game(6, me.Ruleset(sets=1))
    for who, mv in zip(moves, record["moves"]):
        assert who == ("P0 (greedy)" if st.to_move == 0 else "P1 (heuristic)")
        st.play(mv)


def test_replay_jsonl_game_index_and_step(tmp_path):
    games = [recorded_game(seed)[0] for seed in (1, 2)]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(g) for g in games) + "\n")
    code, text, script = run(["--replay", str(path), "--game", "1", "--step"])
    assert code == 0 and "Replay of seed 2" in text
    assert script.prompts == len(games[1]["moves"])
    code, text, _ = run(["--replay", str(path), "--game", "2"])
    assert code == 2 and "games 0 to 1" in text


def test_replay_step_goes_back_and_stops(tmp_path):
    record, _ = recorded_game(seed=1)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(record))
    code, text, script = run(["--replay", str(path), "--step"], ["", "", "b", "b", "b", "", "q"])
    assert code == 0 and "Replay stopped." in text
    shown = [int(n) for n in re.findall(r"^Move (\d+): ", text, re.M)]
    assert shown == [1, 2, 3, 2, 1, 1, 2]
    # Going back shows the same position as the first time.
    first, again = text.split("Move 1: ")[0].rsplit("-- Set ", 1)[1], text.split("Move 1: ")[1].rsplit("-- Set ", 1)[1]
    assert first == again


def test_save_then_replay_the_same_game(tmp_path):
    save = tmp_path / "mine.json"
    code, text, _ = run(["--seed", "8", "--rule", "sets=1", "--opponent", "greedy", "--save", str(save)], seed=3)
    assert code == 0 and f"Game record saved to {save}" in " ".join(text.split())
    data = json.loads(save.read_text())
    assert data["specs"] == ["person", "greedy"] and data["result"] is not None
    final = text.rsplit("Final score sheets:", 1)[1].split("Game record saved")[0]
    code, text, _ = run(["--replay", str(save)])
    assert code == 0 and "(P0 (person) vs P1 (greedy))" in text
    again = text.rsplit("Final score sheets:", 1)[1]
    assert re.findall(r"\d+", again) == re.findall(r"\d+", final)  # the same sheets, seat names aside


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
    assert code == 2 and "game 2, line 3: not valid JSON" in text
    # A bad line in the middle keeps its index: game 2 is still the third line.
    path.write_text(json.dumps(games[0]) + "\n{torn\n" + json.dumps(games[1]) + "\n")
    code, text, _ = run(["--replay", str(path), "--game", "2"])
    assert code == 0 and "Replay of seed 2" in text
    code, text, _ = run(["--replay", str(path), "--game", "1"])
    assert code == 2 and "line 2" in text


def test_replay_reads_a_game_beside_a_line_that_is_not_utf8(tmp_path):
    # The arena sets such a line aside and reads the rest; so does the replay (only the asked line is decoded).
    games = [recorded_game(seed)[0] for seed in (1, 2)]
    path = tmp_path / "results.jsonl"
    path.write_bytes(json.dumps(games[0]).encode() + b"\n\xff\xfe x\n" + json.dumps(games[1]).encode() + b"\n")
    code, text, _ = run(["--replay", str(path), "--game", "2"])
    assert code == 0 and "Replay of seed 2" in text
    code, text, _ = run(["--replay", str(path), "--game", "1"])
    assert code == 2 and "game 1 (line 2) is not UTF-8 text" in text and "other games may still be read" in text
    (tmp_path / "one.json").write_bytes(b"\xff\xfe")
    code, text, _ = run(["--replay", str(tmp_path / "one.json")])
    assert code == 2 and "is not UTF-8 text" in text and "other games" not in text


@pytest.mark.parametrize(
    "content, words",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"moves": []}', "lacks 'seed'"),
        ('{"seed": "x", "moves": []}', "seed must be a whole number"),
        ('{"seed": 1, "moves": [3]}', "moves must be a list of move texts"),
        ('{"seed": 1, "moves": ["build KL 2 on [14] to 16"]}', "move 1 of the record ('build KL 2 on [14] to 16')"),
        ('{"seed": 1, "moves": [], "ruleset": {"colour": 1}}', "unknown ruleset flag"),
        ('{"seed": 1, "moves": ["discard"]}', "move 1"),
        ("", "not valid JSON"),
        # A RecursionError traceback and exit 1 before the bounded reader (issue 31).
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
        ('{"seed": 1, "moves": ' + "[" * 70 + "]" * 70 + "}", "nested more than 64 levels deep"),
    ],
)
def test_malformed_replay_files(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, text, _ = run(["--replay", str(path)])
    assert code == 2 and words in text


def test_missing_replay_file(tmp_path):
    code, text, _ = run(["--replay", str(tmp_path / "nope.json")])
    assert code == 2 and "replay file" in text and "does not exist" in text


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


def test_the_end_of_a_set_says_where_the_table_went(tmp_path):
    record, _ = recorded_game(seed=1)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(record))
    code, text, _ = run(["--replay", str(path)])
    # The engine's own sweep: the table before the last move, plus a discarded last card, minus what it captured.
    st = me.replay(1, record["moves"][:-1], me.Ruleset(sets=1))
    left = [*st.loose, *(f for cards, _owner, _locked in st.builds.values() for f in cards)]
    last = me.Move.from_str(record["moves"][-1])
    event = me.move_event(st.copy(), last)
    if last.kind != "capture":
        left.append(int(last.card))
    for f in event.taken:
        left.remove(f)
    taker = event.player if last.kind == "capture" else st.last_capturer
    names = "  ".join(str(me.CARDS[f]) for f in sorted(left))
    flat = " ".join(text.split())
    assert left and " ".join(f"The cards left on the table ({names}) go to P{taker} (random), the last".split()) in flat


def test_ctrl_c_in_a_replay_exits_130(tmp_path):
    record, _ = recorded_game(seed=2)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(record))
    out = io.StringIO()

    def stop(prompt):
        raise KeyboardInterrupt

    assert main(["--replay", str(path), "--step"], input_fn=stop, out=out) == 130
    assert out.getvalue().rstrip().endswith("mulle-play: interrupted")


# ----- issue 23: paths, rulesets the agent cannot play, the fallback notice; issue 22: the one game loop --------


def test_save_to_an_existing_directory_is_refused_up_front(tmp_path, capsys):
    # Bug: the whole game was played, then lost with an IsADirectoryError traceback.
    prompts = []
    with pytest.raises(SystemExit) as exc:
        main(["--seed", "1", "--save", str(tmp_path)], input_fn=lambda p: prompts.append(p) or "quit",
             out=io.StringIO())
    assert exc.value.code == 2 and not prompts
    err = capsys.readouterr().err
    assert "--save" in err and "is a directory" in err


@pytest.mark.parametrize("flag", ["--save", "--replay"])
def test_paths_that_are_not_regular_files_are_refused(flag, capsys):
    # Bug: --replay /dev/zero hung (or ran out of memory); --save /dev/null played a game for nothing.
    argv = [flag, "/dev/zero" if flag == "--replay" else "/dev/null"]
    out = io.StringIO()
    try:
        code = main(argv, input_fn=lambda p: "quit", out=out)
    except SystemExit as exc:
        code = exc.code
    text = out.getvalue() + capsys.readouterr().err
    assert code == 2 and "character device" in text and "not a regular file" in text


def test_a_replay_file_too_large_is_refused_without_reading_it(tmp_path, monkeypatch):
    import mulle_env.util.files

    path = tmp_path / "big.json"
    path.write_text(json.dumps(recorded_game()[0]))
    monkeypatch.setattr(mulle_env.util.files, "DEFAULT_READ_LIMIT", 10)
    import terminal.cli as play

    monkeypatch.setattr(play, "REPLAY_READ_LIMIT", 10)
    code, text, _ = run(["--replay", str(path)])
    assert code == 2 and "at most 10 bytes" in text


def test_an_agent_that_cannot_play_the_rules_is_refused_up_front():
    # Bug: the game started, then crashed with a traceback at the learned agent's first move.
    code, text, script = run(["--rule", "forced_capture=false", "--opponent", "learned", "--seat", "1"])
    assert code == 2 and script.prompts == 0
    assert "'learned' cannot play with these rules" in text and "forced_capture" in text


def test_the_fallback_notice_is_printed_when_the_core_is_missing(monkeypatch):
    import terminal.cli as play

    monkeypatch.setattr(play, "fallback_notice", lambda: "warning: running on the pure-Python engine (test)")
    code, text, _ = run(["--seed", "1"], ["quit"])
    assert code == 0 and text.startswith("warning: running on the pure-Python engine (test)")
    monkeypatch.setattr(play, "fallback_notice", lambda: None)
    code, text, _ = run(["--seed", "1"], ["quit"])
    assert "warning" not in text


def test_agent_moves_go_through_the_one_game_loop(monkeypatch):
    """An agent's illegal answer is the loop's IllegalMoveError: a clear message, the game kept, exit 1."""
    import terminal.cli as play

    asked = []
    real_commit = me.GameLoop.commit

    def commit(self, seat, answer, legal=None):
        asked.append(seat)
        return real_commit(self, seat, answer, legal)

    monkeypatch.setattr(me.GameLoop, "commit", commit)
    code, text, _ = run(["--seed", "3", "--seat", "1", "--rule", "sets=1"])
    assert code == 0 and asked and set(asked) == {0}

    class Cheat(agents.Agent):
        spec = "cheat"

        def act(self, view, legal_moves, rng):
            return "discard KL 2" if "discard KL 2" not in map(str, legal_moves) else "discard SP 3"

    monkeypatch.setattr(play, "make", lambda spec: Cheat())
    code, text, _ = run(["--seed", "3", "--seat", "1"])
    assert code == 1 and "agent 'cheat' (seat 0) chose an illegal move" in text and "Traceback" not in text
