"""People's games as training data: game records turned into behaviour-cloning data sets.

A game record file is what ``mulle-play --save``, the live server's replays and the
arena write: one :class:`mulle_env.engine.GameRecord` as JSON, or JSON Lines of records
or of arena results lines (whose moves are under ``move_list`` when the arena ran with
``--save-games``); or the live server's game store itself (``mulle-serve --db``,
SQLite). :func:`records_to_data` replays every game (each move checked) and
stores, per decision with a choice, what :mod:`training.teacher` stores for a teacher's
decision (the mover's observation, the legal moves, each move's afterstate, the move
played, the outcome) but no values: ``spec.json`` says ``"label": "choice"``. An
afterstate fit *clones* such decisions: a cross-entropy that makes the move played score
highest among the decision's moves, scored exactly as ``learned`` scores them
(:mod:`training.afterfit`), weighted per data set (``dir=weight``) against the teacher's
regression. ``mulle-train expert --records FILE=WEIGHT`` adds them to generation 0's
fit: a warm start from people's play.

Only games under the rules being trained are taken (others are counted and left out);
arena lines of games that did not finish (``aborted``) are left out too. A record that
does not replay (an illegal move, a result that disagrees) is an error naming the file
and line: nothing is silently skipped.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from mulle_env.engine import GameRecord, Match, MulleError, Ruleset
from mulle_env.files import DEFAULT_READ_LIMIT, JSONInputError, check_input_path, parse_json
from mulle_env.observation import layout_fingerprint

from .teacher import (
    FORMAT,
    MAX_LEGAL,
    Afterstates,
    GameDecision,
    TeacherDataError,
    _check_dir,
    decision_afterstates,
    decision_arrays,
    decision_row,
    shard_bytes,
    shard_path,
    write_shard,
)

__all__ = ["RecordsError", "read_records", "records_to_data"]


class RecordsError(TeacherDataError):
    """A game record file that cannot be used (not JSON, not a record, a game that does not replay)."""


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


#: The first bytes of every SQLite database: the live server's game store (``mulle-serve --db``).
SQLITE_MAGIC = b"SQLite format 3\x00"


def read_records(path: str | Path) -> Iterator[tuple[str, GameRecord]]:
    """Yield ``(where, GameRecord)`` for every finished-or-running game of a record file (aborted arena games skipped).

    ``where`` is ``file:line``. A file whose text starts with ``{`` and parses as one JSON
    object is one record; otherwise each non-empty line is one. The live server's game
    store (its SQLite file) is read as it stands, every stored game oldest first
    (``where`` is ``file#game id``): people's games need no export step.
    """
    p = check_input_path(path, "game record file", limit=None)
    with open(p, "rb") as raw:
        if raw.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC:
            yield from _stored_games(p)
            return
    with open(p, encoding="utf-8") as fh:
        head = fh.read(1 << 16)
    whole = None
    if head.lstrip().startswith("{") and "\n{" not in head.strip():
        try:
            whole = parse_json(p.read_bytes(), str(p)) if p.stat().st_size <= DEFAULT_READ_LIMIT else None
        except JSONInputError:
            whole = None  # read line by line below, where a bad line is named
    if isinstance(whole, dict):
        yield from _record(f"{p}", whole)
        return
    with open(p, encoding="utf-8", errors="strict") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                data = parse_json(line, str(p), line=n)
            except JSONInputError as exc:
                raise RecordsError(f"{exc}; a record file holds one game record per line (or one record as "
                                   "a JSON object)") from None
            yield from _record(f"{p}:{n}", data)


def _stored_games(p: Path) -> Iterator[tuple[str, GameRecord]]:
    # Training knows every layer (docs/architecture.md): the store's own reader, read-only,
    # beside a running server (SQLite's WAL lets readers in while it writes).
    from live.store import GameStore, StoreError

    try:
        store = GameStore(p)
    except (StoreError, OSError) as exc:
        raise RecordsError(f"{p}: {exc}") from None
    try:
        for game in store.export():
            yield from _record(f"{p}#{game['game_id']}", game)
    except StoreError as exc:  # a hand-edited row the bounded reader refuses
        raise RecordsError(f"{p}: {exc}") from None
    finally:
        store.close()


def _record(where: str, data: Any) -> list[tuple[str, GameRecord]]:
    if isinstance(data, dict) and data.get("status") not in (None, "ok", "forfeit"):
        return []  # an arena game that did not finish
    try:
        return [(where, GameRecord.from_dict(data))]
    except MulleError as exc:
        raise RecordsError(f"{where}: {exc}") from None


def _decisions(where: str, record: GameRecord, game: int
               ) -> tuple[list[GameDecision], list[float], list[Afterstates]]:
    """Replay one record: its decisions with a choice (rows, outcomes, afterstates)."""
    m = Match(record.seed, record.ruleset, record.specs)
    rows: list[GameDecision] = []
    after: list[Afterstates] = []
    steps = [0, 0]
    try:
        for i, text in enumerate(record.moves, 1):
            st = m.state
            p = st.to_move
            legal = st.legal_moves()
            chosen = next((mv for mv in legal if str(mv) == text), None)
            if chosen is None:
                m.play(text)  # raises the engine's error saying why the move is illegal
            assert chosen is not None  # (for mypy: play raised)
            if len(legal) > 1:
                view = m.view(p)
                row = decision_row(view, legal, chosen, [], steps[p])
                rows.append((game, *row))
                after.append(decision_afterstates(view, legal, row[1]))
            steps[p] += 1
            m.play(chosen)
    except MulleError as exc:
        raise RecordsError(f"{where}: move {i} ({text!r}): {exc}") from None
    scores = m.state.scores() if m.over else None
    outcomes = [(scores[r[5]] - scores[1 - r[5]]) if scores else math.nan for r in rows]
    return rows, outcomes, after


def records_to_data(paths: str | Path | Iterable[str | Path], out: str | Path, rules: dict[str, Any] | None = None,
                    shard_games: int = 50, progress: Callable[[int], object] | None = None) -> dict[str, Any]:
    """Turn the games of the record files ``paths`` played under ``rules`` into a cloning data set in ``out``.

    Returns ``{"games", "decisions", "other_rules", "files"}``. A rerun with the same
    files keeps the shards already written; other files or rules are refused.
    """
    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    ruleset = Ruleset.from_dict(rules)
    out = Path(out)
    spec = {"format": FORMAT, "label": "choice", "teacher": None, "opponents": [], "seed": None,
            "rules": ruleset.changes(), "shard_games": shard_games, "obs_fingerprint": layout_fingerprint(),
            "max_legal": MAX_LEGAL, "versions": {}, "afterstates": True,
            "sources": [{"file": str(p), "sha256": _digest(check_input_path(p, "game record file", limit=None))}
                        for p in paths]}
    _check_dir(out, spec)
    games = decisions = other = 0
    rows: list[GameDecision] = []
    outcomes: list[float] = []
    after: list[Afterstates] = []

    def flush(shard: int) -> None:
        nonlocal rows, outcomes, after
        if not shard_path(out, shard).is_file():
            write_shard(out, shard, shard_bytes(decision_arrays(rows, outcomes, after)))
        rows, outcomes, after = [], [], []

    for path in paths:
        for where, record in read_records(path):
            if record.ruleset != ruleset:
                other += 1
                continue
            shard = games // shard_games
            if not shard_path(out, shard).is_file():
                r, o, a = _decisions(where, record, games)
                rows += r
                outcomes += o
                after += a
                decisions += len(r)
            games += 1
            if games % shard_games == 0:
                flush(shard)
            if progress:
                progress(games)
    if games % shard_games:
        flush(games // shard_games)
    if games == 0:
        raise RecordsError(f"no game under these rules ({ruleset.changes() or 'the default rules'}) in "
                           f"{', '.join(map(str, paths))} ({other} under other rules)")
    return {"games": games, "decisions": decisions, "other_rules": other, "files": [str(p) for p in paths]}
