"""``mulle-play``: play Mulle against any agent in the terminal, or replay a finished game.

    mulle-play --opponent pimc --seed 3            # you are seat 0
    mulle-play --opponent heuristic --seat 1 --rule sets=1
    mulle-play --replay game.json                  # {"seed", "ruleset", "moves", "specs"}
    mulle-play --replay results.jsonl --game 4 --step

At your turn the position is shown as you see it (table, your hand, both players'
captured piles and scores, in the card notation) and the legal moves are numbered.
Type a number or a move in the notation (``capture kl 9``, ``build HJ 6 on RU 10 to
16``; case does not matter). Wrong input is explained and asked again. ``help`` lists
the moves again, ``quit`` (or end of input, or Ctrl-C) leaves the game.

Input and output are injectable (:func:`main` takes ``input_fn`` and ``out``), so the
tests drive whole games with scripted input.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path
from typing import Callable, TextIO

import mulle_env as me
from mulle_env.engine.cards import CARD_NAMES
from mulle_env.engine.render import render_state, render_view
from mulle_env.engine.state import SHEET_KEYS

from .evaluation import move_effect
from .registry import AgentSpecError, make


class ReplayFileError(ValueError):
    """A replay file that cannot be read as a game record."""


class _Quit(Exception):
    """The person left the game (quit, end of input, Ctrl-C)."""


# ----- rendering -------------------------------------------------------------------


def describe(before, move) -> str:
    """One line for ``move`` played in the state ``before``, naming what a capture took.

    The engine computes the effect on the mover's view (:func:`agents.evaluation.move_effect`,
    whose placeholder opponent hand keeps the deal from ending), so the sweep of the
    leftover table to the last capturer at the end of a set is not reported as taken, and
    the last capture of a set is described like any other.
    """
    player = before.to_move
    text = f"P{player} plays {move}"
    if move.kind == "capture":
        eff = move_effect(before.view(player), move)
        text += f", taking {', '.join(CARD_NAMES[f] for f in eff.taken)}"
        if eff.mulles:
            text += f" ({eff.mulles} mulle{'s' if eff.mulles > 1 else ''}!)"
        if eff.tabbe:
            text += " - tabbe!"
    return text


def render_position(view) -> str:
    """The engine's view rendering plus the size of both intake piles."""
    piles = "; ".join(
        f"P{p} intake pile {len(view.intake[p])} card(s), mulle pile {len(view.mulle[p])}" for p in (0, 1)
    )
    return f"{render_view(view)}\nCaptured: {piles}"


def render_sheets(result) -> str:
    """The full score sheets of a finished game, set by set, and the winner."""
    keys = SHEET_KEYS
    lines = ["Final score sheets:", "  " + " " * 12 + "".join(f"{k:>8}" for k in keys)]
    for i in range(len(result.sheets[0])):
        for p in (0, 1):
            s = result.sheets[p][i]
            lines.append(f"  set {i + 1} P{p}   " + "".join(f"{s[k]:>8}" for k in keys))
    for p in (0, 1):
        s = result.totals[p]
        lines.append(f"  game  P{p}   " + "".join(f"{s[k]:>8}" for k in keys))
    w = result.winner
    lines.append("Draw." if w is None else f"P{w} wins {result.scores[w]} to {result.scores[1 - w]}.")
    return "\n".join(lines)


def _move_list(moves) -> str:
    return "\n".join(f"  {i:>2}. {m}" for i, m in enumerate(moves, 1))


# ----- interactive play ------------------------------------------------------------


def parse_choice(text: str, legal: list, st) -> tuple[object | None, str | None]:
    """Read a number or a move string; return ``(move, None)`` or ``(None, why not)``."""
    text = text.strip()
    # ASCII digits only: str.isdigit() accepts "²" or "٣", which int() then rejects.
    if re.fullmatch(r"-?[0-9]+", text):
        k = int(text)
        if 1 <= k <= len(legal):
            return legal[k - 1], None
        return None, f"{k} is not a move number: choose 1 to {len(legal)}"
    try:
        move = me.Move.from_str(text)
    except me.MulleError as exc:
        return None, f"cannot read {text!r} as a move: {exc}"
    try:
        st.copy().play(move)  # the engine says why an illegal move is illegal
    except me.MulleError as exc:
        return None, str(exc)
    return move, None


def _ask(input_fn: Callable[[str], str], prompt: str) -> str:
    try:
        return input_fn(prompt)
    except (EOFError, KeyboardInterrupt):
        raise _Quit from None


def human_turn(st, input_fn, out: TextIO):
    """Show the position, list the moves, read until a legal choice; raise _Quit to leave."""
    p = st.to_move
    legal = st.legal_moves()
    print("\n" + render_position(st.view(p)), file=out)
    print("Your moves:\n" + _move_list(legal), file=out)
    while True:
        line = _ask(input_fn, "your move> ")
        word = line.strip().lower()
        if word in ("q", "quit", "exit"):
            raise _Quit
        if word in ("", "?", "h", "help"):
            if word == "":
                print("Type a move number or a move, e.g. '1' or " f"'{legal[0]}'.", file=out)
            print("Your moves:\n" + _move_list(legal), file=out)
            continue
        move, why = parse_choice(line, legal, st)
        if move is not None:
            return move
        print(f"Not played: {why}", file=out)


def play_game(opponent: str, seed: int, seat: int, ruleset: me.Ruleset, input_fn, out: TextIO) -> int:
    """A full game: the person at ``seat``, the agent ``opponent`` at the other seat."""
    bot = make(opponent)
    bot.reset()
    rng = random.Random(seed)
    st = me.new_game(seed=seed, ruleset=ruleset)
    print(f"Mulle, seed {seed}: you are P{seat}, the opponent P{1 - seat} is {bot.spec!r}.", file=out)
    print("Type a move number or a move; 'help' lists the moves, 'quit' leaves.", file=out)
    where = (st.set_no, st.deal_no)
    try:
        while not st.over:
            p = st.to_move
            if p == seat:
                move = human_turn(st, input_fn, out)
            else:
                move = bot.act(st.view(p), st.legal_moves(), rng)
            before = st.copy()
            st.play(move)
            bot.observe((p, move))
            print(("You: " if p == seat else "Opponent: ") + describe(before, move), file=out)
            if st.over:
                break
            if (st.set_no, st.deal_no) != where:
                if st.set_no != where[0]:
                    a, b = st.sheets[-1]
                    print(f"--- Set {where[0]} over: P0 {a['total']}, P1 {b['total']} ---", file=out)
                print(f"--- Set {st.set_no}, deal {st.deal_no}: new cards ---", file=out)
                where = (st.set_no, st.deal_no)
    except _Quit:
        a, b = st.scores()
        print(f"\nGame left at set {st.set_no}, deal {st.deal_no}; scores so far P0 {a}, P1 {b}.", file=out)
        return 0
    print("\n" + render_sheets(st.result()), file=out)
    return 0


# ----- replay ----------------------------------------------------------------------


def load_record(path: Path, game: int | None = None) -> dict:
    """Read a game record from a ``.json`` object or line ``game`` of a ``.jsonl`` results file."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ReplayFileError(f"cannot read replay file {str(path)!r}: {exc.strerror or exc}") from None
    # Game k is the k-th non-blank line. Lines are parsed one at a time and only the one
    # asked for must be valid: the arena leaves a torn last line when a run is cut off
    # (and skips it when it reads the file), which must not hide the games before it.
    lines = [(no, ln) for no, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    if path.suffix != ".jsonl":
        try:
            lines = [(1, json.loads(text))]
            parsed = True
        except json.JSONDecodeError as exc:
            if len(lines) < 2:  # else: a results file under another name
                raise ReplayFileError(f"{path}: not valid JSON ({exc})") from None
            parsed = False
    else:
        parsed = False
    if not lines:
        raise ReplayFileError(f"{path}: the file holds no games")
    k = 0 if game is None else game
    if not 0 <= k < len(lines):
        raise ReplayFileError(f"{path}: --game {k} does not exist; the file holds games 0 to {len(lines) - 1}")
    no, raw = lines[k]
    if parsed:
        record = raw
    else:
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ReplayFileError(
                f"{path}: game {k} (line {no}) is not valid JSON ({exc}); other games may still be read"
            ) from None
    if not isinstance(record, dict):
        raise ReplayFileError(
            f"{path}: a game record is a JSON object with keys seed, ruleset, moves, not {type(record).__name__}"
        )
    # Arena results lines keep the move count under "moves" and the list, when the run
    # had --save-games, under "move_list"; a hand-written record may use "moves" for the list.
    if isinstance(record.get("move_list"), list):
        record = {**record, "moves": record["move_list"]}
    elif "moves" in record and not isinstance(record["moves"], list):
        raise ReplayFileError(
            f"{path}: game {k} has no move list (results files keep moves only when the arena ran with --save-games)"
        )
    missing = [k for k in ("seed", "moves") if k not in record]
    if missing:
        raise ReplayFileError(
            f"{path}: the game record lacks {', '.join(missing)} (needs seed, moves; optional ruleset, specs)"
        )
    if isinstance(record["seed"], bool) or not isinstance(record["seed"], int):
        raise ReplayFileError(f"{path}: seed must be an integer, not {record['seed']!r}")
    if not isinstance(record["moves"], list) or not all(isinstance(m, str) for m in record["moves"]):
        raise ReplayFileError(f"{path}: moves must be a list of move strings like 'capture KL 9'")
    return record


def replay_game(record: dict, input_fn, out: TextIO, step: bool = False) -> int:
    """Show a recorded game move by move (both hands visible); wait for Enter with ``step``."""
    try:
        ruleset = me.Ruleset.from_dict(record.get("ruleset") or {})
    except me.MulleError as exc:
        raise ReplayFileError(f"bad ruleset in the game record: {exc}") from None
    st = me.new_game(seed=record["seed"], ruleset=ruleset)
    specs = record.get("specs")
    who = f" ({specs[0]} vs {specs[1]})" if isinstance(specs, list) and len(specs) == 2 else ""
    print(f"Replay of seed {record['seed']}{who}, {len(record['moves'])} moves.", file=out)
    for i, text in enumerate(record["moves"], 1):
        print(f"\n{render_state(st)}", file=out)
        before = st.copy()
        try:
            st.play(text)
        except me.MulleError as exc:
            raise ReplayFileError(f"move {i} ({text!r}) cannot be replayed: {exc}") from None
        print(f"Move {i}: {describe(before, st.last_move[1])}", file=out)
        if step:
            try:
                input_fn("[Enter] next move ")
            except (EOFError, KeyboardInterrupt):
                print("\nReplay stopped.", file=out)
                return 0
    if st.over:
        print("\n" + render_sheets(st.result()), file=out)
    else:
        print(f"\nThe record ends before the game does; scores so far {st.scores()}.", file=out)
    return 0


# ----- command line ----------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``mulle-play`` argument parser."""
    ap = argparse.ArgumentParser(prog="mulle-play",
                                 description="Play Mulle against an agent in the terminal, or replay a game.")
    ap.add_argument("--opponent", default="heuristic",
                    help="agent spec, e.g. random, heuristic, greedy, pimc:samples=30 (default heuristic)")
    ap.add_argument("--seed", type=int, default=None, help="deal seed (default: a random one, printed)")
    ap.add_argument("--seat", type=int, choices=(0, 1), default=0,
                    help="your seat; seat 0 leads the first deal (default 0)")
    ap.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                    help="ruleset flag, repeatable, e.g. --rule sets=1 --rule forced_capture=false "
                         "(booleans: true/false, yes/no, on/off, 1/0)")
    ap.add_argument("--replay", type=Path, metavar="FILE",
                    help="show a finished game (.json record or .jsonl results file)")
    ap.add_argument("--game", type=int, default=None,
                    help="with a .jsonl results file: which game (0-based, default 0)")
    ap.add_argument("--step", action="store_true", help="with --replay: wait for Enter after every move")
    return ap


def main(argv: list[str] | None = None, input_fn: Callable[[str], str] = input, out: TextIO | None = None) -> int:
    """Entry point of ``mulle-play``; returns the exit status (0 ok, 2 bad arguments or file)."""
    out = sys.stdout if out is None else out
    args = build_parser().parse_args(argv)
    try:
        if args.replay is not None:
            return replay_game(load_record(args.replay, args.game), input_fn, out, args.step)
        ruleset = me.Ruleset.from_strings(args.rule)  # the engine's parser, shared by every command line
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
        return play_game(args.opponent, seed, args.seat, ruleset, input_fn, out)
    except (AgentSpecError, ReplayFileError, me.MulleError) as exc:
        print(f"mulle-play: error: {exc}", file=out if out is not sys.stdout else sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (e.g. `mulle-play --replay ... | head`): stop quietly, and point
        # stdout at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
