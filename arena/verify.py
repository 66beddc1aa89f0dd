"""``mulle-arena --verify FILE``: replay every saved game of a results file and name each line whose result differs.

A results line is a claim: these agents played this deal and it ended so. The file's own
checks (:func:`arena.results.check_line`, the game's ``check_result``) refuse a line whose
figures contradict each other or no game can end with; they cannot refuse a line that is
self-consistent but false (scores, sheets and winner swapped between the seats, a forged
forfeit). A line that carries its moves (``--save-games``) can be proven: this module deals
the line's seed under its ruleset with the line's game engine, plays every move through the
engine's checks, and compares how the game ended with what the line says. Lines without
moves cannot be proven and are counted as such (docs/arena.md, "What a results file proves").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mulle_env.util.files import check_input_path

from . import results as results_mod
from .game import make_ruleset
from .worker import engine_version, load_game

__all__ = ["Verdict", "check_line_replay", "verify_file"]


@dataclass
class Verdict:
    """What :func:`verify_file` found: lines proven, lines that differ (number, why), lines it could not prove."""

    proven: list[int] = field(default_factory=list)
    differ: list[tuple[int, str]] = field(default_factory=list)
    no_moves: list[int] = field(default_factory=list)
    aborted: list[int] = field(default_factory=list)
    other_engine: list[tuple[int, str]] = field(default_factory=list)
    no_game: list[tuple[int, str]] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no line's result differs from its replay."""
        return not self.differ


def check_line_replay(line: dict[str, Any], game: Any) -> str | None:
    """Why ``line``'s claimed ending is not what its moves give on ``game``'s engine (``None``: they agree).

    ``ok`` lines: the moves must end the game, with the line's scores, winner and sheets.
    ``forfeit`` lines: the moves must leave the game running with the forfeiting seat to move
    (a seat forfeits on its own turn: an illegal move, a crash, a timeout).
    """
    try:
        ruleset = make_ruleset(game, line.get("ruleset"))
    except (ValueError, TypeError) as exc:  # the arena writes only rulesets its game read: this one was not
        return f"its ruleset is not one the game {getattr(game, '__name__', game)} plays: {str(exc)[:200]}"
    state = game.new_game(seed=line["seed"], ruleset=ruleset)
    moves = line["move_list"]
    if not isinstance(moves, list):
        return f"its move_list is not a list of moves but {type(moves).__name__}"
    for i, move in enumerate(moves):
        if state.is_over():
            return f"the game is over after move {i}, but the line lists {len(moves)} moves"
        try:
            state.play(move)
        except ValueError as exc:
            return f"move {i + 1} ({str(move)[:60]!r}) is not legal there: {str(exc)[:200]}"
    if line.get("moves") is not None and line["moves"] != len(moves):
        return f"it says {line['moves']} moves were played but lists {len(moves)}"
    if line["status"] == "forfeit":
        if state.is_over():
            return "it records a forfeit, but its moves end the game"
        if state.to_move != line.get("forfeit"):
            return f"seat {line.get('forfeit')} forfeits, but after its moves seat {state.to_move} is to move"
        return None
    if not state.is_over():
        return f"it records a finished game, but after its {len(moves)} moves the game goes on"
    got = state.result().to_dict()
    for key in ("scores", "winner", "sheets"):
        if key == "sheets" and "sheets" not in got:
            continue
        want = got[key] if key != "scores" else list(got[key])
        if line.get(key) != want:
            return f"its {key} {line.get(key)!r:.120} differ from the replay's {want!r:.120}"
    return None


def verify_file(path: str, progress: Callable[[int, int], None] | None = None) -> Verdict:
    """Replay every line of ``path`` that carries moves (``--save-games``) and compare its ending (module docstring).

    The file is read as a resume reads it (corrupt and invalid lines are set aside and named),
    but never changed.
    """
    # results.load reads a missing file as no games yet (a resume starts there); there is nothing to verify.
    check_input_path(path, "the results file", limit=None)
    loaded = results_mod.load(path, repair=False)
    verdict = Verdict(set_aside=loaded.problems())
    games: dict[str, Any] = {}
    total = len(loaded.lines)
    for k, (no, line) in enumerate(zip(loaded.numbers, loaded.lines)):
        if progress is not None:
            progress(k, total)
        if line.get("status") == "aborted":
            verdict.aborted.append(no)
            continue
        if "move_list" not in line:
            verdict.no_moves.append(no)
            continue
        name = line.get("game") or "mulle_env"
        if name not in games:
            try:
                games[name] = load_game(name)
            except (ImportError, ValueError, TypeError) as exc:  # unknown, not installed here, or no game
                games[name] = str(exc)[:300]
        game = games[name]
        if isinstance(game, str):
            verdict.no_game.append((no, game))
            continue
        here = engine_version(game)
        if line.get("engine_version") not in (None, here):
            verdict.other_engine.append((no, str(line.get("engine_version"))))
            continue
        why = check_line_replay(line, game)
        if why is None:
            verdict.proven.append(no)
        else:
            verdict.differ.append((no, why))
    return verdict


def report(path: str, verdict: Verdict) -> str:
    """The verdict in a few lines, for the terminal."""
    from .tournament import line_numbers

    out = [f"{path}: {len(verdict.proven)} line(s) replayed and proven"]
    if verdict.differ:
        out.append(f"{len(verdict.differ)} line(s) DIFFER from their replay:")
        out += [f"  line {no}: {why}" for no, why in verdict.differ]
    if verdict.no_moves:
        out.append(f"{len(verdict.no_moves)} line(s) carry no moves (played without --save-games) and cannot be "
                   f"proven: line {line_numbers(verdict.no_moves)}")
    if verdict.other_engine:
        out.append(f"{len(verdict.other_engine)} line(s) were played by another engine version and are not "
                   f"replayed: line {line_numbers([no for no, _ in verdict.other_engine])}")
    if verdict.no_game:
        out.append(f"{len(verdict.no_game)} line(s) name a game that cannot be loaded here and are not replayed:")
        by_why: dict[str, list[int]] = {}
        for no, why in verdict.no_game:
            by_why.setdefault(why, []).append(no)
        out += [f"  line {line_numbers(nos)}: {why}" for why, nos in by_why.items()]
    if verdict.aborted:
        out.append(f"{len(verdict.aborted)} aborted line(s) count for nobody: line {line_numbers(verdict.aborted)}")
    out += [f"set aside: {note}" for note in verdict.set_aside]
    return "\n".join(out)
