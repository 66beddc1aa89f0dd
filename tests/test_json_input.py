"""The one bounded JSON reader (``mulle_env.util.files.parse_json``) and the readers of outside JSON that use it.

A results line, a game record, policy metadata, an upload to the live server, a stored game
and a training record file nested thousands deep (or not UTF-8, or not JSON) get one line
naming the file and line, never a ``RecursionError``; a results line it refuses is set aside
and the run goes on (issue 31, item 1).
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from mulle_env.util.files import MAX_JSON_DEPTH, JSONInputError, parse_json, read_json

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("text, reason", [
    (DEEP, "nested more than 64 levels deep"),
    ("[" * 100_000, "nested more than 64 levels deep"),  # deep and unfinished: still the depth
    ('{"a":' * 65 + "1" + "}" * 65, "nested more than 64 levels deep"),
    (b"[1, \xff]", "not UTF-8 text"),
    ("{not json", "not valid JSON"),
    ("", "not valid JSON"),
])
def test_refusals_name_the_source_and_what_is_wrong(text, reason):
    with pytest.raises(JSONInputError) as exc:
        parse_json(text, "x.jsonl", line=7)
    assert str(exc.value).startswith("x.jsonl, line 7: ") and reason in str(exc.value)
    assert exc.value.line == 7 and reason in exc.value.reason
    assert isinstance(exc.value, ValueError)


def test_the_depth_limit_is_exact_and_brackets_in_strings_do_not_count():
    at_limit = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_json(at_limit) is not None
    with pytest.raises(JSONInputError):
        parse_json("[" + at_limit + "]")
    # Quotes, escaped quotes and backslashes inside strings do not confuse the count.
    inside = json.dumps(["[" * 200, '\\"[[[', "\\", {"k": "{{{{" * 50}])
    assert parse_json(inside) == json.loads(inside)
    assert parse_json("[[1]]", max_depth=2) == [[1]]
    with pytest.raises(JSONInputError, match="nested more than 1 levels"):
        parse_json("[[1]]", max_depth=1)


def test_a_syntax_error_in_a_whole_file_names_its_own_line(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{\n  "a": 1,\n  "b": ?\n}\n')
    with pytest.raises(JSONInputError) as exc:
        read_json(path, "the record")
    assert exc.value.line == 3 and "the record" in str(exc.value) and str(path) in str(exc.value)
    path.write_text("{\n" + '"a":' + "[" * 100 + "]" * 100 + "}")
    with pytest.raises(JSONInputError) as exc:
        read_json(path, "the record")
    assert exc.value.line == 2


def test_size_is_bounded():
    with pytest.raises(JSONInputError, match="at most 10 are read"):
        parse_json(b"[" + b"1," * 10 + b"1]", max_bytes=10)
    with pytest.raises(JSONInputError, match="at most 10 are read"):
        parse_json("[" + "1," * 10 + "1]", max_bytes=10)
    assert parse_json("[1,2]", max_bytes=10) == [1, 2]


def test_a_deep_results_line_is_set_aside_with_its_line_and_reason_and_the_run_goes_on(tmp_path):
    from arena import Plan, ProcessBackend, run
    from arena.results import load

    plan = Plan(("random", "heuristic"), 2, ruleset={"sets": 1})
    out = tmp_path / "r.jsonl"
    first = run(plan, str(out), ProcessBackend(1), progress=False)
    good = out.read_text().splitlines()
    out.write_text(good[0] + "\n" + DEEP + "\n" + good[1] + "\n" + "[1, 2]\n")
    loaded = load(str(out), repair=False)
    assert loaded.corrupt == [2, 4] and loaded.numbers == [1, 3]
    assert "nested more than 64 levels deep" in loaded.corrupt_why[2]
    notes = " ".join(loaded.problems())
    assert "line 2: nested more than 64" in notes and "line 4: a JSON list" in notes
    again = run(plan, str(out), ProcessBackend(1), progress=False)  # mulle-arena aborted here before
    assert again.played == 0 and again.skipped == 2 == len(first.lines)
    assert any("line 2: nested more than 64" in n for n in again.notes)


def test_the_game_store_refuses_a_hand_edited_row_with_a_store_error(tmp_path):
    pytest.importorskip("aiohttp")
    import random
    import time

    import agents
    from live.store import FinishedGame, GameStore, StoreError
    from mulle_env.engine.match import Match

    db = tmp_path / "live.db"
    store = GameStore(db)
    m = Match(3, {"sets": 1}, ["person:Anna", "random"])
    m.play_out([agents.make("random"), agents.make("random")], [random.Random(1), random.Random(2)])
    players = (((1, "Anna", "person"),), ((1, "random", "agent"),))
    gid = store.add(FinishedGame("t", m.record(), players, time.time()))
    con = sqlite3.connect(db)
    con.execute("UPDATE games SET record = ? WHERE id = ?", (DEEP, gid))
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=f"stored game {gid}, line 1: nested more than 64"):
        store.game(gid)
    with pytest.raises(StoreError, match=f"stored game {gid}, line 1: nested more than 64"):
        list(store.export())
    store.close()


def test_training_record_readers_name_file_and_line(tmp_path):
    from training.records import RecordsError, read_records

    path = tmp_path / "games.jsonl"
    path.write_text('{"seed": 1, "moves": []}\n' + DEEP + "\n")
    with pytest.raises(RecordsError, match=r"games.jsonl', line 2: nested more than 64|games.jsonl, line 2: nested"):
        list(read_records(path))


def test_positions_from_json_use_the_same_reader():
    import mulle_env as me

    with pytest.raises(me.InvalidPositionError, match="the position, line 1: nested more than 64 levels deep"):
        me.GameState.from_json(DEEP)
    with pytest.raises(me.InvalidPositionError, match="the position: not UTF-8 text"):
        me.GameState.from_json(b"\xff")
    st = me.new_game(seed=3)
    assert me.GameState.from_json(st.to_json()) == st


def test_an_integer_longer_than_python_reads_is_a_refusal_naming_its_line():
    # Python's own ValueError ("Exceeds the limit (4300 digits) ...") escaped the reader (issue 53, item 3).
    text = '{"a": 1,\n "b": ' + "9" * 5000 + "}"
    with pytest.raises(JSONInputError) as exc:
        parse_json(text, "results.jsonl")
    assert exc.value.line == 2 and "more than 4,300 digits" in str(exc.value)
    with pytest.raises(JSONInputError, match="line 7"):
        parse_json(text, "results.jsonl", line=7)


def test_a_position_with_a_huge_integer_is_an_invalid_position():
    import mulle_env as me
    from mulle_env import casino

    bad = '{"to_move": 0, "hands": [[], []], "table": [], "seed": ' + "1" * 5000 + "}"
    for cls in (me.GameState, casino.GameState):
        with pytest.raises(me.InvalidPositionError, match="digits"):
            cls.from_json(bad)


def test_a_results_line_with_a_huge_integer_is_set_aside_not_fatal(tmp_path, caplog):
    # Every resume of such a file ended in a traceback (exit 1); now the line is set aside and its game played again.
    from arena.results import load

    path = tmp_path / "r.jsonl"
    path.write_text('{"status": "ok", "seed": ' + "9" * 5000 + "}\n")
    load(str(path))
    assert "line 1: a number of more than 4,300 digits" in caplog.text
