"""A game other than Mulle in the terminal (``mulle-play --game casino``): the position as the game writes it.

Mulle has a screen of its own (:mod:`terminal.cli`: the table, a score table, each card's
moves with what a capture takes). Any other game of the arena's protocol
(:mod:`arena.game`) is played here on a plain screen that needs nothing of the game's
rules: the position is the game's own text (its module's ``render(state, seat)``, which
shows only what that seat may see; ``str(state)`` for a game without one), the legal
moves are listed numbered in the game's notation, and a typed move is read by the game's
own ``Move.from_str`` and checked by its state (``check``, which says why a move is
illegal), so every rule and every message is the game's. The agent's moves go through the
engine's one game loop (:class:`~mulle_env.engine.GameLoop`), the person's through its
``play``, as in Mulle's screen.

``--save FILE`` writes the game's record: ``{"game", "seed", "ruleset", "moves", "specs"}``
(``game`` the module, as the arena's results lines name it); the game's own ``replay(seed,
moves, ruleset)`` rebuilds it.
"""

from __future__ import annotations

import json
import random
import re
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from mulle_env.engine.errors import AgentError, IllegalMoveError
from mulle_env.engine.loop import GameLoop

__all__ = ["PROMPT", "parse_move", "play_text_game", "render_sheets", "render_turn"]

#: The prompt at a person's turn (the same words as Mulle's screen).
PROMPT = "your move (number or move text; help, quit)> "
#: The width the screen is laid out for (an 80-column terminal, one column spare).
WIDTH = 79
#: Exit status after Ctrl-C, and when the agent failed mid-game (as in :mod:`terminal.cli`).
EXIT_INTERRUPTED, EXIT_AGENT_FAILED = 130, 1
_NBSP = "\u00a0"  # textwrap does not break at it: a numbered move stays on one line


class _Quit(Exception):
    """The person left the game (quit or end of input)."""


def _fill(text: str) -> str:
    """A message wrapped to the screen at spaces (a game's long refusal lists every legal move)."""
    return textwrap.fill(text, WIDTH, break_long_words=False, break_on_hyphens=False)


def title(name: str) -> str:
    """How the screen names a game: its short name capitalised (``Casino``), a module path as it is."""
    return name.capitalize() if name.isidentifier() else name


def _fit(line: str) -> list[str]:
    """A line of the game's text on the screen: one longer than it is broken after its commas, never inside an item.

    The continuation lines are indented under the first item (after ``table: ``).
    """
    if len(line) <= WIDTH:
        return [line]
    label = re.match(r"[^,]*?: ", line)
    indent = " " * (len(label.group(0)) if label else 2)
    glued = ", ".join(item.replace(" ", _NBSP) for item in line.split(", "))
    lines = textwrap.wrap(glued, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    return [ln.replace(_NBSP, " ") for ln in lines]


def render_position(game: Any, state: Any, seat: int | None) -> str:
    """The position as the game writes it for ``seat`` (``None``: both hands open): its ``render``, else ``str``.

    Lines wider than the screen are broken after a comma (a table of many cards).
    """
    render = getattr(game, "render", None)
    text = str(render(state, seat)) if callable(render) else str(state)
    return "\n".join(part for line in text.splitlines() for part in _fit(line))


def _numbered(moves: Sequence[Any]) -> list[str]:
    """The moves as ``1. capture KL 10`` entries, on as few lines as fit the screen, never broken inside one."""
    text = "   ".join(f"{i}. {m}".replace(" ", _NBSP) for i, m in enumerate(moves, 1))
    lines = textwrap.wrap(text, WIDTH, initial_indent=" ", subsequent_indent=" ", break_long_words=False,
                          break_on_hyphens=False)
    return [ln.replace(_NBSP, " ") for ln in lines]


def render_turn(game: Any, state: Any, seat: int, name: str, moves: Sequence[Any]) -> str:
    """The screen at a person's turn: a rule line, the game's position for ``seat``, the numbered moves."""
    head = f"-- {title(name)}: your turn (seat {seat}) "
    return "\n".join([head + "-" * max(0, WIDTH - len(head)), render_position(game, state, seat), "Your moves:",
                      *_numbered(moves)])


def parse_move(game: Any, state: Any, text: str, moves: Sequence[Any]) -> tuple[Any | None, str | None]:
    """Read a move number or a move in the game's notation: ``(move, None)``, or ``(None, why not)``.

    The text is parsed by the game's ``Move.from_str`` and checked by the state's
    ``check`` (which returns the legal move and says why another is illegal); a game
    without them is asked whether the text names one of ``moves``.
    """
    text = text.strip()
    # ASCII digits only: str.isdigit() accepts "²" or "٣", which int() then rejects.
    if re.fullmatch(r"-?[0-9]+", text):
        k = int(text)
        if 1 <= k <= len(moves):
            return moves[k - 1], None
        return None, f"{k} is not a move number: choose 1 to {len(moves)}"
    from_str = getattr(getattr(game, "Move", None), "from_str", None)
    move: Any = text
    if from_str is not None:
        try:
            move = from_str(text)
        except ValueError as exc:
            return None, f"cannot read {text!r} as a move: {exc}"
    check = getattr(state, "check", None)
    if check is not None:
        try:
            return check(move), None
        except ValueError as exc:
            return None, str(exc)
    found = next((m for m in moves if m == move or str(m).lower() == str(move).lower()), None)
    return (found, None) if found is not None else (None, f"{text!r} is none of your moves; 'help' lists them")


def render_sheets(result: Any, labels: Sequence[str]) -> str:
    """The finished game's score sheets round by round (the game's own items), the totals and the winner."""
    data = result.to_dict() if hasattr(result, "to_dict") else {}
    sheets = data.get("sheets") or []
    lines = ["Final score sheets:"] if sheets else []
    if sheets:
        keys = list(sheets[0][0])
        heads = [k.replace("_", " ") for k in keys]
        # Long specs are cut (marked "~") so that Casino's seven columns keep within 80 columns.
        short = [x if len(x) <= 15 else x[:13] + "~)" for x in labels]
        w = max(len(x) for x in short) + 1
        lines.append(f"{'round':<6}{'':<{w}}" + "".join(f"{h:>{len(h) + 1}}" for h in heads))
        for r, pair in enumerate(sheets, 1):
            for p in (0, 1):
                lines.append(f"{r:<6}{short[p]:<{w}}"
                             + "".join(f"{pair[p].get(k, ''):>{len(h) + 1}}" for k, h in zip(keys, heads)))
    scores, win = list(result.scores), result.winner
    lines.append(f"Game: {labels[0]} {scores[0]}, {labels[1]} {scores[1]}: "
                 + ("a draw." if win is None else f"{labels[win]} wins {scores[win]} to {scores[1 - win]}."))
    return "\n".join(lines)


def _ask(input_fn: Callable[[str], str], prompt: str) -> str:
    try:
        return input_fn(prompt)
    except EOFError:
        raise _Quit from None


def human_turn(game: Any, state: Any, seat: int, name: str, input_fn: Callable[[str], str], out: TextIO) -> Any:
    """Show the position and the moves, read until a legal choice; raise ``_Quit`` to leave."""
    moves = list(state.legal_moves())
    print(render_turn(game, state, seat, name, moves), file=out)
    while True:
        line = _ask(input_fn, PROMPT)
        word = line.strip().lower()
        if word in ("q", "quit", "exit"):
            raise _Quit
        if word == "":
            print(_fill(f"Type a move number (1 to {len(moves)}) or a move, e.g. '{moves[0]}'; 'help' explains."),
                  file=out)
            continue
        if word in ("?", "h", "help"):
            print("Your moves in the notation (type the number or the text):", file=out)
            print("\n".join(f"  {i:>2}. {m}" for i, m in enumerate(moves, 1)), file=out)
            print("'quit' leaves the game; Ctrl-C leaves at once.", file=out)
            continue
        move, why = parse_move(game, state, line, moves)
        if move is not None:
            return move
        print(_fill(f"Not played: {why}"), file=out)


def _scores(state: Any) -> Any:
    scores = getattr(state, "scores", None)
    return tuple(scores()) if callable(scores) else None


def play_text_game(game: Any, path: str, name: str, bot: Any, seed: int, seat: int, ruleset: Any,
                   input_fn: Callable[[str], str], out: TextIO, save: Path | None = None) -> int:
    """A full game of ``game`` (from ``path``, short name ``name``): the person at ``seat``, ``bot`` at the other.

    ``bot`` is a built agent that plays the game (the caller checked). Returns the exit
    status: 0 when the game ends or is left, 1 when the agent failed, 130 after Ctrl-C. With
    ``save``, the game's record (finished or not) is written there as JSON at the end.
    """
    state = game.new_game(seed=seed, ruleset=ruleset)
    specs = ["person", bot.spec] if seat == 0 else [bot.spec, "person"]
    labels = [f"seat {p} ({'you' if p == seat else bot.spec})" for p in (0, 1)]
    seats: list[Any] = [None, None]
    seats[1 - seat] = bot
    rngs: list[Any] = [None, None]
    rngs[1 - seat] = random.Random(seed)
    loop = GameLoop(state, seats, rngs, record=True)
    print(_fill(f"{title(name)}, seed {seed}: you are seat {seat}, your opponent (seat {1 - seat}) is {bot.spec}. "
                "Type a move's number or the move itself; 'help' lists your moves."), file=out)
    status, left = 0, None
    try:
        loop.start()
        while not loop.over:
            mover, before = loop.to_move, _scores(state)
            if mover == seat:
                loop.play(human_turn(game, state, seat, name, input_fn, out))
            else:
                loop.step()
            print(f"{labels[mover]} plays {loop.moves[-1]}", file=out)
            after = _scores(state)
            if after != before and not loop.over:  # a round (or set) ended: its points are in
                print(f"--- game scores now: {labels[0]} {after[0]}, {labels[1]} {after[1]} ---", file=out)
    except _Quit:
        left = ""
    except KeyboardInterrupt:
        left, status = " (interrupted)", EXIT_INTERRUPTED
    except (AgentError, IllegalMoveError) as exc:
        print("\n" + _fill(f"The game cannot go on: {exc}"), file=out)
        left, status = " (the agent failed)", EXIT_AGENT_FAILED
    if left is not None:
        now = _scores(state)
        so_far = f"; scores so far {labels[0]} {now[0]}, {labels[1]} {now[1]}" if now is not None else ""
        print("\n" + _fill(f"Game left{left} after {loop.count} moves{so_far}."), file=out)
    else:
        print("\n" + render_position(game, state, None), file=out)
        print(render_sheets(state.result(), labels), file=out)
    if save is not None:
        rules = ruleset.to_dict() if hasattr(ruleset, "to_dict") else ruleset
        record = {"game": path, "seed": seed, "ruleset": rules, "moves": loop.moves, "specs": specs}
        save.write_text(json.dumps(record) + "\n")
        print(_fill(f"Game record saved to {save} (the game's replay(seed, moves, ruleset) rebuilds it)."), file=out)
    return status
