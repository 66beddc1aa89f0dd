"""``mulle-play``: play Mulle (or Casino) against any agent in the terminal, or replay a finished game.

    mulle-play --opponent pimc --seed 3            # you are seat 0 (P0)
    mulle-play --game casino --opponent random     # another game, by its short name (terminal.textplay)
    mulle-play --opponent heuristic --seat 1 --rule sets=1 --save game.json
    mulle-play --replay game.json                  # a game record: {"seed", "ruleset", "moves", "specs"}
    mulle-play --replay results.jsonl --game 4 --step

At your turn the screen shows, close to the prompt: the set, deal and deck; the table;
both players' scores; and your hand, one line per card with that card's legal moves,
numbered. A capture says what it will take (and whether it makes a mulle or a tabbe)
before you choose it. Type a number, or a move in the notation (``capture kl 9``,
``build HJ 6 on RU 10 to 16``; case does not matter). Wrong input is explained and asked
again. ``help`` lists every move in the notation and explains the scores; ``quit`` (or
end of input) leaves the game.

A replay shows every position from a fixed seat order with both hands open, the seats
named by their specs. With ``--step`` it waits after each move: Enter goes on, ``b``
goes back a move, ``q`` stops.

``--game casino`` (a short name of :data:`arena.game.GAMES`, or a game module's path) plays
another game on :mod:`terminal.textplay`'s plain screen; with ``--replay`` of a results
file, ``--game N`` picks its N-th game instead (replays are of Mulle games only so far).

Exit status: 0 when the game or replay ends or is left with ``quit`` / end of input;
1 when the agent failed (it raised, or chose an illegal move);
2 for bad arguments or an unreadable replay file; 130 when interrupted with Ctrl-C (at
the prompt or while the agent thinks), after a one-line note and no traceback; 0 with a
one-line note when the program reading its output goes away (``| head``).

Paths are checked before anything is played (:mod:`mulle_env.files`): ``--save`` must name a
file in an existing directory (not a directory, a device or a FIFO), ``--replay`` a regular
file of at most :data:`REPLAY_READ_LIMIT` bytes. An agent that cannot play the chosen rules
(``--rule forced_capture=false --opponent learned``) is refused up front, exit 2.

Input and output are injectable (:func:`main` takes ``input_fn`` and ``out``), so the
tests drive whole games with scripted input. The agent's moves go through the engine's one
game loop (:class:`~mulle_env.engine.GameLoop`), the person's through its ``play``; an agent
that fails or answers an illegal move ends the game with a message naming it (exit 1, the
record still saved). Replays read the engine's :class:`~mulle_env.engine.GameRecord`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import mulle_env as me
from agents.registry import AgentSpecError, make
from arena.game import GAMES, resolve_game
from mulle_env.engine import fallback_notice
from mulle_env.engine.cards import CARD_NAMES, HAND_VALUE
from mulle_env.engine.errors import AgentError, IllegalMoveError
from mulle_env.engine.loop import GameLoop, ruleset_refusal
from mulle_env.engine.rules import DEALS_PER_SET
from mulle_env.engine.state import SHEET_KEYS
from mulle_env.files import JSONInputError, PathError, check_output_path, parse_json, read_bytes
from mulle_env.util.pipes import reader_gone

#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130
#: Exit status when the agent failed mid-game (it raised, or answered an illegal move).
EXIT_AGENT_FAILED = 1
#: The largest replay file read (an arena results file of many thousand games with their moves).
REPLAY_READ_LIMIT = 256 * 1024 * 1024
#: The width the screen is laid out for (an 80-column terminal, one column spare).
WIDTH = 79
#: The game with a screen of its own here (its table, score sheets, what a capture takes) and the only one
#: ``--replay`` shows; every other game of the arena's protocol is played on :mod:`terminal.textplay`'s screen.
OWN_SCREEN = "mulle"
#: The prompt at a person's turn.
PROMPT = "your move (number or move text; help, quit)> "
#: What the score columns mean, for ``help`` and the start of a game.
SCORE_HELP = (
    "Scores: a set scores mulle points + tabbes + bonus. A mulle is a pair of identical cards "
    "captured together; it scores the card's mulle value. A tabbe (1 point) is a capture that "
    "empties the table. Intake points (40 in every set) count only for the bonus: 2 per "
    "intake point above 20. 'game' adds up the sets so far."
)


class ReplayFileError(ValueError):
    """A replay file that cannot be read as a game record."""


class RulesetRefusedError(ValueError):
    """The chosen agent cannot play under the chosen rules (its ``check_ruleset`` said why)."""


class _Quit(Exception):
    """The person left the game (quit or end of input)."""


# ----- rendering -------------------------------------------------------------------


def _cards(faces) -> str:
    return "  ".join(CARD_NAMES[f] for f in faces) or "-"


_NBSP = "\u00a0"  # textwrap does not break at it: an item breaks only after a comma or a "+"


def _wrap(label: str, items: Sequence[str], sep: str = "   ", width: int = WIDTH) -> list[str]:
    """``label`` then ``items`` on as few lines as fit ``width``, continuation lines indented under the items.

    Lines break only between items or, inside an item too long for a line, after a comma
    or a ``+`` (a list of cards); never inside a card name or a move.
    """
    glued = [item.replace(" ", _NBSP).replace("," + _NBSP, ", ").replace("+", "+ ") for item in items]
    text = sep.join(glued)
    lines = textwrap.wrap(text, width, initial_indent=label, subsequent_indent=" " * len(label),
                          break_long_words=False, break_on_hyphens=False, drop_whitespace=True)
    return [line.replace("+ ", "+").replace(_NBSP, " ") for line in lines]


def _prose(text: str, width: int = WIDTH) -> str:
    """``text`` wrapped to ``width`` at spaces, never inside a card name (``RU 10``) or a seat (``P0 (you)``)."""
    glued = re.sub(r"\b(KL|SP|HJ|RU|P[01]) (?=(?:10|[2-9AJQK])\b|\()", lambda m: m.group(1) + _NBSP, text)
    return textwrap.fill(glued, width, break_long_words=False, break_on_hyphens=False).replace(_NBSP, " ")


def seat_labels(specs: Sequence[str | None] | None, person: int | None = None) -> list[str]:
    """How the seats are named on screen: ``P0 (you)``, ``P1 (heuristic)``; a replay names both by spec."""
    labels = []
    for p in (0, 1):
        name = "you" if p == person else (specs[p] if specs is not None and specs[p] else None)
        labels.append(f"P{p}" if name is None else f"P{p} ({name})")
    return labels


def _set_sheet(view, p: int) -> dict:
    # view.scores holds the game so far; this set's part is what the finished sets do not hold.
    done = [s[p] for s in view.sheets]
    if view.over:
        return view.sheets[-1][p] if done else view.scores[p]
    return {k: view.scores[p][k] - sum(s[k] for s in done) for k in SHEET_KEYS}


def _short(labels: Sequence[str], most: int = 17) -> list[str]:
    # Tables keep within 80 columns: a long spec is cut, marked with "~".
    return [x if len(x) <= most else x[: most - 2] + "~)" if x.endswith(")") else x[: most - 1] + "~"
            for x in labels]


def render_scores(view, labels: Sequence[str]) -> list[str]:
    """The score table: game total, then this set's mulles, mulle points, tabbes, intake points and bonus."""
    labels = _short(labels)
    w = max(len(x) for x in labels)
    lines = [f"{'':<{w}} game | this set: mulles  mulle pts  tabbes  intake pts  bonus"]
    for p in (0, 1):
        s = _set_sheet(view, p)
        lines.append(f"{labels[p]:<{w}}{view.scores[p]['total']:>5} |{len(view.mulle[p]):>17}{s['mulle']:>11}"
                     f"{s['tabbe']:>8}{s['intake']:>12}{s['bonus']:>7}")
    return lines


def render_table(view, labels: Sequence[str]) -> list[str]:
    """The loose cards on one line, then one line per build (value, cards, owner, lock)."""
    lines = _wrap("Table  ", [CARD_NAMES[f] for f in view.loose] or ["(no loose cards)"], sep="  ")
    for b in view.builds:
        owner = "nobody's" if b.owner is None else f"P{b.owner}'s"
        cards = "+".join(CARD_NAMES[f] for f in b.cards)
        lock = ", locked" if b.locked else ""
        lines.extend(_wrap(f"       build [{b.value}] ", [cards, f"({owner}{lock})"], sep="  "))
    return lines


def render_header(view, labels: Sequence[str], extra: str = "") -> str:
    """``Set 1 of 2, deal 3 of 6 | deck 48 cards`` plus ``extra``, as a rule line."""
    text = (f"-- Set {view.set_no} of {view.ruleset.sets}, deal {view.deal_no} of {DEALS_PER_SET} "
            f"| deck {view.deck_size} cards{' | ' + extra if extra else ''} ")
    return text + "-" * max(0, WIDTH - len(text))


def _option(move, event, after=None) -> str:
    """A move as an entry of its card's line: ``take KL 7, SP A (1 mulle)``, ``build on RU 10 to 16``.

    ``after`` is the move listed just before on the same card's line: a build after a
    build drops the repeated word ``build`` (``build on KL 7 to 15  5. on SP A to 9``).
    """
    if move.kind == "capture":
        text = f"take {', '.join(CARD_NAMES[f] for f in event.taken)}"
        notes = [f"{event.mulles} mulle{'s' if event.mulles > 1 else ''}"] if event.mulles else []
        notes += ["tabbe"] if event.tabbe else []
        return text + (f" ({', '.join(notes)})" if notes else "")
    if move.kind == "build":
        target = CARD_NAMES[move.on] if move.on is not None else f"[{move.on_build}]"
        return f"{'' if after is not None and after.kind == 'build' else 'build '}on {target} to {move.to}"
    if move.kind == "trotta":
        return f"trotta to {HAND_VALUE[move.card]}"
    return "discard"


def ordered_moves(match: me.Match) -> list:
    """The legal moves in screen order: by the card's place in the hand, then the engine's order."""
    hand = list(match.view(match.to_move).hand)
    return sorted(match.legal_moves(), key=lambda m: hand.index(m.card))


def render_moves(match: me.Match, moves: list, compact: bool = False) -> list[str]:
    """Your hand, one line per card with its numbered moves (what each capture takes, via ``Match.preview``).

    ``compact`` folds a card's several capture choices (``forced_capture=False``) into one
    entry naming their numbers, for positions whose full list would not fit the screen.
    """
    view = match.view(match.to_move)
    owns_build = any(b.owner == view.player for b in view.builds)
    lines = []
    seen = set()
    for card in view.hand:
        if card in seen:  # a card held twice plays the same moves: one line
            continue
        seen.add(card)
        label = f" {CARD_NAMES[card]:<5}{'x2' if view.hand.count(card) > 1 else '  '} "
        mine = [(i, m) for i, m in enumerate(moves, 1) if m.card == card]
        takes = [i for i, m in mine if m.kind == "capture"]
        items, prev = [], None
        if compact and len(takes) > 1:
            items.append(f"{takes[0]}-{takes[-1]}. take: {len(takes)} choices ('help' lists them)")
            mine = [(i, m) for i, m in mine if m.kind != "capture"]
        for i, m in mine:
            items.append(f"{i}. {_option(m, match.preview(m) if m.kind == 'capture' else None, prev)}")
            prev = m
        if not items:
            # Only the trail restriction leaves a card idle: an owner may not discard (RULES.md 4.4).
            items = ["no move now (you own a build, so you may not discard)" if owns_build else "no move now"]
        lines.extend(_wrap(label, items, sep="  "))
    return lines


def render_turn(match: me.Match, labels: Sequence[str], moves: list, height: int = 24) -> str:
    """The whole screen for a person's turn, the prompt included within ``height`` lines whenever it can be."""
    view = match.view(match.to_move)
    lines = [render_header(view, labels, f"your turn; the opponent holds {view.opponent_hand_size}")]
    lines += render_table(view, labels)
    lines += render_scores(view, labels)
    listing = render_moves(match, moves)
    if len(lines) + len(listing) + 1 > height:
        listing = render_moves(match, moves, compact=True)
    return "\n".join(lines + listing)


def render_position(match: me.Match, labels: Sequence[str], extra: str = "") -> str:
    """A position with both hands open (replays): header, table, scores, hands."""
    st = match.state
    view = st.view(st.to_move)
    lines = [render_header(view, labels, extra)]
    lines += render_table(view, labels)
    lines += render_scores(view, labels)
    w = max(len(x) for x in labels) + 1
    for p in (0, 1):
        lines += _wrap(f"{labels[p]:<{w}} hand ", [CARD_NAMES[f] for f in st.hands[p]] or ["-"], sep="  ")
    return "\n".join(lines)


def render_sheets(result, labels: Sequence[str] = ("P0", "P1")) -> str:
    """The full score sheets of a finished game, set by set, and the winner."""
    short = _short(labels)
    w = max(len(x) for x in short) + 1
    cols = (("mulle", "mulle pts", 11), ("tabbe", "tabbes", 8), ("intake", "intake pts", 12), ("bonus", "bonus", 7),
            ("total", "total", 7))
    lines = ["Final score sheets:", f"  {'':<{w + 6}}" + "".join(f"{head:>{n}}" for _, head, n in cols)]

    def row(title: str, p: int, s: dict) -> str:
        return f"  {title:<6}{short[p]:<{w}}" + "".join(f"{s[k]:>{n}}" for k, _, n in cols)

    for i in range(len(result.sheets[0])):
        lines += [row(f"set {i + 1}", p, result.sheets[p][i]) for p in (0, 1)]
    lines += [row("game", p, result.totals[p]) for p in (0, 1)]
    win = result.winner
    lines.append("Draw." if win is None else f"{labels[win]} wins {result.scores[win]} to {result.scores[1 - win]}.")
    return "\n".join(lines)


def render_transition(match: me.Match, event, labels: Sequence[str], before=None) -> list[str]:
    """Lines after a move that ended a deal or a set: the set's result, then the new deal.

    ``before`` is the mover's view before the move; with it, the end of a set also says
    which cards were left on the table and who got them (the last to capture).
    """
    if not event.deal_over:
        return []
    lines = []
    st = match.state
    if event.set_over:
        a, b = st.sheets[-1]
        if event.swept:
            lines.append(f"The cards left on the table ({_cards(event.swept)}) go to {labels[event.swept_to]}, "
                         f"the last to capture.")
        lines.append(f"--- Set {event.set_no} over: {labels[0]} {a['total']}, {labels[1]} {b['total']} "
                     f"(P0/P1: mulle pts {a['mulle']}/{b['mulle']}, tabbes {a['tabbe']}/{b['tabbe']}, "
                     f"intake pts {a['intake']}/{b['intake']}, bonus {a['bonus']}/{b['bonus']}) ---")
    if not event.game_over:
        lines.append(f"--- Set {st.set_no}, deal {st.deal_no}: 8 new cards each; {labels[st.to_move]} leads ---")
    return [_prose(ln) for ln in lines]


def describe(before, move, labels: Sequence[str] | None = None) -> str:
    """One line for ``move`` played in the state ``before``, naming what a capture took.

    The engine computes it (:func:`mulle_env.engine.move_event` on a copy), so the sweep
    of the leftover table to the last capturer at the end of a set is not reported as taken.
    """
    return me.move_event(before.copy(), move).describe(labels)


# ----- interactive play ------------------------------------------------------------


def _listing(moves) -> str:
    return "\n".join(f"  {i:>2}. {m}" for i, m in enumerate(moves, 1))


def parse_choice(text: str, legal: list, st) -> tuple[object | None, str | None]:
    """Read a number or a move string; return ``(move, None)`` or ``(None, why not)``.

    ``legal`` is the numbered list the person sees; ``st`` the state (or match) the move
    is checked against, so the engine says why an illegal move is illegal.
    """
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
    state = st.state if isinstance(st, me.Match) else st
    try:
        state.copy().play(move)
    except me.MulleError as exc:
        return None, str(exc)
    return move, None


def _ask(input_fn: Callable[[str], str], prompt: str) -> str:
    try:
        return input_fn(prompt)
    except EOFError:
        raise _Quit from None


def human_turn(match: me.Match, labels: Sequence[str], input_fn, out: TextIO):
    """Show the position and the moves, read until a legal choice; raise _Quit to leave."""
    moves = ordered_moves(match)
    print(render_turn(match, labels, moves), file=out)
    while True:
        line = _ask(input_fn, PROMPT)
        word = line.strip().lower()
        if word in ("q", "quit", "exit"):
            raise _Quit
        if word in ("", "?", "h", "help"):
            if word == "":
                print(_prose(f"Type a move number (1 to {len(moves)}) or a move, e.g. '{moves[0]}'; 'help' explains."),
                      file=out)
                continue
            print("Your moves in the notation (type the number or the text):\n" + _listing(moves), file=out)
            print(_prose(SCORE_HELP), file=out)
            print("'quit' leaves the game; Ctrl-C leaves at once.", file=out)
            continue
        move, why = parse_choice(line, moves, match)
        if move is not None:
            return move
        print(_prose(f"Not played: {why}"), file=out)


def play_interactive(opponent: str, seed: int, seat: int, ruleset: me.Ruleset, input_fn, out: TextIO,
                     save: Path | None = None) -> int:
    """A full game: the person at ``seat``, the agent ``opponent`` at the other; return the exit status.

    The agent's moves go through :class:`~mulle_env.engine.GameLoop` (asked, checked, every
    agent told); the person's through the loop's ``play``. With ``save``, the game record
    (finished or not) is written there as JSON at the end.

    Raises:
        AgentSpecError: ``opponent`` is no agent spec.
        RulesetRefusedError: The agent cannot play ``ruleset``.
    """
    bot = make(opponent)
    check_agent_ruleset(bot, ruleset)
    specs = ["person", bot.spec] if seat == 0 else [bot.spec, "person"]
    match = me.Match(seed, ruleset, specs)
    seats: list = [None, None]
    seats[1 - seat] = bot
    rngs: list = [None, None]
    rngs[1 - seat] = random.Random(seed)
    loop = GameLoop(match, seats, rngs)
    labels = seat_labels(specs, person=seat)
    print(_prose(f"Mulle, seed {seed}: you are P{seat}, your opponent P{1 - seat} is {bot.spec}. "
                 f"{ruleset.sets} set{'s' if ruleset.sets > 1 else ''} of {DEALS_PER_SET} deals."), file=out)
    print(_prose(SCORE_HELP), file=out)
    status, left = 0, None
    try:
        loop.start()
        while not match.over:
            before = match.view(match.to_move)
            if match.to_move == seat:
                event = loop.play(human_turn(match, labels, input_fn, out))
            else:
                event = loop.step()
            print(_prose(event.describe(labels)), file=out)
            for line in render_transition(match, event, labels, before):
                print(line, file=out)
    except _Quit:
        left = ""
    except KeyboardInterrupt:
        left, status = " (interrupted)", EXIT_INTERRUPTED
    except (AgentError, IllegalMoveError) as exc:
        print("\n" + _prose(f"The game cannot go on: {exc}"), file=out)
        left, status = " (the agent failed)", EXIT_AGENT_FAILED
    if left is not None:
        a, b = match.state.scores()
        print("\n" + _prose(f"Game left{left} at set {match.state.set_no}, deal {match.state.deal_no}, after "
                            f"{len(match.history)} moves; game scores so far {labels[0]} {a}, {labels[1]} {b}."),
              file=out)
    else:
        print("\n" + render_sheets(match.result(), labels), file=out)
    if save is not None:
        save.write_text(json.dumps(match.record().to_dict()) + "\n")
        print(_prose(f"Game record saved to {save} (replay it with: mulle-play --replay {save})."), file=out)
    return status


def check_agent_ruleset(agent, ruleset: me.Ruleset) -> None:
    """Raise :class:`RulesetRefusedError` if ``agent`` cannot play under ``ruleset`` (:func:`ruleset_refusal`)."""
    why = ruleset_refusal(agent, ruleset)
    if why is not None:
        raise RulesetRefusedError(f"agent {getattr(agent, 'spec', agent)!r} cannot play with these rules (--rule): "
                                  f"{why}")


#: The old name of :func:`play_interactive`: a kept compatibility name (CHANGELOG, 0.2.0).
play_game = play_interactive


# ----- replay ----------------------------------------------------------------------


def _not_text(path: Path, exc: UnicodeDecodeError) -> str:
    return f"replay file {str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start})"


def load_record(path: Path, game: int | None = None) -> tuple[me.GameRecord, dict]:
    """Read game ``game`` of ``path``: a ``.json`` record or a line of a ``.jsonl`` results file.

    Returns the engine's :class:`~mulle_env.engine.GameRecord` and the raw JSON object
    (an arena line also says how the game ended: ``status``, ``error``).
    """
    try:
        data = read_bytes(path, "replay file", limit=REPLAY_READ_LIMIT)
    except PathError as exc:
        raise ReplayFileError(str(exc)) from None
    # Game k is the k-th non-blank line. Lines are decoded and parsed one at a time and only
    # the one asked for must be valid: the arena leaves a torn last line when a run is cut off
    # and sets aside a damaged one when it reads the file, neither of which may hide the others.
    lines: list[tuple[int, Any]] = [(no, ln) for no, ln in enumerate(data.splitlines(), 1) if ln.strip()]
    parsed = False
    if path.suffix != ".jsonl":
        try:
            lines = [(1, parse_json(data.decode("utf-8"), str(path), max_bytes=REPLAY_READ_LIMIT))]
            parsed = True
        except (JSONInputError, UnicodeDecodeError) as exc:
            # Else a results file under another name, whose first line is a game; a record written over several
            # lines (its first line "{") is one document, and what is wrong with it is said as such.
            if len(lines) < 2 or not lines[0][1].strip().startswith(b"{\""):
                raise ReplayFileError(_not_text(path, exc) if isinstance(exc, UnicodeDecodeError) else str(exc)) \
                    from None
    if not lines:
        raise ReplayFileError(f"{path}: the file holds no games")
    k = 0 if game is None else game
    if not 0 <= k < len(lines):
        raise ReplayFileError(f"{path}: --game {k} does not exist; the file holds games 0 to {len(lines) - 1}")
    no, raw = lines[k]
    if not parsed:
        others = "; other games may still be read" if len(lines) > 1 else ""
        try:
            raw = parse_json(raw.decode("utf-8"), f"{path}: game {k}", line=no, max_bytes=REPLAY_READ_LIMIT)
        except UnicodeDecodeError as exc:
            raise ReplayFileError(f"{path}: game {k} (line {no}) is not UTF-8 text ({exc.reason} at byte "
                                  f"{exc.start} of the line){others}") from None
        except JSONInputError as exc:
            raise ReplayFileError(f"{exc}{others}") from None
    game = raw.get("game") if isinstance(raw, dict) else None
    if isinstance(game, str) and resolve_game(game) != GAMES[OWN_SCREEN]:
        raise ReplayFileError(f"{path}: game {k} is a game of {game}, and --replay shows games of Mulle only so far "
                              "(that game's own replay(seed, moves, ruleset) rebuilds it)")
    try:
        return me.GameRecord.from_dict(raw), raw
    except me.MulleError as exc:
        raise ReplayFileError(f"{path}: game {k}: {exc}") from None


def replay_record(record: me.GameRecord, input_fn, out: TextIO, step: bool = False, raw: dict | None = None) -> int:
    """Show a recorded game move by move, both hands open; with ``step`` wait after each move.

    The whole record is checked first (every move legal, a recorded result matching),
    so a bad record is refused before anything is shown.
    """
    try:
        final = record.replay()
    except me.MulleError as exc:
        raise ReplayFileError(f"the game record cannot be replayed: {exc}") from None
    labels = seat_labels(record.specs)
    n = len(record.moves)
    who = f" ({labels[0]} vs {labels[1]})" if record.specs else ""
    print(_prose(f"Replay of seed {record.seed}{who}, {n} moves."
                 + (" Enter: next move, b: back, q: stop." if step else "")), file=out)
    match = me.Match(record.seed, record.ruleset, record.specs)
    i = 0
    while i < n:
        print("\n" + render_position(match, labels, f"move {i + 1} of {n}"), file=out)
        before = match.view(match.to_move)
        event = match.play(record.moves[i])
        print(_prose(f"Move {i + 1}: {event.describe(labels)}"), file=out)
        for line in render_transition(match, event, labels, before):
            print(line, file=out)
        i += 1
        if not step:
            continue
        try:
            answer = input_fn("[Enter] next, b back, q stop> ").strip().lower()
        except EOFError:
            answer = "q"
        if answer in ("q", "quit"):
            print("Replay stopped.", file=out)
            return 0
        if answer in ("b", "back"):
            i = max(0, i - 2)  # show the move before the last one again
            match = me.GameRecord(record.seed, record.moves[:i], record.ruleset, record.specs).replay()
    if final.over:
        print("\n" + render_sheets(final.result(), labels), file=out)
    else:
        a, b = final.state.scores()
        print("\n" + _prose(f"The record ends before the game does; game scores so far {labels[0]} {a}, "
                            f"{labels[1]} {b}."), file=out)
    if raw is not None and raw.get("status") in ("forfeit", "aborted") and raw.get("error"):
        print(_prose(f"The arena recorded this game as {raw['status']}: {raw['error']}"), file=out)
    return 0


def replay_game(record, input_fn, out: TextIO, step: bool = False) -> int:
    """Replay a record given as a :class:`GameRecord` or its JSON dict.

    The old entry point, a kept compatibility name (CHANGELOG, 0.2.0): new code calls
    :func:`load_record` and :func:`replay_record`.
    """
    raw = record if isinstance(record, dict) else None
    if raw is not None:
        try:
            record = me.GameRecord.from_dict(raw)
        except me.MulleError as exc:
            raise ReplayFileError(str(exc)) from None
    return replay_record(record, input_fn, out, step, raw)


# ----- command line ----------------------------------------------------------------

#: Flags that only mean something with --replay, and those that only mean something without it (--game means
#: both: a game's number with --replay, the game to play without; _check_flags tells them apart).
_REPLAY_ONLY = (("step", "--step"),)
_PLAY_ONLY = (("opponent", "--opponent"), ("seed", "--seed"), ("seat", "--seat"), ("rule", "--rule"),
              ("save", "--save"))


def build_parser() -> argparse.ArgumentParser:
    """The ``mulle-play`` argument parser."""
    ap = argparse.ArgumentParser(
        prog="mulle-play", description="Play Mulle (or another game: --game casino) against an agent in the "
        "terminal, or replay a game of Mulle.",
        epilog="Exit status: 0 done or left with quit, 2 bad arguments or replay file, 130 interrupted (Ctrl-C).")
    ap.add_argument("--opponent", default=None,
                    help="agent spec, e.g. random, heuristic, greedy, pimc:samples=30 (default heuristic, or random "
                         "at a game heuristic does not play)")
    ap.add_argument("--seed", type=int, default=None, help="deal seed (default: a random one, printed)")
    ap.add_argument("--seat", type=int, choices=(0, 1), default=None,
                    help="your seat; seat 0 leads the first deal (default 0)")
    ap.add_argument("--rule", action="append", default=None, metavar="KEY=VALUE",
                    help="ruleset flag, repeatable, e.g. --rule sets=1 --rule forced_capture=false "
                         "(booleans: true/false, yes/no, on/off, 1/0)")
    ap.add_argument("--save", type=_file_name, metavar="FILE", default=None,
                    help="write the game record (JSON) to FILE when the game ends or is left")
    ap.add_argument("--replay", type=_file_name, metavar="FILE",
                    help="show a finished game (.json record or .jsonl arena results file with --save-games)")
    ap.add_argument("--game", default=None, metavar="GAME",
                    help="the game to play: a short name (mulle, the default, or casino) or a game module's import "
                         "path; with --replay of a .jsonl results file: which game of the file (0-based, default 0)")
    ap.add_argument("--step", action="store_true", default=None,
                    help="with --replay: wait after every move (Enter next, b back, q stop)")
    return ap


def _file_name(text: str) -> Path:
    """A FILE argument as a :class:`Path`; an empty one is refused (``Path("")`` would be the current directory)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path; give a file name")
    return Path(text)


def _check_flags(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse flags that the chosen mode would ignore (argparse-style: exit 2, naming the flag).

    ``--game`` is read here: with ``--replay`` a game's number in the file (an int after
    this), without it the game to play (its short name or module path, kept as text).
    """
    number = args.game is not None and re.fullmatch(r"[0-9]+", args.game) is not None
    if args.replay is None:
        for dest, flag in _REPLAY_ONLY:
            if getattr(args, dest) is not None:
                ap.error(f"{flag} only applies with --replay FILE")
        if number:
            ap.error(f"--game {args.game}: a game's number only applies with --replay FILE; to play another game, "
                     "name it (--game casino)")
    else:
        for dest, flag in _PLAY_ONLY:
            if getattr(args, dest) is not None:
                ap.error(f"{flag} only applies to a new game, not with --replay (the record fixes the game)")
        if args.game is not None and not number:
            ap.error(f"--game with --replay picks a game of the results file by its number (0-based), not "
                     f"{args.game!r}; the record says which game it is")
        args.game = int(args.game) if number else None
    if args.seed is not None and (why := me.seed_problem(args.seed, "--seed")) is not None:
        ap.error(why)  # the one seed domain (docs/engine.md, "Seeds")
    if args.save is not None:
        try:
            check_output_path(args.save, "--save")
        except PathError as exc:
            ap.error(str(exc))


def _play_other_game(ap: argparse.ArgumentParser, args: argparse.Namespace, input_fn: Callable[[str], str],
                     out: TextIO) -> int:
    """``--game G`` (not Mulle): the game loaded and checked, the agent asked whether it plays it, then the game.

    Bad arguments exit 2 like the others: an unknown game (naming the short names), an
    agent that does not play the game (naming those that do), rules the game refuses.
    """
    import agents
    from arena.game import GameProtocolError, UnknownGameError, game_name, make_ruleset, seating_refusal
    from arena.worker import load_game

    from .textplay import play_text_game

    try:
        game = load_game(args.game)
    except (GameProtocolError, UnknownGameError) as exc:
        ap.error(str(exc))
    except Exception as exc:  # an import error of the game itself
        ap.error(f"--game {args.game!r} cannot be imported: {exc}")
    name = game_name(game, args.game) or args.game
    path = resolve_game(args.game)
    opponent = args.opponent or ("heuristic" if agents.plays("heuristic", name) else "random")
    if (why := seating_refusal([opponent], game, args.game)) is not None:
        ap.error(f"--opponent {opponent}: {why}")
    bot = make(opponent, game=game_name(game, args.game))  # the game's agent of that name
    from_strings: Any = getattr(getattr(game, "Ruleset", None), "from_strings", None)
    if args.rule and from_strings is None:
        ap.error(f"--rule needs a game whose Ruleset has from_strings(); --game {args.game!r} has none")
    try:
        ruleset = from_strings(args.rule) if args.rule else make_ruleset(game, {})
    except ValueError as exc:  # the game's InvalidRulesetError says which flag and what it takes
        ap.error(f"--rule: {exc}")
    check_agent_ruleset(bot, ruleset)
    notice = getattr(game, "fallback_notice", None)
    if callable(notice) and (text := notice()):
        print(text, file=out)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    return play_text_game(game, path, name, bot, seed, args.seat or 0, ruleset, input_fn, out, args.save)


def main(argv: list[str] | None = None, input_fn: Callable[[str], str] = input, out: TextIO | None = None) -> int:
    """Entry point of ``mulle-play``; returns the exit status (0 ok, 2 bad arguments or file, 130 Ctrl-C)."""
    out = sys.stdout if out is None else out
    err = out if out is not sys.stdout else sys.stderr
    ap = build_parser()
    args = ap.parse_args(argv)
    _check_flags(ap, args)
    try:
        if args.replay is None and args.game is not None and resolve_game(args.game) != GAMES[OWN_SCREEN]:
            return _play_other_game(ap, args, input_fn, out)
        notice = fallback_notice()  # Mulle's engine: said for Mulle's games, which it plays
        if notice is not None:
            print(notice, file=out)
        if args.replay is not None:
            record, raw = load_record(args.replay, args.game)
            return replay_record(record, input_fn, out, bool(args.step), raw)
        ruleset = me.Ruleset.from_strings(args.rule or [])  # the engine's parser, shared by every command line
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
        return play_interactive(args.opponent or "heuristic", seed, args.seat or 0, ruleset, input_fn, out, args.save)
    except (AgentSpecError, RulesetRefusedError, ReplayFileError, me.MulleError) as exc:
        print(f"mulle-play: error: {exc}", file=err)
        return 2
    except KeyboardInterrupt:  # outside a game (building the agent, a replay): the game loop handles its own
        print("\nmulle-play: interrupted", file=err)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `mulle-play --replay ... | head`): stop quietly (mulle_env.util.pipes). A
        # replay cut short loses nothing, so the status stays 0, as it always was here.
        reader_gone("mulle-play")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
