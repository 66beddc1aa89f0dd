"""The live server's game history: every finished game in an embedded SQLite database.

Standard library only (:mod:`sqlite3`). One file, in WAL mode with ``synchronous=FULL``:
a game is on disk when :meth:`GameStore.add` returns, which the hub waits for before it
sends ``game_over``, so a game a person saw end is never lost, even to ``kill -9`` or a
power cut; a crash mid-write leaves the last committed state (SQLite's journal), never a
damaged file. Readers (``GET /api/games``, the export) use connections of their own and
never wait for the writer (WAL).

The schema is versioned with ``PRAGMA user_version`` (:data:`SCHEMA_VERSION`). Opening a
file made by a newer version, or a file that is not a Mulle game store, is refused with a
:class:`StoreError` saying so; an older version is upgraded in place (one transaction per
step of :data:`_MIGRATIONS`).

Each game keeps its :class:`~mulle_env.engine.record.GameRecord` (the format
``mulle-play --replay`` and the training readers take) as JSON text, so a seed of 63 bits
and every move survive exactly, beside the facts the lists search by: the table, when it
ended, the scores and who held each seat from which move on (``players``).

>>> import tempfile, os
>>> from mulle_env.engine.match import Match
>>> m = Match(3, {"sets": 1}, ["person:Anna", "random"])
>>> store = GameStore(os.path.join(tempfile.mkdtemp(), "games.db"))
>>> store.schema_version() == SCHEMA_VERSION, store.count()
(True, 0)
>>> store.close()
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mulle_env.engine.record import GameRecord
from mulle_env.files import JSONInputError, PathError, check_output_path, parse_json

__all__ = ["GAME_STATUSES", "SCHEMA_VERSION", "FinishedGame", "GameStore", "StoreError", "default_db_path"]

#: The schema this code writes (``PRAGMA user_version``).
SCHEMA_VERSION = 4
#: Written into the file (``PRAGMA application_id``) so a Mulle store is told from any other SQLite file.
APPLICATION_ID = 0x4D554C4C  # "MULL"

#: The steps from one schema version to the next: ``_MIGRATIONS[v]`` takes version ``v`` to ``v + 1``.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE games (
               id INTEGER PRIMARY KEY,
               table_name TEXT NOT NULL,
               finished_at REAL NOT NULL,
               seed TEXT NOT NULL,
               sets INTEGER NOT NULL,
               moves INTEGER NOT NULL,
               score0 INTEGER NOT NULL,
               score1 INTEGER NOT NULL,
               winner INTEGER,
               record TEXT NOT NULL
           )""",
        "CREATE INDEX games_by_table ON games (table_name, id)",
        """CREATE TABLE players (
               game_id INTEGER NOT NULL REFERENCES games (id),
               seat INTEGER NOT NULL,
               from_move INTEGER NOT NULL,
               name TEXT NOT NULL,
               kind TEXT NOT NULL,
               PRIMARY KEY (game_id, seat, from_move)
           )""",
        "CREATE INDEX players_by_name ON players (name COLLATE NOCASE, game_id)",
    ),
    # 2 (issue 33): a game whose table closed before its end (everyone gone past the grace period) is kept too,
    # with its moves, as "abandoned"; every game stored before was played to the end.
    (
        "ALTER TABLE games ADD COLUMN status TEXT NOT NULL DEFAULT 'finished'",
    ),
    # 3 (issue 33): post-game analyses (live.analysis), one per game, kept beside it.
    (
        """CREATE TABLE analyses (
               game_id INTEGER PRIMARY KEY REFERENCES games (id),
               analyser TEXT NOT NULL,
               created_at REAL NOT NULL,
               result TEXT NOT NULL
           )""",
    ),
    # 4 (issue 52): which game a row is (Mulle or Casino); accounts and their sessions (only hashes: live.accounts);
    # Glicko-2 ratings per game with every rated game's change (live.ratings); and the games in progress, their
    # moves written as they are played, so a server killed mid-game restores them (issue 53, item 4).
    (
        "ALTER TABLE games ADD COLUMN game TEXT NOT NULL DEFAULT 'mulle'",
        "ALTER TABLE games ADD COLUMN forfeit TEXT",
        """CREATE TABLE accounts (
               name_key TEXT PRIMARY KEY,
               name TEXT NOT NULL,
               password_hash TEXT NOT NULL,
               created_at REAL NOT NULL
           )""",
        """CREATE TABLE sessions (
               token_hash TEXT PRIMARY KEY,
               name_key TEXT NOT NULL REFERENCES accounts (name_key),
               created_at REAL NOT NULL,
               expires_at REAL NOT NULL
           )""",
        """CREATE TABLE ratings (
               game TEXT NOT NULL,
               key TEXT NOT NULL,
               name TEXT NOT NULL,
               kind TEXT NOT NULL,
               rating REAL NOT NULL,
               rd REAL NOT NULL,
               volatility REAL NOT NULL,
               games INTEGER NOT NULL,
               wins INTEGER NOT NULL,
               draws INTEGER NOT NULL,
               losses INTEGER NOT NULL,
               last_at REAL NOT NULL,
               PRIMARY KEY (game, key)
           )""",
        """CREATE TABLE rating_changes (
               game_id INTEGER NOT NULL REFERENCES games (id),
               key TEXT NOT NULL,
               game TEXT NOT NULL,
               at REAL NOT NULL,
               before REAL NOT NULL,
               rating REAL NOT NULL,
               rd REAL NOT NULL,
               result TEXT NOT NULL,
               opponent TEXT NOT NULL,
               opponent_key TEXT NOT NULL,
               PRIMARY KEY (game_id, key)
           )""",
        "CREATE INDEX rating_changes_by_key ON rating_changes (key, game, game_id)",
        """CREATE TABLE live_games (
               id INTEGER PRIMARY KEY,
               table_name TEXT NOT NULL,
               started_at REAL NOT NULL,
               meta TEXT NOT NULL
           )""",
        """CREATE TABLE live_moves (
               live_id INTEGER NOT NULL REFERENCES live_games (id) ON DELETE CASCADE,
               number INTEGER NOT NULL,
               move TEXT NOT NULL,
               PRIMARY KEY (live_id, number)
           )""",
    ),
)
assert len(_MIGRATIONS) == SCHEMA_VERSION

#: What a stored game's ``status`` may be: played to the end, lost by a person who never came back (or whose move
#: clock ran out), or left unfinished when its table closed.
GAME_STATUSES = ("finished", "forfeit", "abandoned")

#: Most games one page of :meth:`GameStore.games` returns.
MAX_PAGE = 100


class StoreError(ValueError):
    """The database cannot be used: not a Mulle game store, made by a newer version, or not writable."""


def default_db_path() -> Path:
    """Where ``mulle-serve`` keeps its games unless ``--db`` says otherwise: ``$XDG_DATA_HOME/mulle/live.db``
    (``~/.local/share/mulle/live.db`` when ``XDG_DATA_HOME`` is not set)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "mulle" / "live.db"


@dataclass(frozen=True)
class FinishedGame:
    """A finished game as the store keeps it.

    Attributes:
        table: The table's name.
        record: The game record (seed, ruleset, specs, moves, result).
        players: Per seat, who held it from which move on: ``[(from_move, name, kind), ...]`` with
            ``kind`` ``"person"`` or ``"agent"`` (``from_move`` 1 for whoever held it from the start).
        finished_at: Unix time the game ended (or was abandoned).
        status: ``"finished"`` (played to the end), ``"forfeit"`` (a person never came back within the grace
            period, or let the move clock run out: ``winner`` is the other seat, the record has the moves played and
            no result, the scores are those so far) or ``"abandoned"`` (its table closed before the end: no winner).
        scores: The running totals of a forfeit or abandoned game (a finished one's come from its record).
        game: ``"mulle"`` or ``"casino"``.
        rated: Per seat, the key it is rated under (:func:`live.ratings.person_key`, :func:`~live.ratings.agent_key`)
            when the game counts for ratings (both seats rated players who held them throughout); ``None`` otherwise.
        winner: The winning seat of a forfeit.
        forfeit: Of a forfeit: ``{"seat", "name", "reason"}`` (who lost it and why, in words).
        live_id: The store's row of this game while it ran (:meth:`GameStore.start_live`), removed with this write.
    """

    table: str
    record: GameRecord
    players: tuple[tuple[tuple[int, str, str], ...], tuple[tuple[int, str, str], ...]]
    finished_at: float
    status: str = "finished"
    scores: tuple[int, int] | None = None
    game: str = "mulle"
    rated: tuple[str, str] | None = None
    winner: int | None = None
    forfeit: dict | None = None
    live_id: int | None = None

    def __post_init__(self) -> None:
        if self.status not in GAME_STATUSES:
            raise ValueError(f"status must be one of {', '.join(GAME_STATUSES)}, not {self.status!r}")
        if self.status == "forfeit" and self.winner not in (0, 1):
            raise ValueError(f"a forfeit names its winner (seat 0 or 1), not {self.winner!r}")

    def result_winner(self) -> int | None:
        """The winning seat (``None``: a draw, or an abandoned game)."""
        if self.status == "forfeit":
            return self.winner
        if self.status == "abandoned":
            return None
        return (self.record.result or {}).get("winner")


def _connect(path: str) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA busy_timeout = 30000")
    return con


class GameStore:
    """The games of one server in the SQLite file ``path`` (created when missing; see the module docstring).

    Writes (:meth:`add`) go through one connection guarded by a lock; every read opens its own
    short connection, so the API and the export never wait for a write.

    Raises:
        StoreError: ``path`` is not a file SQLite can use as a Mulle game store (see the module docstring).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        try:
            self.path = check_output_path(path, "the database (--db)")
        except PathError as exc:
            raise StoreError(str(exc)) from None
        self._lock = threading.Lock()
        try:
            self._con = _connect(str(self.path))
            self._setup()
            # The games in progress' moves: a connection of its own at synchronous=NORMAL (see add_move).
            self._log = _connect(str(self.path))
            self._log.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"the database (--db) {str(self.path)!r} is not a Mulle game store: {exc}") from None

    def _setup(self) -> None:
        con = self._con
        app_id = con.execute("PRAGMA application_id").fetchone()[0]
        version = con.execute("PRAGMA user_version").fetchone()[0]
        tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id != APPLICATION_ID and (app_id != 0 or tables):
            raise StoreError(f"the database (--db) {str(self.path)!r} is another program's SQLite file, not a Mulle "
                             "game store; give a new file name")
        if version > SCHEMA_VERSION:
            raise StoreError(f"the database (--db) {str(self.path)!r} has schema version {version}, newer than this "
                             f"mulle-serve reads ({SCHEMA_VERSION}); upgrade mulle-env or give another file")
        # WAL: readers never block the writer; FULL: a commit is on disk when it returns (power cuts included).
        if con.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
            raise StoreError(f"the database (--db) {str(self.path)!r} cannot use write-ahead logging (WAL); "
                             "give a file on a local disk")
        con.execute("PRAGMA synchronous = FULL")
        con.execute("PRAGMA foreign_keys = ON")
        for step in range(version, SCHEMA_VERSION):
            con.execute("BEGIN IMMEDIATE")
            try:
                for sql in _MIGRATIONS[step]:
                    con.execute(sql)
                con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                con.execute(f"PRAGMA user_version = {step + 1}")
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def schema_version(self) -> int:
        """The schema version of the file (:data:`SCHEMA_VERSION` once opened)."""
        with self._lock:
            return self._con.execute("PRAGMA user_version").fetchone()[0]

    def close(self) -> None:
        """Close the writer's connection (after the write in progress, if any)."""
        with self._lock:
            self._con.close()
            self._log.close()

    # ----- writing ---------------------------------------------------------------------
    def add(self, game: FinishedGame) -> int:
        """Store a finished game in one transaction, on disk when this returns; return its id. A rated game
        (``game.rated``) updates both players' ratings in the same transaction (:mod:`live.ratings`), and the game's
        in-progress row (``game.live_id``) goes with it."""
        rec = game.record
        result = rec.result or {}
        scores = result.get("scores") or list(game.scores or (0, 0))
        text = json.dumps(rec.to_dict(), separators=(",", ":"))
        sets = getattr(rec.ruleset, "sets", None) or getattr(rec.ruleset, "rounds", None) or 0
        winner = game.result_winner()
        with self._lock:
            con = self._con
            con.execute("BEGIN IMMEDIATE")
            try:
                cur = con.execute(
                    "INSERT INTO games (table_name, finished_at, seed, sets, moves, score0, score1, winner, record, "
                    "status, game, forfeit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (game.table, game.finished_at, str(rec.seed), sets, len(rec.moves), scores[0],
                     scores[1], winner, text, game.status, game.game,
                     None if game.forfeit is None else json.dumps(game.forfeit)))
                gid = cur.lastrowid
                con.executemany("INSERT INTO players (game_id, seat, from_move, name, kind) VALUES (?, ?, ?, ?, ?)",
                                [(gid, seat, frm, name, kind) for seat in (0, 1)
                                 for frm, name, kind in game.players[seat]])
                if game.rated is not None and game.status in ("finished", "forfeit"):
                    self._rate(con, gid, game, winner)
                if game.live_id is not None:
                    con.execute("DELETE FROM live_moves WHERE live_id = ?", (game.live_id,))
                    con.execute("DELETE FROM live_games WHERE id = ?", (game.live_id,))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        return gid

    def _rate(self, con: sqlite3.Connection, gid: int, game: FinishedGame, winner: int | None) -> None:
        """Update both seats' ratings after game ``gid`` (inside :meth:`add`'s transaction)."""
        from .ratings import Rating, inflate, rate_game

        assert game.rated is not None
        keys = game.rated
        names = [game.players[seat][0][1] for seat in (0, 1)]
        kinds = [game.players[seat][0][2] for seat in (0, 1)]
        now = game.finished_at
        before = []
        for key in keys:
            row = con.execute("SELECT rating, rd, volatility, games, last_at FROM ratings WHERE game = ? AND key = ?",
                              (game.game, key)).fetchone()
            before.append(Rating() if row is None else
                          inflate(Rating(row[0], row[1], row[2], row[3]), now - row[4]))
        score0 = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
        after = rate_game(before[0], before[1], score0)
        for seat in (0, 1):
            s = score0 if seat == 0 else 1.0 - score0
            result = "win" if s == 1.0 else "draw" if s == 0.5 else "loss"
            new = after[seat]
            con.execute(
                "INSERT INTO ratings (game, key, name, kind, rating, rd, volatility, games, wins, draws, losses, "
                "last_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (game, key) DO UPDATE SET "
                "name = excluded.name, rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, "
                "games = excluded.games, wins = wins + excluded.wins, draws = draws + excluded.draws, "
                "losses = losses + excluded.losses, last_at = excluded.last_at",
                (game.game, keys[seat], names[seat], kinds[seat], new.rating, new.rd, new.volatility, new.games,
                 int(result == "win"), int(result == "draw"), int(result == "loss"), now))
            con.execute("INSERT INTO rating_changes (game_id, key, game, at, before, rating, rd, result, opponent, "
                        "opponent_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (gid, keys[seat], game.game, now, before[seat].rating, new.rating, new.rd, result,
                         names[1 - seat], keys[1 - seat]))

    # ----- games in progress (issue 53, item 4) ---------------------------------------------
    def start_live(self, table: str, meta: dict) -> int:
        """Keep a game that has just started (``meta``: what restores it, see :mod:`live.recovery`); return its
        row id for :meth:`add_move`, :meth:`update_live` and :meth:`FinishedGame.live_id`."""
        text = json.dumps(meta, separators=(",", ":"))
        with self._lock:
            cur = self._log.execute("INSERT INTO live_games (table_name, started_at, meta) VALUES (?, ?, ?)",
                                    (table, time.time(), text))
            return int(cur.lastrowid)

    def add_move(self, live_id: int, number: int, move: str) -> None:
        """Move ``number`` of the game in progress ``live_id``, written as it is played. On the log connection
        (``synchronous=NORMAL`` in WAL mode: a killed server loses nothing the operating system was handed; a power
        cut may lose the last moves of games in progress, never a finished game)."""
        with self._lock:
            self._log.execute("INSERT OR REPLACE INTO live_moves (live_id, number, move) VALUES (?, ?, ?)",
                              (live_id, number, move))

    def update_live(self, live_id: int, meta: dict) -> None:
        """Replace what restores the game in progress ``live_id`` (a seat changed hands)."""
        text = json.dumps(meta, separators=(",", ":"))
        with self._lock:
            self._log.execute("UPDATE live_games SET meta = ? WHERE id = ?", (text, live_id))

    def drop_live(self, live_id: int) -> None:
        """Forget the game in progress ``live_id`` (it ended without being stored: nobody's game)."""
        with self._lock:
            self._log.execute("DELETE FROM live_moves WHERE live_id = ?", (live_id,))
            self._log.execute("DELETE FROM live_games WHERE id = ?", (live_id,))

    def live_games(self) -> list[dict]:
        """The games in progress the last server left (killed before it could store them), oldest first: each
        ``{"id", "table", "started_at", "meta", "moves"}``; a row whose meta is not readable is named in
        ``"error"`` instead of ``"meta"``."""
        con = self._read()
        try:
            out = []
            for lid, table, started, meta in con.execute(
                    "SELECT id, table_name, started_at, meta FROM live_games ORDER BY id").fetchall():
                moves = [m for (m,) in con.execute("SELECT move FROM live_moves WHERE live_id = ? ORDER BY number",
                                                   (lid,))]
                row: dict = {"id": lid, "table": table, "started_at": started, "moves": moves}
                try:
                    row["meta"] = parse_json(meta, f"game in progress {lid}")
                except JSONInputError as exc:
                    row["error"] = str(exc)
                out.append(row)
            return out
        finally:
            con.close()

    # ----- accounts (live.accounts keeps the rules; only hashes are stored) -------------------
    def create_account(self, name_key: str, name: str, password_hash: str) -> bool:
        """Claim ``name`` (key ``name_key``) with a password hash; ``False`` when the name is claimed already."""
        with self._lock:
            try:
                self._con.execute("INSERT INTO accounts (name_key, name, password_hash, created_at) VALUES "
                                  "(?, ?, ?, ?)", (name_key, name, password_hash, time.time()))
            except sqlite3.IntegrityError:
                return False
        return True

    def account(self, name_key: str) -> tuple[str, str] | None:
        """The claimed name and its password hash, or ``None``."""
        con = self._read()
        try:
            row = con.execute("SELECT name, password_hash FROM accounts WHERE name_key = ?", (name_key,)).fetchone()
            return None if row is None else (row[0], row[1])
        finally:
            con.close()

    def claimed(self) -> set[str]:
        """Every claimed name's key."""
        con = self._read()
        try:
            return {k for (k,) in con.execute("SELECT name_key FROM accounts")}
        finally:
            con.close()

    def add_session(self, token_hash: str, name_key: str, expires_at: float) -> None:
        """Keep a login session by the hash of its token (the token itself is never stored)."""
        with self._lock:
            self._con.execute("DELETE FROM sessions WHERE expires_at < ?", (time.time(),))
            self._con.execute("INSERT INTO sessions (token_hash, name_key, created_at, expires_at) VALUES "
                              "(?, ?, ?, ?)", (token_hash, name_key, time.time(), expires_at))

    def session(self, token_hash: str) -> tuple[str, str] | None:
        """The account ``(name_key, name)`` of an unexpired session, or ``None``."""
        con = self._read()
        try:
            row = con.execute("SELECT a.name_key, a.name FROM sessions s JOIN accounts a ON a.name_key = s.name_key "
                              "WHERE s.token_hash = ? AND s.expires_at >= ?", (token_hash, time.time())).fetchone()
            return None if row is None else (row[0], row[1])
        finally:
            con.close()

    def delete_session(self, token_hash: str) -> None:
        """End a login session."""
        with self._lock:
            self._con.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash,))

    # ----- ratings (live.ratings) ------------------------------------------------------------
    def ratings(self, game: str) -> list[dict]:
        """Everyone rated at ``game``, best first: ``{"key", "name", "kind", "rating", "rd", "volatility", "games",
        "wins", "draws", "losses", "last_at"}``."""
        con = self._read()
        try:
            rows = con.execute("SELECT key, name, kind, rating, rd, volatility, games, wins, draws, losses, last_at "
                               "FROM ratings WHERE game = ? ORDER BY rating DESC, key", (game,)).fetchall()
        finally:
            con.close()
        cols = ("key", "name", "kind", "rating", "rd", "volatility", "games", "wins", "draws", "losses", "last_at")
        return [dict(zip(cols, r, strict=True)) for r in rows]

    def rating_history(self, key: str, limit: int = 500) -> list[dict]:
        """The last ``limit`` rating changes of ``key`` in every game, oldest first: ``{"game_id", "game", "at",
        "before", "rating", "rd", "result", "opponent", "opponent_key"}``."""
        con = self._read()
        try:
            rows = con.execute("SELECT game_id, game, at, before, rating, rd, result, opponent, opponent_key FROM "
                               "rating_changes WHERE key = ? ORDER BY game_id DESC LIMIT ?", (key, limit)).fetchall()
        finally:
            con.close()
        cols = ("game_id", "game", "at", "before", "rating", "rd", "result", "opponent", "opponent_key")
        return [dict(zip(cols, r, strict=True)) for r in reversed(rows)]

    def add_analysis(self, game_id: int, result: dict) -> None:
        """Keep the analysis ``result`` (:func:`live.analysis.analyse`) of game ``game_id``, replacing an older one."""
        text = json.dumps(result, separators=(",", ":"))
        with self._lock:
            con = self._con
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("INSERT OR REPLACE INTO analyses (game_id, analyser, created_at, result) "
                            "VALUES (?, ?, ?, ?)", (game_id, result.get("analyser", ""), time.time(), text))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    # ----- reading ---------------------------------------------------------------------
    def analysis(self, game_id: int) -> dict | None:
        """The kept analysis of game ``game_id`` with ``created_at``, or ``None``."""
        con = self._read()
        try:
            row = con.execute("SELECT created_at, result FROM analyses WHERE game_id = ?", (game_id,)).fetchone()
        finally:
            con.close()
        if row is None:
            return None
        out = json.loads(row[1])
        out["created_at"] = _iso(row[0])
        return out

    def _read(self) -> sqlite3.Connection:
        return _connect(str(self.path))

    def count(self, table: str | None = None, player: str | None = None) -> int:
        """How many stored games match the filters (see :meth:`games`)."""
        where, args = _filters(table, player)
        con = self._read()
        try:
            return con.execute(f"SELECT count(*) FROM games g {where}", args).fetchone()[0]
        finally:
            con.close()

    def games(self, table: str | None = None, player: str | None = None, limit: int = 20,
              offset: int = 0) -> list[dict]:
        """One page of game summaries, newest first: ``table`` exact, ``player`` any seat's name (any case)."""
        limit = max(1, min(int(limit), MAX_PAGE))
        where, args = _filters(table, player)
        con = self._read()
        try:
            rows = con.execute(f"SELECT id, table_name, finished_at, seed, sets, moves, score0, score1, winner, "
                               f"status, game, forfeit FROM games g {where} ORDER BY id DESC LIMIT ? OFFSET ?",
                               (*args, limit, max(0, int(offset)))).fetchall()
            return [self._summary(con, row) for row in rows]
        finally:
            con.close()

    def game(self, game_id: int) -> dict | None:
        """The summary of game ``game_id`` with its ``record`` (a GameRecord dict), or ``None``."""
        con = self._read()
        try:
            row = con.execute("SELECT id, table_name, finished_at, seed, sets, moves, score0, score1, winner, "
                              "status, game, forfeit, record FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                return None
            out = self._summary(con, row[:12])
            out["record"] = _stored_record(row[12], game_id)
            return out
        finally:
            con.close()

    def record_text(self, game_id: int) -> str | None:
        """The stored record of game ``game_id`` as JSON text, exactly as written (``None``: no such game)."""
        con = self._read()
        try:
            row = con.execute("SELECT record FROM games WHERE id = ?", (game_id,)).fetchone()
            return row[0] if row else None
        finally:
            con.close()

    def export(self, table: str | None = None, player: str | None = None) -> Iterator[dict]:
        """Every matching game, oldest first, as a GameRecord dict with ``game_id``, ``table``, ``players`` and
        ``finished_at`` beside it (``GameRecord.from_dict`` and ``mulle-play --replay`` read each one)."""
        where, args = _filters(table, player)
        con = self._read()
        try:
            last = 0
            while True:  # in pages, so a large store never sits in memory at once
                clause = f"{where} {'AND' if where else 'WHERE'} g.id > ?"
                rows = con.execute(f"SELECT id, table_name, finished_at, record FROM games g {clause} "
                                   "ORDER BY id LIMIT 500", (*args, last)).fetchall()
                if not rows:
                    return
                for gid, table_name, finished_at, record in rows:
                    out = _stored_record(record, gid)
                    out.update(game_id=gid, table=table_name, players=_players(con, gid),
                               finished_at=_iso(finished_at))
                    yield out
                    last = gid
        finally:
            con.close()

    @staticmethod
    def _summary(con: sqlite3.Connection, row) -> dict:
        gid, table_name, finished_at, seed, sets, moves, s0, s1, winner, status, game, forfeit = row
        # The seed is text: a 63-bit number does not survive a JavaScript number (issue 24, defect 1).
        return {"id": gid, "table": table_name, "finished_at": _iso(finished_at), "seed": seed, "sets": sets,
                "moves": moves, "scores": [s0, s1], "winner": winner, "status": status, "game": game,
                "forfeit": json.loads(forfeit) if forfeit else None, "players": _players(con, gid)}


def _stored_record(text: object, game_id: int) -> dict:
    """The stored record of game ``game_id`` read back by the bounded reader: a store is a file anyone can edit."""
    where = f"stored game {game_id}"
    if not isinstance(text, (str, bytes)):
        raise StoreError(f"{where}: the record is {type(text).__name__}, not JSON text")
    try:
        out = parse_json(text, where)
    except JSONInputError as exc:
        raise StoreError(str(exc)) from None
    if not isinstance(out, dict):
        raise StoreError(f"{where}: the record is a JSON {type(out).__name__}, not an object")
    return out


def _filters(table: str | None, player: str | None) -> tuple[str, tuple]:
    clauses, args = [], []
    if table:
        clauses.append("g.table_name = ?")
        args.append(table)
    if player:
        clauses.append("g.id IN (SELECT game_id FROM players WHERE name = ? COLLATE NOCASE)")
        args.append(player)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(args)


def _players(con: sqlite3.Connection, gid: int) -> list[list[dict]]:
    seats: list[list[dict]] = [[], []]
    for seat, frm, name, kind in con.execute("SELECT seat, from_move, name, kind FROM players WHERE game_id = ? "
                                             "ORDER BY seat, from_move", (gid,)):
        seats[seat].append({"from_move": frm, "name": name, "kind": kind})
    return seats


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
