"""The results file: JSON Lines, one finished game per line, written as games finish.

Durability: every line goes to the operating system at once (one ``write``, repeated
only if the system takes fewer bytes than asked), so killing the process (Ctrl-C,
``kill -9``) loses nothing that finished; ``fsync`` runs at most
every ``fsync_interval`` seconds (default 1 s) and on close, so an operating-system
crash or power cut loses at most that last second of games.

Reading is forgiving: a line that is not valid JSON, or whose keys break the schema
(:func:`check_line`: a wrong type, a missing key, a winner the scores contradict), is
reported and skipped; a torn last line (no newline: the writer was killed mid-write) is
copied to ``<file>.torn-<time>`` and cut off before new lines are appended, so the file
stays valid JSON Lines.

One writer per file: a run holds an exclusive lock on the results file (:func:`lock`,
``flock``, released by the operating system even after ``kill -9``) from before it reads
the file until it closes it, and a second run on the same file refuses to start
(:class:`ResultsFileBusyError`) instead of playing every game again.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, TypeGuard

from mulle_env.engine.rng import seed_problem
from mulle_env.files import JSONInputError, check_input_path, parse_json

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one run per file is then the user's care
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("arena.results")


#: The longest results line read (16 MiB; a 100-set game with its move list is about 150 kB).
#: A longer line is reported as corrupt and skipped, so a damaged file cannot fill memory.
MAX_LINE_BYTES = 16 * 1024 * 1024


@dataclass
class Loaded:
    """What :func:`load` found in an existing results file."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    #: The line number in the file of each of :attr:`lines` (same order).
    numbers: list[int] = field(default_factory=list)
    #: Line numbers of lines that are not a JSON object with a ``game_id`` (why: :attr:`corrupt_why`).
    corrupt: list[int] = field(default_factory=list)
    #: What is wrong with each line of :attr:`corrupt`, by line number.
    corrupt_why: dict[int, str] = field(default_factory=dict)
    #: ``(line number, what is wrong)`` of JSON lines that break the schema.
    invalid: list[tuple[int, str]] = field(default_factory=list)
    #: Line numbers of lines longer than :data:`MAX_LINE_BYTES` (skipped unread).
    too_long: list[int] = field(default_factory=list)
    #: The start of a torn last line (at most :data:`MAX_LINE_BYTES`) and its full size in bytes.
    torn: bytes = b""
    torn_size: int = 0
    torn_backup: str | None = None

    def problems(self) -> list[str]:
        """Human-readable notes about skipped or repaired lines."""
        out = []
        if self.corrupt:
            shown = "; ".join(f"line {no}: {self.corrupt_why.get(no, 'not a results line')}" for no in self.corrupt)
            out.append(f"set aside {len(self.corrupt)} corrupt line(s) ({shown}); those games are played again")
        if self.too_long:
            shown = ", ".join(map(str, self.too_long))
            out.append(f"set aside {len(self.too_long)} line(s) longer than {MAX_LINE_BYTES:,} bytes, which no "
                       f"game writes (line {shown})")
        if self.invalid:
            shown = "; ".join(f"line {no}: {why}" for no, why in self.invalid)
            out.append(f"set aside {len(self.invalid)} line(s) that break the results schema or hold a result no "
                       f"game can end with ({shown}); those games are played again")
        if self.torn_size:
            out.append(
                f"cut off a truncated last line ({self.torn_size} bytes"
                + (f", saved to {self.torn_backup}" if self.torn_backup else "")
                + "); that game will be played again"
            )
        return out


def load(path: str, repair: bool = True, check: Callable[[dict[str, Any]], str | None] | None = None) -> Loaded:
    """Read every valid line of ``path`` (missing file: nothing).

    ``path`` must be a regular file (:func:`mulle_env.files.check_input_path`; a
    :class:`~mulle_env.files.PathError` otherwise). It is read line by line, each line
    bounded by :data:`MAX_LINE_BYTES`. ``check(line)``, when given, is asked after the
    schema (:func:`check_line`) and may name what else is wrong with a line (the game's
    own check of a result); such a line is reported and skipped like one that breaks the
    schema. With ``repair`` a torn tail is backed up and truncated away so appends start
    on a fresh line.
    """
    out = Loaded()
    if not os.path.lexists(path):
        return out
    check_input_path(path, "the results file", limit=None)
    torn_at = None
    with open(path, "rb") as f:
        pos, no = 0, 0
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            no += 1
            start, pos = pos, pos + len(raw)
            if not raw.endswith(b"\n"):
                while len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):  # skip the rest, unread
                    raw = f.readline(MAX_LINE_BYTES + 1)
                    pos += len(raw)
                if not raw.endswith(b"\n"):  # the file ends inside this line: a torn tail
                    torn_at = start
                    f.seek(start)
                    out.torn = f.read(MAX_LINE_BYTES)
                    out.torn_size = pos - start
                    break
                out.too_long.append(no)
                continue
            if not raw.strip():
                continue
            _read_line(raw, no, out, check)
    if torn_at is not None and not out.torn.strip():  # only blanks after the last newline: no game is lost
        out.torn, out.torn_size = b"", 0
    if torn_at is not None and repair:
        _repair_tail(path, torn_at, out)
    for note in out.problems():
        log.warning("%s: %s", path, note)
    return out


def _repair_tail(path: str, torn_at: int, out: Loaded) -> None:
    """Copy the torn tail of ``path`` aside (when it holds anything) and cut it off, or change nothing.

    A disk that is still full (or any other I/O error) must not cost a game: the tail is cut only
    once its copy is whole on disk, a partial copy is removed, and the error says what to do.
    """
    backup = None
    try:
        if out.torn.strip():
            backup = f"{path}.torn-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
            with open(path, "rb") as src, open(backup, "wb") as dst:
                src.seek(torn_at)
                shutil.copyfileobj(src, dst)
                dst.flush()
                os.fsync(dst.fileno())
        with open(path, "r+b") as f:
            f.truncate(torn_at)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        if backup is not None:
            try:
                os.unlink(backup)  # an empty or partial copy would only mislead
            except OSError:
                pass
        raise ResultsWriteError(
            f"{path} ends in a torn line ({out.torn_size:,} bytes) that must be set aside before new games are "
            f"appended, and that failed: {exc.strerror or exc}; nothing was changed. Free some space (or fix the "
            "disk) and run the same command again") from None
    out.torn_backup = backup


def _read_line(raw: bytes, no: int, out: Loaded, check: Callable[[dict[str, Any]], str | None] | None) -> None:
    """Add line ``no`` to ``out``: as a line, or as a corrupt or invalid one."""
    try:
        # Bounded: a line nested thousands deep is set aside like any other line that is not JSON.
        obj = parse_json(raw, "results line", line=no, max_bytes=MAX_LINE_BYTES)
    except JSONInputError as exc:
        out.corrupt.append(no)
        out.corrupt_why[no] = exc.reason
        return
    if not isinstance(obj, dict) or "game_id" not in obj:
        out.corrupt.append(no)
        out.corrupt_why[no] = ("a JSON object without a 'game_id'" if isinstance(obj, dict)
                               else f"a JSON {type(obj).__name__}, not an object with a 'game_id'")
        return
    why = check_line(obj)
    if why is None and check is not None:
        why = check(obj)
    if why is not None:
        out.invalid.append((no, why))
        return
    out.lines.append(obj)
    out.numbers.append(no)


STATUSES = ("ok", "forfeit", "aborted")


def _is_int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x: object) -> TypeGuard[int | float]:
    # Python's json reads NaN and Infinity, which no score or duration can be.
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_line(line: dict[str, Any]) -> str | None:
    """What is wrong with a results line (``None`` if nothing): the schema of docs/arena.md.

    Checked: the key types the statistics read (``game_id``, ``specs``, ``seed``,
    ``status``, ``scores``, ``winner``, ``forfeit``, ``pair``, ``moves``, ``move_list``,
    ``ruleset``, ``agent_versions`` and ``engine_backend``: absent or null in lines written
    before they were recorded), that ``game_id`` names the line's specs and seed, and that the winner
    agrees with the scores (a finished game) or the forfeit (a forfeited one).
    """
    gid, specs, seed, status = line.get("game_id"), line.get("specs"), line.get("seed"), line.get("status")
    if not isinstance(gid, str):
        return f"'game_id' must be a string, not {gid!r}"
    if not (isinstance(specs, list) and len(specs) == 2 and all(isinstance(x, str) for x in specs)):
        return f"'specs' must be a list of two spec strings, not {specs!r}"
    if (why := seed_problem(seed, "'seed'")) is not None or not _is_int(seed):
        return why or f"'seed' must be an int, not {seed!r}"
    if not gid.startswith(f"{specs[0]}|{specs[1]}|{seed}|"):
        return f"'game_id' {gid!r} does not name the line's specs and seed"
    if status not in STATUSES:
        return f"'status' must be one of {', '.join(STATUSES)}, not {status!r}"
    if not isinstance(line.get("ruleset", {}), dict):
        return f"'ruleset' must be an object, not {line['ruleset']!r}"
    for key in ("pair", "moves", "index"):
        value = line.get(key)
        if value is not None and (not _is_int(value) or value < 0):
            return f"'{key}' must be an int >= 0 or null, not {value!r}"
    backend = line.get("engine_backend")
    if backend is not None and not (isinstance(backend, str) and backend):
        return f"'engine_backend' must be a non-empty string or null, not {backend!r}"
    versions = line.get("agent_versions")
    if versions is not None and not (isinstance(versions, list) and len(versions) == 2
                                     and all(isinstance(v, str) and v for v in versions)):
        return f"'agent_versions' must be a list of two non-empty strings or null, not {versions!r}"
    if "move_list" in line and not (isinstance(line["move_list"], list)
                                    and all(isinstance(m, str) for m in line["move_list"])):
        return "'move_list' must be a list of move texts"
    for key in ("duration",):
        if line.get(key) is not None and not _is_num(line[key]):
            return f"'{key}' must be a number or null, not {line[key]!r}"
    if "scores" not in line or "winner" not in line:
        return "'scores' and 'winner' are required (null where the game has none)"
    scores, winner, forfeit = line["scores"], line["winner"], line.get("forfeit")
    if scores is not None and not (isinstance(scores, list) and len(scores) == 2 and all(map(_is_num, scores))):
        return f"'scores' must be a list of two numbers or null, not {scores!r}"
    if winner is not None and (not _is_int(winner) or winner not in (0, 1)):
        return f"'winner' must be 0, 1 or null, not {winner!r}"
    if forfeit is not None and (not _is_int(forfeit) or forfeit not in (0, 1)):
        return f"'forfeit' must be 0, 1 or null, not {forfeit!r}"
    if status == "ok":
        if scores is None:
            return "a finished game ('status': 'ok') needs its 'scores'"
        expected = 0 if scores[0] > scores[1] else 1 if scores[1] > scores[0] else None
        if winner != expected:
            return f"'winner' {winner!r} contradicts the scores {scores} (expected {expected!r})"
        if forfeit is not None:
            return f"a finished game ('status': 'ok') has no 'forfeit', not {forfeit!r}"
    elif status == "forfeit":
        if forfeit is None or winner != 1 - forfeit:
            return f"a forfeit needs 'forfeit' 0 or 1 and the other seat as 'winner', not {forfeit!r}/{winner!r}"
    elif winner is not None or forfeit is not None:
        return "an aborted game has no 'winner' and no 'forfeit'"
    return None


class ResultsFileBusyError(RuntimeError):
    """Another run is writing the results file (it holds its lock)."""


@contextmanager
def lock(path: str) -> Iterator[None]:
    """Hold the one-writer lock of the results file ``path`` (created if missing) for the block.

    Raises :class:`ResultsFileBusyError` at once if another process (or another open
    of the file in this process) holds it.
    """
    f = open(path, "ab")
    try:
        if fcntl is not None:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ResultsFileBusyError(
                    f"{path} is being written by another run (it holds the file's lock); "
                    "wait for that run to end, or write to another file"
                ) from None
        yield
    finally:
        f.close()  # closing the file releases the lock


class ResultsWriteError(RuntimeError):
    """The results file took no more lines (disk full, I/O error); the lines written before it are kept."""


class Writer:
    """Appends result lines to a JSON Lines file (see the module docstring for durability).

    A failed write or ``fsync`` raises :class:`ResultsWriteError` saying how many lines
    this writer saved before it.
    """

    def __init__(self, path: str, fsync_interval: float = 1.0) -> None:
        self.path = path
        self.fsync_interval = fsync_interval
        # Unbuffered binary: each line goes to the OS at once, normally in one write() call.
        self._f = open(path, "ab", buffering=0)
        self._last_sync = time.monotonic()
        self.written = 0

    def write(self, line: dict[str, Any]) -> None:
        """Append one line and hand it to the operating system at once."""
        data = memoryview((json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode())
        # A raw write() may take fewer bytes than given (signal, full disk, pipe);
        # the rest must follow or the line is torn.
        try:
            while data:
                n = self._f.write(data)
                if not n:
                    raise OSError(f"{self.path}: write() took no bytes")
                data = data[n:]
        except OSError as exc:
            raise self._failed(exc) from None
        self.written += 1
        now = time.monotonic()
        if now - self._last_sync >= self.fsync_interval:
            self._sync()
            self._last_sync = now

    def _sync(self) -> None:
        try:
            os.fsync(self._f.fileno())
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> ResultsWriteError:
        return ResultsWriteError(
            f"writing the results file {self.path} failed ({exc.strerror or exc}); the {self.written} game(s) "
            "this run wrote before are saved (a partly written last line is cut off and replayed on the next run)"
        )

    def close(self) -> None:
        """Flush, fsync and close."""
        if not self._f.closed:
            try:
                self._sync()
            finally:
                self._f.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def comparable(line: dict[str, Any]) -> dict[str, Any]:
    """``line`` without the keys that change between runs (timings, worker pid)."""
    from .worker import VOLATILE_KEYS

    return {k: v for k, v in line.items() if k not in VOLATILE_KEYS}
