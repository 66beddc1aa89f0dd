"""The results file: JSON Lines, one finished game per line, written as games finish.

Durability: every line goes to the operating system at once (one ``write``, repeated
only if the system takes fewer bytes than asked), so killing the process (Ctrl-C,
``kill -9``) loses nothing that finished; ``fsync`` runs at most
every ``fsync_interval`` seconds (default 1 s) and on close, so an operating-system
crash or power cut loses at most that last second of games.

Reading is forgiving: a line that is not valid JSON is reported and skipped; a torn
last line (no newline: the writer was killed mid-write) is copied to
``<file>.torn-<time>`` and cut off before new lines are appended, so the file stays
valid JSON Lines.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field

log = logging.getLogger("arena.results")


@dataclass
class Loaded:
    """What :func:`load` found in an existing results file."""

    lines: list[dict] = field(default_factory=list)
    corrupt: list[int] = field(default_factory=list)
    torn: bytes = b""
    torn_backup: str | None = None

    def problems(self) -> list[str]:
        """Human-readable notes about skipped or repaired lines."""
        out = []
        if self.corrupt:
            shown = ", ".join(map(str, self.corrupt[:10])) + (" ..." if len(self.corrupt) > 10 else "")
            out.append(f"skipped {len(self.corrupt)} corrupt line(s) (line {shown})")
        if self.torn:
            out.append(
                f"cut off a truncated last line ({len(self.torn)} bytes"
                + (f", saved to {self.torn_backup}" if self.torn_backup else "")
                + "); that game will be played again"
            )
        return out


def load(path: str, repair: bool = True) -> Loaded:
    """Read every valid line of ``path`` (missing file: nothing).

    With ``repair`` a torn tail is backed up and truncated away so appends start on a
    fresh line.
    """
    out = Loaded()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return out
    end = data.rfind(b"\n") + 1
    body, tail = data[:end], data[end:]
    for no, raw in enumerate(body.split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            out.corrupt.append(no)
            continue
        if not isinstance(obj, dict) or "game_id" not in obj:
            out.corrupt.append(no)
            continue
        out.lines.append(obj)
    if tail.strip():
        out.torn = tail
        if repair:
            backup = f"{path}.torn-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
            with open(backup, "wb") as f:
                f.write(tail)
            out.torn_backup = backup
    if tail and repair:
        with open(path, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
    for note in out.problems():
        log.warning("%s: %s", path, note)
    return out


class Writer:
    """Appends result lines to a JSON Lines file (see the module docstring for durability)."""

    def __init__(self, path: str, fsync_interval: float = 1.0) -> None:
        self.path = path
        self.fsync_interval = fsync_interval
        # Unbuffered binary: each line goes to the OS at once, normally in one write() call.
        self._f = open(path, "ab", buffering=0)
        self._last_sync = time.monotonic()
        self.written = 0

    def write(self, line: dict) -> None:
        """Append one line and hand it to the operating system at once."""
        data = memoryview((json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode())
        # A raw write() may take fewer bytes than given (signal, full disk, pipe);
        # the rest must follow or the line is torn.
        while data:
            n = self._f.write(data)
            if not n:
                raise OSError(f"{self.path}: write() took no bytes")
            data = data[n:]
        self.written += 1
        now = time.monotonic()
        if now - self._last_sync >= self.fsync_interval:
            os.fsync(self._f.fileno())
            self._last_sync = now

    def close(self) -> None:
        """Flush, fsync and close."""
        if not self._f.closed:
            os.fsync(self._f.fileno())
            self._f.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def comparable(line: dict) -> dict:
    """``line`` without the keys that change between runs (timings, worker pid)."""
    from .worker import VOLATILE_KEYS

    return {k: v for k, v in line.items() if k not in VOLATILE_KEYS}
