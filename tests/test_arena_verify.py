"""What a results file can prove (issue 53, item 6): ``mulle-arena --verify`` and repeated lines.

A line that is self-consistent but false (scores, sheets and winner swapped between the seats,
a forged forfeit) passes every check a line can make of itself; with its moves saved
(``--save-games``) the replay proves it false. Both games' lines are checked.
"""

from __future__ import annotations

import json

import pytest

from arena.cli import main as arena_main


def _play(tmp_path, game: str, specs: list[str], name: str = "r.jsonl", save: bool = True) -> str:
    out = str(tmp_path / name)
    args = [*specs, "--games", "4", "--workers", "1", "--seed", "5", "--out", out, "--quiet", "--game", game]
    if game == "casino":
        args += ["--rule", "rounds=1"]
    assert arena_main(args + (["--save-games"] if save else [])) == 0
    return out


def _lines(path: str) -> list[dict]:
    return [json.loads(x) for x in open(path).read().splitlines()]


def _write(path: str, lines: list[dict]) -> None:
    with open(path, "w") as f:
        f.writelines(json.dumps(x) + "\n" for x in lines)


@pytest.mark.parametrize("game", ["mulle", "casino"])
def test_an_honest_file_is_proven_and_a_swapped_result_is_named(tmp_path, game, capsys):
    out = _play(tmp_path, game, ["random", "heuristic"])
    capsys.readouterr()
    assert arena_main(["--verify", out]) == 0
    assert "4 line(s) replayed and proven" in capsys.readouterr().out
    lines = _lines(out)
    forged = lines[1]
    forged["scores"] = forged["scores"][::-1]
    forged["sheets"] = forged["sheets"][::-1]
    if forged["winner"] is not None:
        forged["winner"] = 1 - forged["winner"]
    _write(out, lines)
    assert arena_main(["--verify", out]) == 1
    said = capsys.readouterr().out
    assert "1 line(s) DIFFER" in said and "line 2: its scores" in said, said


def test_a_forged_forfeit_and_a_repeated_line_are_named(tmp_path, capsys, caplog):
    out = _play(tmp_path, "mulle", ["random", "heuristic"])
    lines = _lines(out)
    forged = dict(lines[0], status="forfeit", forfeit=0, winner=1, scores=None, sheets=None, error="made up")
    _write(out, [*lines, forged])
    capsys.readouterr()
    assert arena_main(["--verify", out]) == 1
    assert "line 5: it records a forfeit, but its moves end the game" in capsys.readouterr().out
    # A resume names the repeat (a run never writes one) and that its result differs.
    assert arena_main(["random", "heuristic", "--games", "4", "--workers", "1", "--seed", "5", "--out", out,
                       "--quiet", "--save-games"]) == 0
    said = "record again a game already finished earlier in the file: line 5 (of line 1, another result)"
    assert said in caplog.text


def test_lines_without_moves_are_counted_as_unprovable(tmp_path, capsys):
    out = _play(tmp_path, "mulle", ["random", "heuristic"], save=False)
    capsys.readouterr()
    assert arena_main(["--verify", out]) == 0
    assert "4 line(s) carry no moves (played without --save-games) and cannot be proven" in capsys.readouterr().out


def test_verify_refuses_specs_and_a_missing_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        arena_main(["--verify", str(tmp_path / "r.jsonl"), "random", "heuristic"])
    assert exc.value.code == 2
    assert arena_main(["--verify", str(tmp_path)]) == 2
    assert "--verify" in capsys.readouterr().err


def test_verify_says_a_missing_file_does_not_exist(tmp_path, capsys):
    # A resume reads a missing file as no games yet; a verification has nothing to prove and says so.
    assert arena_main(["--verify", str(tmp_path / "none.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_line_whose_ruleset_or_game_cannot_be_replayed_is_named_not_a_traceback(tmp_path, capsys):
    out = _play(tmp_path, "casino", ["random", "heuristic"])
    lines = _lines(out)
    lines[0]["ruleset"] = {"rounds": "x"}  # no ruleset of the game: the arena never writes one
    lines[1]["game"] = "mulle_env"  # Casino's moves and ruleset under Mulle's engine
    lines[2]["game"] = "no_such_game_module"
    _write(out, lines)
    capsys.readouterr()
    assert arena_main(["--verify", out]) == 1
    said = capsys.readouterr().out
    assert "line 1: its ruleset" in said and "Ruleset.rounds" in said, said
    assert "line 2: its ruleset" in said, said
    assert "1 line(s) name a game that cannot be loaded here" in said and "no_such_game_module" in said, said
    assert "1 line(s) replayed and proven" in said, said
