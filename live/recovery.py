"""Games in progress brought back after the server was killed (issue 53, item 4).

While a game with a person in it runs, the store holds its start (the game, seed, rules, who sits
where, the SHA-256 of each person's seat token, the table's options) and every move as it is played
(:meth:`GameRecorder.started <live.recorder.GameRecorder.started>`). A clean stop (Ctrl-C,
SIGTERM) stores such a game as abandoned and removes that row; a ``kill -9``, a crash or a power cut
leaves it. When the server starts again, :func:`restore_games` reopens each one's table with the
game replayed move by move through the engine's game loop, its agents built and told the moves, and
its people as dropped players inside a fresh grace period: a page that still holds the seat's token
(the browser's kept session, or the seat link) joins with it and gets the game as it was; a person
who does not come back loses by forfeit, as at any table.

A row that cannot be restored (its table's name is open already, its rules or moves no longer
replay, its data is damaged) is stored as abandoned with the moves that do replay and who held the
seats, never dropped without a word (logged as a warning).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from typing import TYPE_CHECKING, Any

from .games import live_game
from .seats import Person
from .store import FinishedGame

if TYPE_CHECKING:
    from .hub import Hub
    from .table import Table

__all__ = ["restore_games"]

log = logging.getLogger("live")


def restore_games(hub: Hub) -> list[str]:
    """Reopen every game in progress the store holds (see the module docstring); return the tables' names."""
    store = hub.store
    if store is None:
        return []
    names = []
    for row in store.live_games():
        try:
            names.append(_restore(hub, row))
        except Exception as exc:  # noqa: BLE001 - a damaged row is kept as abandoned, the others go on
            log.warning("the game in progress at table %r (row %d) could not be restored (%s); it is stored as "
                        "abandoned", row["table"], row["id"], exc)
            _abandon(hub, row)
    return names


def _restore(hub: Hub, row: dict[str, Any]) -> str:
    if "meta" not in row:
        raise ValueError(row.get("error", "no data"))
    meta = row["meta"]
    name = row["table"]
    if name in hub.tables:
        raise ValueError(f"a table named {name!r} is open already")
    game = live_game(meta["game"])
    table: Table = hub.lobby.open(name, "", opponent=meta["opponent"], seed=None, sets=None,
                                  agent_delay=float(meta["agent_delay"]), game=game)
    try:
        _rebuild(hub, table, meta, row)
    except BaseException:
        table.seating.forget()
        table.closed = True
        hub.lobby.closed(table)
        raise
    return name


def _rebuild(hub: Hub, table: Table, meta: dict[str, Any], row: dict[str, Any]) -> None:
    game = table.game
    table.ruleset = type(game.ruleset(None)).from_dict(meta["ruleset"])
    table.seating.move_clock = float(meta.get("move_clock") or 0)
    table.games = max(0, int(meta.get("games", 1)) - 1)  # start_game counts this game again
    people = []
    for index, seat_meta in enumerate(meta["seats"]):
        seat = table.seats[index]
        if seat_meta["kind"] == "person":
            person = Person(seat_meta["name"], table, index, account=seat_meta.get("account"),
                            session_hash=seat_meta["session_hash"])
            seat.person = person
            people.append(person)
        else:
            seat.spec = seat_meta["spec"]
    host = meta.get("host")
    table.seating.host = table.seats[host].person if host in (0, 1) else None
    table.seating._seated_before = True
    table.recorder.restoring = True
    table.seating.seeds = iter([int(meta["seed"])])
    try:
        table.start_game()
        for text in row["moves"]:
            table.loop.play(text)
    finally:
        table.recorder.restoring = False
        table.seating.seeds = None
        table.seating.seeded = False
    table.seating.holders = [[(int(f), str(n), str(k)) for f, n, k in seat] for seat in meta["holders"]]
    done: concurrent.futures.Future[int] = concurrent.futures.Future()
    done.set_result(row["id"])
    table.recorder._live_job = done
    table.request = None
    table.token += 1
    for person in people:
        hub.restored[person.session_hash] = person
        person.grace = asyncio.get_running_loop().call_later(hub.config.grace, table.seating.grace_over, person)
    if table.match.over:
        # Killed between the last move and storing the game: it is finished, so store it as such now.
        table.phase = "saving"
        table.recorder.game_over(table._send_game_over)
        return
    table.advance()
    log.warning("table %r: restored its game in progress after the server stopped (%d moves); its people have %g s "
                "to come back", table.name, len(row["moves"]), hub.config.grace)


def _abandon(hub: Hub, row: dict[str, Any]) -> None:
    """Store a row that cannot be restored as abandoned (the moves that replay), or drop it when it is unreadable."""
    store = hub.store
    assert store is not None
    meta = row.get("meta")
    try:
        if meta is None:
            raise ValueError(row.get("error", "no data"))
        game = live_game(meta["game"])
        ruleset = type(game.ruleset(None)).from_dict(meta["ruleset"])
        match = game.match(int(meta["seed"]), ruleset, meta["specs"])
        for text in row["moves"]:
            try:
                match.play(text)
            except Exception:  # noqa: BLE001 - keep the moves that replay
                break
        holders = tuple(tuple((int(f), str(n), str(k)) for f, n, k in seat) for seat in meta["holders"])
        store.add(FinishedGame(row["table"], match.record(), holders, time.time(),  # type: ignore[arg-type]
                               status="abandoned", scores=tuple(match.state.scores()), game=game.name,
                               live_id=row["id"]))
    except Exception as exc:  # noqa: BLE001 - unreadable: nothing to keep but the word in the log
        log.warning("the game in progress in row %d is unreadable (%s); it is dropped", row["id"], exc)
        store.drop_live(row["id"])
