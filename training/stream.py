"""Teacher data read from disk in shuffled chunks: an afterstate fit in bounded memory.

A fit used to load every afterstate of its data sets into one array (a byte per entry:
8.3 M afterstates are 4.3 GB, the shipped generation's 20 M would be 10 GB). A
:class:`ShardSource` instead keeps only a small index in memory (about 12 bytes a
decision: its game, its number of afterstates, its source) and, each epoch, reads the
shards in a shuffled order, a *chunk* of shards at a time: the chunk's training
decisions are shuffled and cut into batches, then the next chunk is read. The memory a
fit needs is then bounded by the chunk size, which :func:`chunk_rows_for` derives from
a budget in gigabytes, whatever the size of the data.

When all the data fits in one chunk the fit is exactly the in-memory fit (the same
decisions in the same batches: tested). With several chunks a batch draws from one
chunk only; a chunk of several hundred thousand decisions spread over shards of every
data set mixes as well as a global shuffle does (the held-out regret of the two fits on
the same data is within noise: benchmarks/bench_fit_memory.py, docs/learning.md).

Every source also carries a *weight* per decision (one per data set, ``dir=weight``)
and whether a decision's label is the teacher's values or only the move a player chose
(game records, :mod:`training.records`): the fit regresses the former and clones the
latter (:mod:`training.afterfit`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from mulle_env.observation import OBS_SIZE

from .teacher import CodedRows, TeacherData, TeacherDataError, _stack_rows, check_data_dir

__all__ = ["BYTES_PER_ROW", "Chunk", "MemorySource", "ShardSource", "Source", "chunk_rows_for", "parse_source"]

#: Memory one afterstate row of a loaded chunk takes: its encoding (a byte per entry), target, decision index.
BYTES_PER_ROW = OBS_SIZE + 4 + 4 + 8
#: What a fit holds besides its chunk (torch, the net, the optimizer, the index, the held-out set), in GB.
BASE_GB = 1.25
#: The held-out set is at most this many decisions (about 180 MB of afterstates), however large the data.
HELDOUT_CAP = 50_000


def chunk_rows_for(memory_gb: float) -> int:
    """The afterstate rows of a chunk that keep a fit within ``memory_gb`` gigabytes (at least 100,000)."""
    free = max(0.25, float(memory_gb) - BASE_GB) * 1e9
    # A chunk is built beside the one before it is freed: two may be alive for a moment.
    return max(100_000, int(free / 2 / BYTES_PER_ROW))


def parse_source(text: str) -> tuple[str, float]:
    """``"dir"`` or ``"dir=weight"`` -> ``(dir, weight)``; the weight multiplies the decisions' losses."""
    path, eq, tail = str(text).rpartition("=")
    if eq:
        try:
            weight = float(tail)
        except ValueError:
            return str(text), 1.0
        if not weight > 0 or weight != weight or weight == float("inf"):
            raise ValueError(f"{text!r}: a data set's weight must be a positive number, not {tail!r}")
        return path, weight
    return str(text), 1.0


@dataclass
class Chunk:
    """The decisions of some shards, loaded: what a fit step reads.

    ``data`` holds the teacher-data arrays of those decisions (``legal``, ``values``,
    ``action``, ``game``, ``after_obs``, ``after_banked``, ...), ``ids`` their global
    decision numbers, ``weight`` their loss weights and ``choice`` whether their label is
    only the move played (game records).
    """

    data: TeacherData
    ids: NDArray[np.integer[Any]]
    weight: NDArray[np.float32]
    choice: NDArray[np.bool_]


class Source(Protocol):
    """What a fit reads its decisions through: :class:`MemorySource` or :class:`ShardSource`."""

    @property
    def games(self) -> NDArray[np.integer[Any]]:
        """Each decision's game (global numbers, unique across data sets)."""

    @property
    def counts(self) -> NDArray[np.integer[Any]]:
        """Each decision's number of afterstate rows (its stored legal moves)."""

    @property
    def decisions(self) -> int:
        """Number of decisions."""

    def describe(self) -> dict[str, Any]:
        """What identifies the data (a checkpoint of another data set is not resumed)."""

    def plan(self, epoch: int, seed: int) -> list[list[int]]:
        """The chunks of epoch ``epoch``, in the order they are read."""

    def decisions_of(self, chunk: list[int]) -> NDArray[np.integer[Any]]:
        """The global numbers of the decisions of ``chunk``, in the order :meth:`load` gives them."""

    def load(self, chunk: list[int]) -> Chunk:
        """``chunk``'s decisions, loaded."""

    def subset(self, decisions: NDArray[np.integer[Any]]) -> Chunk:
        """Just ``decisions`` (global numbers, sorted), loaded."""


class MemorySource:
    """Teacher data already in memory (:func:`training.teacher.load`), as one chunk."""

    def __init__(self, data: TeacherData, weight: NDArray[Any] | None = None,
                 choice: NDArray[Any] | None = None) -> None:
        self.data = data
        n = len(data["action"])
        self.weight = np.ones(n, dtype=np.float32) if weight is None else np.asarray(weight, dtype=np.float32)
        self.choice = np.zeros(n, dtype=bool) if choice is None else np.asarray(choice, dtype=bool)
        self.games = np.asarray(data["game"])
        self.counts = (data["legal"] >= 0).sum(axis=1)

    @property
    def decisions(self) -> int:
        """Number of decisions."""
        return len(self.games)

    def describe(self) -> dict[str, Any]:
        """What identifies the data (a checkpoint of another data set is not resumed)."""
        value = self.data["values"][self.data["legal"] >= 0]
        return {"decisions": self.decisions, "digest": float(np.nansum(value[:: max(1, len(value) // 997)]))}

    def plan(self, epoch: int, seed: int) -> list[list[int]]:
        """The chunks of one epoch: here always the one chunk ``0``."""
        return [[0]]

    def decisions_of(self, chunk: list[int]) -> NDArray[np.integer[Any]]:
        """The global numbers of the decisions of ``chunk``: here all."""
        return np.arange(self.decisions)

    def load(self, chunk: list[int]) -> Chunk:
        """The whole data as one chunk."""
        return Chunk(self.data, np.arange(self.decisions), self.weight, self.choice)

    def subset(self, decisions: NDArray[np.integer[Any]]) -> Chunk:
        """Just ``decisions`` (global numbers, sorted), loaded."""
        return _take(self.load([0]), np.asarray(decisions))


class ShardSource:
    """Teacher data sets on disk, read a chunk of shards at a time (see the module docstring).

    Args:
        sources: Data directories, each ``dir`` or ``(dir, weight)`` or ``"dir=weight"``.
        chunk_rows: Afterstate rows a chunk holds at most (:func:`chunk_rows_for`).
    """

    def __init__(self, sources: Iterable[str | tuple[str | Path, float]], chunk_rows: int | None = None) -> None:
        self.chunk_rows = int(chunk_rows or chunk_rows_for(4.0))
        self.shards: list[Path] = []
        self.source_of: list[int] = []
        self.dirs: list[tuple[str, float, bool]] = []
        games: list[NDArray[np.int64]] = []
        counts: list[NDArray[np.integer[Any]]] = []
        owner: list[NDArray[np.int32]] = []
        offset = 0
        for k, src in enumerate(sources):
            d, weight = (src if isinstance(src, tuple) else parse_source(src))
            d = Path(d)
            spec = _read_spec(d)
            if not spec.get("afterstates"):
                raise TeacherDataError(f"{d} holds no afterstates: generate it with afterstates=True "
                                       "(mulle-expert data --afterstates)")
            self.dirs.append((str(d), float(weight), spec.get("label", "values") == "choice"))
            top = offset
            for path in sorted(d.glob("shard_*.npz")):
                with np.load(path, allow_pickle=False) as z:
                    g = z["game"].astype(np.int64) + offset
                    c = (z["legal"] >= 0).sum(axis=1)
                games.append(g)
                counts.append(c)
                owner.append(np.full(len(g), len(self.shards), dtype=np.int32))
                self.shards.append(path)
                self.source_of.append(k)
                if len(g):
                    top = max(top, int(g.max()) + 1)
            offset = top
        if not self.shards:
            raise TeacherDataError(f"no shards in {', '.join(d for d, _, _ in self.dirs)}")
        self.games = np.concatenate(games)
        self.counts = np.concatenate(counts).astype(np.int32)
        self.shard_of = np.concatenate(owner)
        self.first = np.zeros(len(self.shards) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.shard_of, minlength=len(self.shards)), out=self.first[1:])
        self.rows_of = np.bincount(self.shard_of, weights=self.counts, minlength=len(self.shards)).astype(np.int64)

    @property
    def decisions(self) -> int:
        """Number of decisions in all shards."""
        return len(self.games)

    def describe(self) -> dict[str, Any]:
        """What identifies the data: its directories, weights and every shard's name and size."""
        names = "|".join(f"{p.parent.name}/{p.name}:{p.stat().st_size}" for p in self.shards)
        return {"decisions": self.decisions, "sources": [[Path(d).name, w] for d, w, _ in self.dirs],
                "shards": zlib.crc32(names.encode())}

    def plan(self, epoch: int, seed: int) -> list[list[int]]:
        """The chunks of epoch ``epoch``: shard numbers, in a shuffled order, grouped up to ``chunk_rows`` rows."""
        if int(self.rows_of.sum()) <= self.chunk_rows:
            return [list(range(len(self.shards)))]
        order = np.random.default_rng([seed, epoch, 7]).permutation(len(self.shards))
        chunks: list[list[int]] = []
        cur: list[int] = []
        rows = 0
        for s in order.tolist():
            if cur and rows + self.rows_of[s] > self.chunk_rows:
                chunks.append(sorted(cur))
                cur, rows = [], 0
            cur.append(s)
            rows += int(self.rows_of[s])
        if cur:
            chunks.append(sorted(cur))
        return chunks

    def decisions_of(self, chunk: list[int]) -> NDArray[np.integer[Any]]:
        """The global numbers of the decisions of the shards ``chunk``, in the order :meth:`load` gives them."""
        return np.concatenate([np.arange(self.first[s], self.first[s + 1]) for s in chunk])

    def load(self, chunk: list[int]) -> Chunk:
        """Read the shards ``chunk`` (sorted) into memory: a byte per encoding entry when the values allow."""
        return self._read(chunk, None)

    def subset(self, decisions: NDArray[np.integer[Any]]) -> Chunk:
        """Just ``decisions`` (global numbers, sorted), read from the shards that hold them."""
        decisions = np.asarray(decisions, dtype=np.int64)
        shards = np.unique(self.shard_of[decisions]).tolist()
        return self._read(shards, decisions)

    def _read(self, shards: list[int], keep: NDArray[np.integer[Any]] | None) -> Chunk:
        # A shard's small arrays, and where to read its afterstates ("_path", "_rows").
        parts: list[dict[str, Any]] = []
        ids: list[NDArray[np.integer[Any]]] = []
        rows_total = 0
        for s in shards:
            lo, hi = self.first[s], self.first[s + 1]
            sel = None if keep is None else keep[(keep >= lo) & (keep < hi)] - lo
            with np.load(self.shards[s], allow_pickle=False) as z:
                part = {k: z[k] for k in z.files if k not in ("obs", "after_obs")}
                part["_path"] = self.shards[s]
            part["game"] = self.games[lo:hi]
            if sel is not None:
                rows = _row_ranges(self.counts[lo:hi], sel)
                part = {k: (v if k == "_path" else v[rows] if k == "after_banked" else v[sel]) for k, v in part.items()}
                part["_rows"] = rows
            parts.append(part)
            ids.append(np.arange(lo, hi) if sel is None else sel + lo)
            rows_total += len(part["after_banked"])
        small = [k for k in parts[0] if not k.startswith("_") and all(k in p for p in parts)]
        data: TeacherData = {k: np.concatenate([p[k] for p in parts]) for k in small}
        data["after_obs"] = _stack_rows(parts, "after_obs", rows_total, compact=True)
        gid = np.concatenate(ids)
        src = np.asarray(self.source_of)[self.shard_of[gid]]
        weight = np.array([w for _, w, _ in self.dirs], dtype=np.float32)[src]
        choice = np.array([c for _, _, c in self.dirs], dtype=bool)[src]
        return Chunk(data, gid, weight, choice)


def _row_ranges(counts: NDArray[np.integer[Any]], decisions: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
    """The afterstate rows of ``decisions`` (local numbers) in a shard whose decisions have ``counts`` rows."""
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    if len(decisions) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.arange(start[i], start[i] + counts[i]) for i in decisions])


def _take(chunk: Chunk, decisions: NDArray[np.integer[Any]]) -> Chunk:
    """The part of an in-memory chunk that is ``decisions`` (indices into it)."""
    data = chunk.data
    counts = (data["legal"] >= 0).sum(axis=1)
    rows = _row_ranges(counts, decisions)
    out: TeacherData = {}
    for k, v in data.items():
        if k in ("after_obs", "after_banked"):
            out[k] = v[rows] if k == "after_banked" else _rows_of(v, rows)
        elif hasattr(v, "__len__") and len(v) == len(counts):
            out[k] = v[decisions]
    return Chunk(out, chunk.ids[decisions], chunk.weight[decisions], chunk.choice[decisions])


def _rows_of(obs: NDArray[Any] | CodedRows, rows: NDArray[np.int64]) -> NDArray[Any] | CodedRows:
    if isinstance(obs, CodedRows):
        return CodedRows(obs.codes[rows], obs.table)
    return obs[rows]


def _read_spec(d: Path) -> dict[str, Any]:
    return check_data_dir(d)
