"""A game in progress with its move history: the one game loop every tool drives.

:class:`Match` holds a :class:`~mulle_env.engine.state.GameState` and the history of
:class:`MoveEvent` s (who played what, what a capture took, whether a deal, set or the
game ended). It never blocks: :meth:`Match.play` applies a move that arrives from
outside (a person at a terminal or a browser), :meth:`Match.step` asks an agent seat for
its move, and :meth:`Match.play_out` runs a whole game between agents. The training
tools, ``mulle-play`` and the live server build on it; :meth:`Match.record` gives the
JSON :class:`~mulle_env.engine.record.GameRecord` they and the arena's results lines
(with ``--save-games``) share.

Agents are duck-typed (anything with ``act(view, legal_moves, rng)``, optionally
``reset()`` and ``observe((player, move))``): the engine knows nothing of the
``agents`` package.

>>> m = Match(seed=7)
>>> event = m.play(m.legal_moves()[0])
>>> event.number, event.player
(1, 0)
>>> m.record().replay().state == m.state
True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .cards import CARD_NAMES, CARDS, Card
from .errors import IllegalMoveError
from .loop import GameLoop
from .moves import Move
from .record import GameRecord
from .ruleset import Ruleset
from .state import GameResult, GameStateBase, PlayerView

__all__ = ["Match", "MoveEvent", "NotYourTurnError", "move_event"]


class NotYourTurnError(IllegalMoveError):
    """A move sent for a seat that is not the one to move."""


@dataclass(frozen=True, slots=True)
class MoveEvent:
    """One move as both players saw it (everything here is public information).

    Attributes:
        number: 1-based move number in the game.
        player: The seat that moved.
        move: The move played.
        taken: The table cards a capture took (empty for other moves).
        mulles: Mulle pairs the capture made.
        tabbe: True if the capture emptied the table.
        set_no: The set the move was played in.
        deal_no: The deal the move was played in.
        deal_over: The move ended its deal (new cards were dealt, or the set ended).
        set_over: The move ended its set (its score sheets are ``state.sheets[-1]``).
        game_over: The move ended the game.
        swept: When the move ended a set: the cards it left on the table, which went to the
            last seat to capture (RULES.md 5.2), sorted; empty otherwise.
        swept_to: The seat those cards went to (``None`` when nothing was swept).
    """

    number: int
    player: int
    move: Move
    taken: tuple[Card, ...] = ()
    mulles: int = 0
    tabbe: bool = False
    set_no: int = 1
    deal_no: int = 1
    deal_over: bool = False
    set_over: bool = False
    game_over: bool = False
    swept: tuple[Card, ...] = ()
    swept_to: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the move as text, cards in the notation."""
        return {
            "number": self.number,
            "player": self.player,
            "move": str(self.move),
            "taken": [CARD_NAMES[f] for f in self.taken],
            "mulles": self.mulles,
            "tabbe": self.tabbe,
            "set": self.set_no,
            "deal": self.deal_no,
            "deal_over": self.deal_over,
            "set_over": self.set_over,
            "game_over": self.game_over,
            "swept": [CARD_NAMES[f] for f in self.swept],
            "swept_to": self.swept_to,
        }

    def describe(self, names: Sequence[str] | None = None) -> str:
        """One line for people, e.g. ``P0 plays capture KL 9, taking HJ 4, SP 5 (1 mulle!)``.

        ``names`` replaces ``P0``/``P1`` with the seats' names. A capture is named by its
        card and followed by everything it took (a ``taking`` capture under
        ``forced_capture=False`` also takes the build of its value, which its notation
        does not list), so the taken cards are listed once, in the same form in every ruleset.
        """
        who = names[self.player] if names is not None else f"P{self.player}"
        if self.move.kind != "capture":
            return f"{who} plays {self.move}"
        taken = ", ".join(CARD_NAMES[f] for f in self.taken)
        text = f"{who} plays capture {CARD_NAMES[self.move.card]}, taking {taken}"
        if self.mulles:
            text += f" ({self.mulles} mulle{'s' if self.mulles > 1 else ''}!)"
        if self.tabbe:
            text += " - tabbe!"
        return text


def _pairs(cards: Iterable[int]) -> int:
    # Every face exists twice, so the mulles of a capture are the faces it holds twice.
    seen: set[int] = set()
    pairs = 0
    for f in cards:
        if f in seen:
            pairs += 1
        seen.add(f)
    return pairs


def move_event(st: GameStateBase, move: Move | str, number: int = 1) -> MoveEvent:
    """Play ``move`` on the state ``st`` and return its :class:`MoveEvent` (numbered ``number``).

    Checked: an illegal move raises and leaves ``st`` as it was. :class:`Match` plays
    every move through this; on a copy (``move_event(st.copy(), move)``) it says what a
    move would do without playing it.
    """
    if isinstance(move, str):
        move = Move.from_str(move)
    p = st.to_move
    set_no, deal_no, sets_done = st.set_no, st.deal_no, len(st.sheets)
    tabbe_before = st.tabbe[p]
    table = [*st.loose, *(f for cards, _, _ in st.builds.values() for f in cards)]
    last_capturer = st.last_capturer
    st.play(move)
    set_over = len(st.sheets) > sets_done
    swept, swept_to = _swept(table, move, p, st.last_taken, last_capturer) if set_over else ((), None)
    taken = st.last_taken if move.kind == "capture" else ()
    if move.kind == "capture":
        # The set's last move scores the set and resets the counters: its tabbe is on the sheet.
        tabbe_now = st.sheets[-1][p]["tabbe"] if set_over else st.tabbe[p]
        tabbe = tabbe_now > tabbe_before
        mulles = _pairs([*taken, int(move.card)])
    else:
        tabbe, mulles = False, 0
    return MoveEvent(
        number=number, player=p, move=st.last_move[1], taken=taken, mulles=mulles, tabbe=tabbe,  # type: ignore[index]
        set_no=set_no, deal_no=deal_no, deal_over=set_over or st.deal_no != deal_no,
        set_over=set_over, game_over=st.over, swept=swept, swept_to=swept_to,
    )


def _swept(table: list[int], move: Move, player: int, taken: Iterable[int], last_capturer: int | None
           ) -> tuple[tuple[Card, ...], int | None]:
    """What a set's last move left on the table (``table`` before it) and the seat that got it (RULES.md 5.2)."""
    left = list(table)
    taker: int | None
    if move.kind == "capture":
        for f in taken:
            left.remove(f)
        taker = player
    else:
        left.append(int(move.card))  # a build or discard lays the card down: it is swept too
        taker = last_capturer
    if not left or taker is None:
        return (), None
    return tuple(CARDS[f] for f in sorted(left)), taker


class Match:
    """A game of Mulle with its history (see the module docstring).

    Args:
        seed: The deal seed; the same seed, ruleset and moves give the same game anywhere.
        ruleset: A :class:`Ruleset` or a dict of flags (default rules when ``None``).
        specs: Optional names of who sits where (agent specs, ``"person:Anna"``), kept in the record.
    """

    def __init__(self, seed: int = 0, ruleset: Ruleset | dict[str, Any] | None = None,
                 specs: Sequence[str | None] | None = None) -> None:
        from . import new_game as backend_new_game  # the active backend (C core when built)

        self.state: GameStateBase = backend_new_game(seed, ruleset)
        self.seed = seed
        self.ruleset: Ruleset = self.state.ruleset
        if specs is not None and len(specs) != 2:
            raise ValueError(f"specs names the two seats, not {specs!r}")
        self.specs: tuple[str | None, str | None] | None = (specs[0], specs[1]) if specs is not None else None
        #: Every move so far, in order.
        self.history: list[MoveEvent] = []

    # ----- the position --------------------------------------------------------------
    @property
    def to_move(self) -> int:
        """The seat to move."""
        return self.state.to_move

    @property
    def over(self) -> bool:
        """True once the last set has been scored."""
        return self.state.over

    def legal_moves(self) -> list[Move]:
        """The legal moves of the seat to move (empty once the game is over)."""
        return self.state.legal_moves()

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know now."""
        return self.state.view(player)

    def result(self) -> GameResult:
        """Score sheets and winner of the finished game (raises while it runs)."""
        return self.state.result()

    @property
    def moves(self) -> list[str]:
        """The move texts played so far."""
        return [str(e.move) for e in self.history]

    # ----- moving ----------------------------------------------------------------------
    def play(self, move: Move | str, player: int | None = None) -> MoveEvent:
        """Check and apply a move from outside (a person); return its event.

        ``player``, when given, must be the seat to move (else :class:`NotYourTurnError`).
        An illegal or malformed move raises the engine's error saying why and leaves the
        game untouched.
        """
        self._check_turn(player)
        event = move_event(self.state, move, len(self.history) + 1)
        self.history.append(event)
        return event

    def preview(self, move: Move | str, player: int | None = None) -> MoveEvent:
        """The event ``move`` would make (what a capture would take, its mulles and tabbe), without playing it.

        Checked like :meth:`play` and played on a copy, so the match is never changed. What
        a capture takes depends only on the table and the card, so a preview tells the
        mover nothing hidden; a tool shows it before a person commits to the move.
        """
        self._check_turn(player)
        return move_event(self.state.copy(), move, len(self.history) + 1)

    def _check_turn(self, player: int | None) -> None:
        st = self.state
        if player is not None and player != st.to_move and not st.over:
            raise NotYourTurnError(f"player {player} is not to move: it is player {st.to_move}'s turn")

    def is_over(self) -> bool:
        """True once the last set has been scored (the game protocol's spelling of :attr:`over`)."""
        return self.state.over

    def step(self, agent: Any, rng: random.Random | None) -> MoveEvent:
        """Ask ``agent`` (the seat to move) for its move from that seat's view, and play it.

        One move of :class:`~mulle_env.engine.loop.GameLoop` with ``agent`` in the seat to
        move: the answer (a move or its text) is checked, and an illegal, malformed or
        missing one raises :class:`IllegalMoveError` naming the agent and the seat; the game
        is left as it was. Nobody is told the move (``observe``): the caller decides who
        hears it; :meth:`play_out` and :class:`~mulle_env.engine.loop.GameLoop` tell every agent.
        """
        if self.over:
            raise IllegalMoveError(f"the game is over (final scores {self.state.scores()}); no seat is to move")
        p = self.state.to_move
        seats: list[Any] = [None, None]
        seats[p] = agent
        rngs: list[random.Random | None] = [None, None]
        rngs[p] = rng
        loop = GameLoop(self, seats, rngs)
        seat, answer, legal = loop.choose()
        event: MoveEvent = loop.commit(seat, answer, legal, tell=False)
        return event

    def play_out(self, agents: Sequence[Any], rngs: Sequence[random.Random | None],
                 on_event: Callable[[MoveEvent], None] | None = None
                 ) -> GameResult:
        """Play the game to its end with ``agents[p]`` in seat ``p``; return the result.

        The game loop (:class:`~mulle_env.engine.loop.GameLoop`): each distinct agent is
        reset first and hears every move through ``observe``; ``on_event`` is called after
        each move. One agent may sit in both seats.
        """
        loop = GameLoop(self, agents, rngs)
        loop.start()
        loop.run(on_move=on_event)
        return self.state.result()

    # ----- records ---------------------------------------------------------------------
    def record(self) -> GameRecord:
        """The game so far as a :class:`GameRecord` (with the result once it is over)."""
        result = self.state.result().to_dict() if self.state.over else None
        return GameRecord(self.seed, tuple(self.moves), self.ruleset, self.specs, result)

    @classmethod
    def from_record(cls, record: GameRecord | dict[str, Any]) -> Match:
        """Replay a record (or its JSON dict) into a match; every move is checked."""
        if not isinstance(record, GameRecord):
            record = GameRecord.from_dict(record)
        return record.replay()

    def __repr__(self) -> str:
        return f"<Match seed {self.seed}, {len(self.history)} moves, {self.state!r}>"

