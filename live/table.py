"""A named table: its game, its lobby, its spectators, and the order of what everyone is told.

:class:`Table` runs one match of its game at a time (:mod:`live.games`: Mulle or Casino), advanced by the engine's
one game loop (:class:`~mulle_env.engine.loop.GameLoop`), and leaves each other concern to its own
home: the seats, their holders and the grace periods to :class:`~live.seats.Seating`; the agents'
moves (the pool, the time limit, the arena's blame rules) to :class:`~live.turns.AgentTurns`; the
game history to :class:`~live.recorder.GameRecorder`; which tables exist to
:class:`~live.lobby.Lobby`. What stays here is the table's own: the phase (lobby, playing,
saving), the lobby actions, a person's move, and the notifications in their documented order.
"""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mulle_env.casino.drops import Pile, drop_choices, drop_refusal
from mulle_env.engine.cards import CARD_NAMES
from mulle_env.engine.errors import AgentError, MulleError
from mulle_env.engine.loop import GameLoop
from mulle_env.engine.match import MoveEvent

from .games import MULLE, LiveGame
from .protocol import PROTOCOL_VERSION, ErrorCode, ProtocolError, message
from .recorder import GameRecorder
from .seats import Person, Seat, Seating
from .turns import AgentTurns, failure_text

if TYPE_CHECKING:
    from .connection import Connection
    from .hub import Hub

__all__ = ["Table"]


class Table:
    """A named table: two seats, a lobby, and at most one running game (see the module docstring)."""

    def __init__(self, hub: Hub, name: str, opponent: str, seed: int | None, sets: int | None,
                 agent_delay: float, watch: bool = False, specs: list[str] | None = None, address: str = "",
                 game: LiveGame = MULLE) -> None:
        self.hub = hub
        #: The game played here (:mod:`live.games`): Mulle or Casino, chosen when the table opens.
        self.game = game
        self.name = name
        #: The client address that opened the table (the per-address table limit counts by it).
        self.address = address
        self.watch = watch
        self.opponent = opponent
        self.seating = Seating(self, specs or [opponent, opponent], seed)
        self.turns = AgentTurns(self)
        self.recorder = GameRecorder(self)
        self.watchers: set[Connection] = set()
        self.ruleset = game.ruleset(sets)
        self.agent_delay = agent_delay
        self.match: Any = None
        #: The one game loop advancing :attr:`match` (a person's seat holds ``None`` there).
        self.loop: GameLoop | None = None
        #: The last game's ``game_over`` data, sent again to a page that (re)joins in the lobby after it.
        self.last_over: dict | None = None
        #: "lobby", "playing", or "saving" (the finished game is being committed to the store).
        self.phase = "lobby"
        self.games = 0
        #: The open request to a person: ``(request_id, seat)``.
        self.request: tuple[str, int] | None = None
        #: Bumped whenever the position or the seat to move changes hands: an agent's move thought out under an
        #: older token is thrown away.
        self.token = 0
        self._close_handle: asyncio.TimerHandle | None = None
        self.closed = False

    # ----- the seats, as the rest of the server reads them -------------------------------------
    @property
    def seats(self) -> list[Seat]:
        """The two seats (:class:`~live.seats.Seat`)."""
        return self.seating.seats

    @property
    def host(self) -> Person | None:
        """The person who starts games (the first to sit; the next one when the host leaves)."""
        return self.seating.host

    @property
    def holders(self) -> list[list[tuple[int, str, str]]]:
        """Per seat, who held it from which move on in the running game."""
        return self.seating.holders

    @property
    def seeded(self) -> bool:
        """Whether the running game (or, in the lobby, the next one) deals from a chosen seed."""
        return self.seating.seeded

    def people(self) -> list[Person]:
        """People holding seats (connected or within the grace period)."""
        return self.seating.people()

    def seats_public(self) -> list[dict]:
        """The seats as everyone may see them."""
        return self.seating.public()

    def played_by(self, seat: int, number: int) -> dict | None:
        """Who held ``seat`` when move ``number`` was played (see :meth:`Seating.played_by`)."""
        return self.seating.played_by(seat, number)

    def seat_person(self, name: str, conn: Connection) -> Person:
        """Put a new person in a free seat (:meth:`Seating.seat_person`)."""
        return self.seating.seat_person(name, conn)

    def rejoin(self, person: Person, conn: Connection) -> None:
        """Give a returning person their seat back (:meth:`Seating.rejoin`)."""
        self.seating.rejoin(person, conn)

    def dropped(self, person: Person) -> None:
        """The person's connection closed without ``leave`` (:meth:`Seating.dropped`)."""
        self.seating.dropped(person)

    def remove(self, person: Person, reason: str) -> None:
        """The person leaves (:meth:`Seating.remove`)."""
        self.seating.remove(person, reason)

    def _grace_over(self, person: Person) -> None:
        self.seating.grace_over(person)

    async def _think(self, seat: Any, view: Any, legal: list, limit: float) -> tuple:
        return await self.turns.think(seat, view, legal, limit)

    def _audience(self) -> bool:
        return bool(self.watchers) or self.seating.connected()

    def info(self) -> dict:
        """Table facts for confirmations and lobby notifications."""
        return {
            "table_name": self.name, "game": self.game.name, "phase": self.phase, "seats": self.seats_public(),
            "host": self.host.name if self.host else None, "opponent": self.opponent, "games": self.games,
            "watch": self.watch, "agent_delay_ms": round(self.agent_delay * 1000), "seeded": self.seeded,
            "spectators": len(self.watchers),
        }

    # ----- sending ---------------------------------------------------------------------
    def view_for_seat(self, seat: int) -> dict | None:
        """The running game as ``seat`` sees it (``None`` in the lobby before the first game)."""
        return self.game.seat_view(self.match.state, seat) if self.match is not None else None

    def _spectator(self) -> dict | None:
        return self.game.spectator_view(self.match.state, self.watch) if self.match is not None else None

    def notify(self, event: str, data: dict, with_view: bool = True) -> None:
        """Send the notification ``event`` to everyone here; game events carry each one's own view."""
        for p in self.people():
            if p.conn is not None:
                payload = {"event": event, "data": data}
                if with_view:
                    payload["view"] = self.view_for_seat(p.seat)
                p.conn.send(message("notification", payload))
        if self.watchers:
            payload = {"event": event, "data": data}
            if with_view:
                payload["view"] = self._spectator()
            msg = message("notification", payload)
            for w in self.watchers:
                w.send(msg)

    def history(self) -> list[dict]:
        """Every move so far (all public), each credited to whoever held the seat then: a (re)joining page
        rebuilds its move list from it."""
        return [self._event_dict(e) for e in self.match.history] if self.match is not None else []

    def _event_dict(self, event: MoveEvent) -> dict:
        data = event.to_dict()
        data["by"] = self.played_by(event.player, event.number)
        return data

    def _send_request(self, person: Person) -> None:
        assert self.request is not None and self.match is not None and person.conn is not None
        request_id, seat = self.request
        legal = self.match.legal_moves()
        person.conn.send(message("request", {
            "request_id": request_id, "action": "play", "view": self.view_for_seat(seat),
            "clock": self.seating.clock_for(request_id, seat),  # the move clock (live.seats); None: no clock
            "context": {"legal_moves": [str(m) for m in legal],
                        "previews": self.game.previews(self.match.state, legal)},
        }))

    # ----- what the seats tell the table -------------------------------------------------------
    def seat_taken(self, seat: int) -> None:
        """A person took an agent's seat: any move the agent is thinking about no longer counts."""
        self.token += 1
        if self.request is not None and self.request[1] == seat:
            self.request = None
        self.advance()

    def person_back(self, person: Person) -> None:
        """A person reconnected: their pending request again, or the game goes on."""
        if self.request is not None and self.request[1] == person.seat:
            self._send_request(person)
        else:
            self.advance()

    def seat_left(self, seat: Seat, person: Person) -> None:
        """A person's seat went to an agent: their request is withdrawn, the agent plays from the next move."""
        if self.request is not None and self.request[1] == seat.index:
            person.old_requests.append(self.request[0])
            self.request = None
        self.token += 1
        if self.match is not None and self.phase == "playing":
            self.turns.new_agent(seat)
            self.seating.holder_changed(seat.index)

    # ----- spectators ----------------------------------------------------------------------
    def add_watcher(self, conn: Connection) -> None:
        """A spectator connection; both hands are shown only at agents' tables."""
        if len(self.watchers) >= self.hub.config.max_watchers:
            raise ProtocolError(ErrorCode.TABLE_FULL, f"table {self.name!r} has its {self.hub.config.max_watchers} "
                                "spectators already", {"table_name": self.name})
        self.watchers.add(conn)
        conn.watching = self
        self.cancel_close()
        conn.send(message("watch_confirmation", {
            "protocol_version": PROTOCOL_VERSION, "table": self.info(), "view": self._spectator(),
            "history": self.history(), "last_game": self.last_game(),
        }))
        self.advance()

    def remove_watcher(self, conn: Connection) -> None:
        """A spectator leaves; an agents' table with nobody watching closes at once."""
        self.watchers.discard(conn)
        conn.watching = None
        if self.watch and not self.watchers:
            self.close()
        else:
            self.maybe_close()

    # ----- closing ---------------------------------------------------------------------
    def maybe_close(self) -> None:
        """Close after ``--close-after`` seconds when nobody (person or spectator) is here."""
        if self.people() or self.watchers or self.closed:
            return
        if self._close_handle is None:
            self._close_handle = asyncio.get_running_loop().call_later(self.hub.config.close_after, self.close)

    def cancel_close(self) -> None:
        """Somebody came: the table stays open."""
        if self._close_handle is not None:
            self._close_handle.cancel()
            self._close_handle = None

    # Names of issue 24 (tests and tools call them).
    _maybe_close = maybe_close
    _cancel_close = cancel_close

    def close(self) -> None:
        """Close the table now: keep an unfinished game as abandoned, stop its agent, drop it from the lobby."""
        self.cancel_close()  # a close timer still pending must not run this a second time (and store the game twice)
        if self.closed:
            return
        if self.people() and self.seating.connected():
            return  # someone came back in time
        self.recorder.abandoned()
        self.closed = True
        self.token += 1
        self.turns.cancel()
        self.seating.forget()
        for w in list(self.watchers):
            w.watching = None
        self.watchers.clear()
        self.hub.lobby.closed(self)

    # ----- the lobby ---------------------------------------------------------------------
    def lobby_action(self, person: Person, action: str, opponent: str | None) -> None:
        """``start_game`` or ``set_opponent`` by the host (4001 otherwise; 4000 while a game runs)."""
        if self.phase != "lobby":
            raise ProtocolError(ErrorCode.GAME_ALREADY_STARTED,
                                f"the game at table {self.name!r} has started; lobby actions wait for its end",
                                {"action": action})
        if self.host is not person:
            raise ProtocolError(ErrorCode.NOT_LOBBY_HOST, f"only the host ({self.host.name if self.host else '-'}) "
                                f"may {action.replace('_', ' ')}", {"action": action})
        if action == "set_opponent":
            assert opponent is not None  # the protocol's check requires it
            spec = self.hub.checked_spec(opponent, {"action": action, "opponent": opponent}, self.ruleset,
                                        self.game)
            self.opponent = spec
            for s in self.seats:
                if s.person is None:
                    s.spec = spec
            self.notify("lobby_update", {"action": "set_opponent", "table": self.info()}, with_view=False)
            return
        self.start_game()

    def start_game(self) -> None:
        """Deal a new game and start the loop."""
        seed = self.seating.next_seed()
        if seed is None:
            seed = secrets.randbits(63)
        specs = [f"person:{s.person.name}" if s.person else s.spec for s in self.seats]
        self.match = self.game.match(seed, self.ruleset, specs)
        self.loop = GameLoop(self.match, [None, None])
        self.phase = "playing"
        self.games += 1
        self.last_over = None
        self.request = None
        self.token += 1
        self.seating.holders = [[], []]
        for s in self.seats:
            if s.person is None:
                self.turns.new_agent(s)
            self.seating.holder_changed(s.index)
        self.recorder.started()  # kept in the store as it is played (live.recovery restores it after a crash)
        self.notify("lobby_update", {"action": "start_game", "table": self.info()}, with_view=False)
        self.notify("game_started", {"game": self.games, "seats": self.seats_public()})
        self.notify("deal", self._deal_data())
        self.notify("player_turn_changed", {"current_turn_index": self.match.to_move}, with_view=False)
        self.advance()

    def _deal_data(self) -> dict:
        return self.game.deal_data(self.match.state)

    # ----- moves -----------------------------------------------------------------------
    def respond(self, person: Person, request_id: str, text: str) -> None:
        """A person's move: checked (3002 not their turn, 3000 stale or illegal, 3001 card not held) and played."""
        self._check_request(person, request_id)
        try:
            move = self.game.parse(text)
        except MulleError as exc:  # malformed text: said with the legal moves, as an illegal move is
            raise ProtocolError(ErrorCode.INVALID_ACTION, str(exc),
                                {"move": text[:200], "legal_moves": [str(m) for m in self.match.legal_moves()]},
                                request_id) from None
        hand = self.game.hand(self.match.state, person.seat)
        if move.card not in hand:
            raise ProtocolError(ErrorCode.INVALID_CARDS, f"you do not hold {CARD_NAMES[move.card]}; your hand: "
                                f"{', '.join(CARD_NAMES[f] for f in hand)}",
                                {"card": CARD_NAMES[move.card], "move": text[:200]}, request_id)
        try:
            event, failed = self.through_loop(lambda: self.loop.play(move))
        except MulleError as exc:
            raise ProtocolError(ErrorCode.INVALID_ACTION, str(exc),
                                {"move": text[:200], "legal_moves": [str(m) for m in self.match.legal_moves()]},
                                request_id) from None
        person.old_requests.append(request_id)
        self.request = None
        self.after_move(event, failed)

    def drop(self, person: Person, request_id: str, card: int, target: Pile | None, staged: list[Pile]) -> None:
        """A person's drop at a Casino table (CASINO.md 8, :mod:`mulle_env.casino.drops`): the one legal move it
        means is played at once; several are offered in words (``drop_choices``, answered by a ``response``);
        none is refused saying why (3000, ``details.reason`` ``"drop"``)."""
        self._check_request(person, request_id)
        if not self.game.drops:
            raise ProtocolError(ErrorCode.INVALID_ACTION, f"drops are Casino's gestures; table {self.name!r} plays "
                                f"{self.game.title}: answer the request with a response naming the move",
                                {"reason": "drop", "game": self.game.name}, request_id)
        view = self.match.view(person.seat)
        choices = drop_choices(view, card, target, staged)
        if not choices:
            why = drop_refusal(view, card, target, staged) or "that drop is none of your legal moves"
            raise ProtocolError(ErrorCode.INVALID_ACTION, f"{why[:1].upper()}{why[1:]}.",
                                {"reason": "drop", "card": CARD_NAMES[card]}, request_id)
        if len(choices) == 1:
            self.respond(person, request_id, str(choices[0][0]))
            return
        if person.conn is not None:
            person.conn.send(message("drop_choices", {
                "request_id": request_id, "card": CARD_NAMES[card],
                "choices": [{"move": str(m), "words": w} for m, w in choices]}))

    def _check_request(self, person: Person, request_id: str) -> None:
        """A person's answer must be to the open request of their seat (3002 not their turn, 3000 stale)."""
        if self.phase != "playing" or self.match is None:
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN, "no game is running at this table", {}, request_id)
        if self.match.to_move != person.seat:
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN, f"it is seat {self.match.to_move}'s turn, not yours "
                                f"(seat {person.seat})", {"current_turn_index": self.match.to_move}, request_id)
        if self.request is None or request_id != self.request[0]:
            stale = request_id in person.old_requests
            raise ProtocolError(ErrorCode.INVALID_ACTION,
                                ("that request was already answered or withdrawn; answer the current one"
                                 if stale else "no request with that id was sent to you"),
                                {"reason": "stale request" if stale else "unknown request",
                                 "current_request_id": self.request[0] if self.request else None}, request_id)

    def through_loop(self, play: Callable[[], MoveEvent]) -> tuple[MoveEvent, AgentError | None]:
        """Run one of the loop's moves; an agent failing in ``observe`` after the move was played does not lose it.

        Returns the move's event and the :class:`AgentError` of an agent that failed to hear it (or ``None``).
        """
        played = len(self.match.history)
        try:
            return play(), None
        except AgentError as exc:
            if len(self.match.history) == played:
                raise
            return self.match.history[-1], exc

    def after_move(self, event: MoveEvent, failed: AgentError | None = None) -> None:
        """Tell everyone about a played move (and a set's end, the game's end or a new deal), then the next turn."""
        self.recorder.moved(event.number, str(event.move))
        self.token += 1
        self.notify("moved", self._moved_data(event))
        st = self.match.state
        if event.set_over:
            self.notify("set_over", self.game.set_over_data(st, event))
        if event.game_over:
            self.phase = "saving"
            self.seating.seeded = self.seating.seeds is not None
            self.request = None
            self.recorder.game_over(self._send_game_over)
            return
        if event.deal_over:
            self.notify("deal", self._deal_data())
        self.notify("player_turn_changed", {"current_turn_index": st.to_move}, with_view=False)
        if failed is not None and failed.seat is not None and self.seats[failed.seat].person is None:
            self.turns.replace(self.seats[failed.seat], failure_text(failed), 0.0)
            return
        self.advance()

    def _moved_data(self, event: MoveEvent) -> dict:
        data = self._event_dict(event)
        data["text"] = event.describe()
        if event.set_over:
            # The end of a set sweeps the cards left on the table to the last capturer: say so, with the cards.
            data["sweep"] = ({"cards": [CARD_NAMES[f] for f in event.swept], "to": event.swept_to}
                             if event.swept else None)
        return data

    def _send_game_over(self, data: dict) -> None:
        self.phase = "lobby"
        data["table"] = self.info()
        self.last_over = data
        if not self.closed:
            self.notify("game_over", data)
            self.maybe_close()

    def last_game(self) -> dict | None:
        """The last game's ``game_over`` data while the table is back in the lobby after it."""
        return self.last_over if self.phase == "lobby" else None

    def advance(self) -> None:
        """Ask whoever is to move: send a person the request, or let the agent think."""
        if self.phase != "playing" or self.match is None or self.closed or self.match.over:
            return
        seat = self.seats[self.match.to_move]
        if seat.person is not None:
            if self.request is None or self.request[1] != seat.index:
                self.request = (uuid.uuid4().hex, seat.index)
                if seat.person.conn is not None:
                    self._send_request(seat.person)
            return
        if not self._audience():
            return  # nobody to play for: the table waits (and closes after a while)
        self.turns.start(seat, self.token)
