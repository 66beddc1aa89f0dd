"""A table's games into the server's game history (:class:`~live.store.GameStore`).

:class:`GameRecorder` is the one home of storage at a table: a finished game is written in the
store's thread (never on the event loop) and ``game_over`` is sent only once the transaction has
committed (a crash after ``game_over`` loses nothing); a rated game (both seats rated players who
held them throughout: :mod:`live.ratings`) updates the ratings in that same transaction, and
``game_over`` carries the new ratings. A person who never comes back, or whose move clock runs
out, loses by forfeit (:meth:`GameRecorder.forfeit`: stored as ``forfeit`` with the other seat as
winner). A game whose table closes before its end otherwise (the server stopping) is kept as
``abandoned`` with the moves played and the scores so far (issue 33, defect 1).

While a game runs, its start (seed, rules, seats, the hashes of the seats' tokens) and each move
as it is played are written to the store (:meth:`GameStore.start_live
<live.store.GameStore.start_live>`, :meth:`~live.store.GameStore.add_move`), so a server killed
mid-game restores it when it starts again (:mod:`live.recovery`; issue 53, item 4).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .protocol import js_safe
from .ratings import agent_key, person_key
from .store import FinishedGame

if TYPE_CHECKING:
    from .table import Table

__all__ = ["GameRecorder"]

log = logging.getLogger("live")


class GameRecorder:
    """Writes the games of ``table`` (see the module docstring)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        #: The store's row of the running game (``None``: not kept, no store, or not yet written).
        self.live_id: int | None = None
        self._live_job: object = None
        #: Set while :mod:`live.recovery` rebuilds a game: nothing is written again.
        self.restoring = False

    def game_name(self) -> str:
        """``"mulle"`` or ``"casino"``: the game the table plays."""
        game = getattr(self.table, "game", "mulle")
        return str(getattr(game, "name", game))

    def rated_keys(self) -> tuple[str, str] | None:
        """The rating keys of both seats when the running game counts for ratings (see :mod:`live.ratings`)."""
        t = self.table
        keys = []
        for seat in (0, 1):
            held = t.seating.holders[seat]
            if len(held) != 1:
                return None  # the seat changed hands: the game is nobody's to rate
            _, name, kind = held[0]
            if kind == "agent":
                keys.append(agent_key(name))
                continue
            person = t.seats[seat].person
            if person is None or person.account is None or person.name.casefold() != name.casefold():
                return None  # a guest plays unrated, and so does the game
            keys.append(person_key(person.account))
        return None if keys[0] == keys[1] else (keys[0], keys[1])

    def _game(self, status: str = "finished", winner: int | None = None, forfeit: dict | None = None
              ) -> FinishedGame:
        t = self.table
        record = t.match.record()
        scores = tuple(t.match.state.scores()) if status != "finished" else None
        return FinishedGame(t.name, record, (tuple(t.seating.holders[0]), tuple(t.seating.holders[1])), time.time(),
                            status=status, scores=scores, game=self.game_name(),  # type: ignore[arg-type]
                            rated=self.rated_keys() if status != "abandoned" else None, winner=winner,
                            forfeit=forfeit, live_id=self._take_live_id())

    def _take_live_id(self) -> int | None:
        lid, self.live_id = self.live_id, None
        return lid

    # ----- the game in progress, as it is played -------------------------------------------------
    def _meta(self) -> dict:
        """What restores the running game (:mod:`live.recovery`): never a token, only its hash."""
        t = self.table
        st = t.match.state
        seats = []
        for s in t.seats:
            p = s.person
            seats.append({"kind": "agent", "spec": s.spec} if p is None else
                         {"kind": "person", "name": p.name, "session_hash": p.session_hash, "account": p.account})
        return {"game": self.game_name(), "seed": str(t.match.seed), "ruleset": st.ruleset.to_dict(),
                "specs": list(t.match.record().specs or []), "holders": [list(map(list, h)) for h in t.holders],
                "seats": seats, "opponent": t.opponent, "agent_delay": t.agent_delay,
                "host": t.host.seat if t.host is not None else None, "move_clock": t.seating.move_clock,
                "games": t.games}

    def _submit(self, fn, *args) -> None:
        try:
            job = self.table.hub.store_pool.submit(fn, *args)
        except RuntimeError:  # the pool has shut down: the server stops, and the game is stored as abandoned
            return
        job.add_done_callback(_log_failure)

    def started(self) -> None:
        """A game has started: keep it in the store as in progress (only when a person plays in it)."""
        t = self.table
        store = t.hub.store
        if store is None or self.restoring or self._live_job is not None or not t.seating.had_person():
            return  # no store, being rebuilt, kept already (a seat's holder was set first), or nobody's game
        meta = self._meta()
        try:
            job = t.hub.store_pool.submit(store.start_live, t.name, meta)
        except RuntimeError:
            return
        self._live_job = job

        def done(f) -> None:
            if f.cancelled() or f.exception() is not None:
                return _log_failure(f)
            if self._live_job is job:
                self.live_id = f.result()
        job.add_done_callback(done)

    def moved(self, number: int, move: str) -> None:
        """Move ``number`` was played: written in the store's thread (after the game's start: one thread, in order)."""
        store = self.table.hub.store
        if store is None or self.restoring or self._live_job is None:
            return
        job = self._live_job
        self._submit(lambda: store.add_move(job.result(), number, move))

    def seats_changed(self) -> None:
        """A seat changed hands in the running game: what restores it changes too."""
        t = self.table
        store = t.hub.store
        if store is None or self.restoring or t.match is None or t.phase != "playing":
            return
        if self._live_job is None:
            self.started()  # a person sat down in an agents' game: from now on it is kept
            return
        job, meta = self._live_job, self._meta()
        self._submit(lambda: store.update_live(job.result(), meta))

    def _forget_live(self) -> None:
        """The running game ends without being stored: its in-progress row goes."""
        job, self._live_job, self.live_id = self._live_job, None, None
        store = self.table.hub.store
        if job is not None and store is not None:
            self._submit(lambda: store.drop_live(job.result()))

    def game_over(self, send: Callable[[dict], None]) -> None:
        """The running game ended: build ``game_over``'s data, store the game, then ``send(data)`` (at once without a
        store; with ``game_id`` once committed; with ``store_error`` when the write failed)."""
        t = self.table
        match = t.match
        record = match.record()
        data = {
            **t.game.over_data(match), "game": t.game.name,
            # Integers beyond 2**53 (the seed) as strings: a JavaScript page reads this with JSON.parse.
            "record": js_safe(record.to_dict()),
            # The record's exact JSON and its seed as text: a 63-bit seed does not survive a JavaScript number.
            "record_text": json.dumps(record.to_dict(), separators=(",", ":")), "seed": str(record.seed),
            "players": [[{"from_move": f, "name": n, "kind": k} for f, n, k in seat] for seat in t.seating.holders],
            "game_id": None,
        }
        store = t.hub.store
        if store is None:
            send(data)
            return
        self._store_then_send(store, self._game(), data, send)

    def _stored(self, future: asyncio.Future, data: dict, send: Callable[[dict], None]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            log.error("table %r: the finished game could not be stored: %s", self.table.name, exc)
            data["store_error"] = f"the game could not be stored: {exc}"
        else:
            data["game_id"] = future.result()
        send(data)

    def forfeit(self, seat: int, reason: str) -> None:
        """The person in ``seat`` loses the running game by forfeit (``reason``: why, in words): the game ends now,
        is stored as ``forfeit`` with the other seat as winner (rated when it counts), and everyone gets
        ``game_over`` with ``forfeit: {"seat", "name", "reason"}`` and a result line that says so."""
        t = self.table
        if t.match is None or t.phase != "playing":
            return
        person = t.seats[seat].person
        name = person.name if person is not None else t.seats[seat].spec
        winner = 1 - seat
        held = t.seating.holders[winner]
        winner_name = held[-1][1] if held else t.seats[winner].spec
        info = {"seat": seat, "name": name, "reason": reason}
        t.phase = "saving"
        t.request = None
        t.token += 1
        t.turns.cancel()
        t.seating.stop_clock()
        scores = list(t.match.state.scores())
        record = t.match.record()
        data = {
            "scores": scores, "winner": winner, "sheets": [[a, b] for a, b in getattr(t.match.state, "sheets", [])],
            "totals": scores, "record": js_safe(record.to_dict()),
            "record_text": json.dumps(record.to_dict(), separators=(",", ":")), "seed": str(record.seed),
            "players": [[{"from_move": f, "name": n, "kind": k} for f, n, k in s] for s in t.seating.holders],
            "game_id": None, "forfeit": info,
            "result_line": f"{name} forfeited ({reason}): {winner_name} wins",
        }
        t.notify("forfeit", info, with_view=False)
        send = t._send_game_over
        store = t.hub.store
        if store is None:
            self._live_job = None
            send(data)
            return
        self._store_then_send(store, self._game("forfeit", winner=winner, forfeit=info), data, send)

    def _store_then_send(self, store: Any, game: Any, data: dict, send: Any) -> None:
        """Store a finished (or forfeited) game in the store's thread, with its ratings, then send ``data``."""
        live = self._live_job
        self._live_job = None
        rated = game.rated

        def write() -> int:
            # In the store's thread, after the game's start and moves (one thread, in order).
            lid = _result(live)
            gid = store.add(game if lid is None else _with_live(game, lid))
            if rated is not None:
                data["ratings"] = _ratings_after(store, game.game, rated)
            return gid
        future = asyncio.get_running_loop().run_in_executor(self.table.hub.store_pool, write)
        # The game is on disk before anyone is told it ended (issue 24): a crash after game_over loses nothing.
        future.add_done_callback(lambda f: self._stored(f, data, send))

    def abandoned(self) -> None:
        """The table closes with its game unfinished: keep it as ``abandoned`` when a person played in it (an agents'
        table that lost its last spectator is nobody's game). Written in the store's thread; nobody waits for it."""
        t = self.table
        store = t.hub.store
        if store is None or t.match is None or t.phase != "playing" or not t.seating.had_person():
            self._forget_live()
            return
        game = self._game("abandoned")
        live = self._live_job
        self._live_job = None

        def write() -> int:
            lid = _result(live)
            return store.add(game if lid is None else _with_live(game, lid))
        try:
            job = t.hub.store_pool.submit(write)
        except RuntimeError:  # the pool has shut down (the server stops): write it here, it is the last one
            job = None
            try:
                write()
            except Exception as exc:  # noqa: BLE001 - a failed write is logged, the close goes on
                log.error("table %r: the abandoned game could not be stored: %s", t.name, exc)
        if job is not None:
            job.add_done_callback(lambda f: f.exception() and log.error(
                "table %r: the abandoned game could not be stored: %s", t.name, f.exception()))


def _result(job) -> int | None:
    """The row id a start job wrote (``None``: none, or it failed)."""
    if job is None:
        return None
    try:
        return job.result()
    except Exception:  # noqa: BLE001 - the start could not be written: nothing to remove
        return None


def _with_live(game: FinishedGame, live_id: int) -> FinishedGame:
    from dataclasses import replace

    return replace(game, live_id=live_id)


def _ratings_after(store, game: str, keys: tuple[str, str]) -> list[dict]:
    """Both seats' ratings after a rated game, for ``game_over``."""
    from .ratings import PROVISIONAL_GAMES, PROVISIONAL_RD

    rows = {r["key"]: r for r in store.ratings(game) if r["key"] in keys}
    out = []
    for key in keys:
        r = rows.get(key)
        if r is None:
            out.append(None)
            continue
        last = store.rating_history(key, 1)
        before = last[-1]["before"] if last else None
        out.append({"key": key, "name": r["name"], "rating": round(r["rating"]), "rd": round(r["rd"]),
                    "change": None if before is None else round(r["rating"] - before),
                    "provisional": r["games"] < PROVISIONAL_GAMES or r["rd"] > PROVISIONAL_RD})
    return out


def _log_failure(f) -> None:
    if not f.cancelled() and f.exception() is not None:
        log.error("the game in progress could not be written to the store: %s", f.exception())
