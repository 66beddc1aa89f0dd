"""Teacher data from search: decisions labelled with a value for every legal move.

A *teacher* is any agent with ``move_values(view, legal_moves, rng) -> [(move, value)]``
(:meth:`agents.pimc.PIMCAgent.move_values`, :meth:`agents.netsearch.NetSearchAgent.move_values`).
It plays games (against itself or a list of opponents); at every decision with more
than one legal move it records what its seat sees and the value of each move it
searched, and plays the best one (the first on a tie, exactly what its ``act`` plays).
With a *driver* (``driver=``, ``mulle-train data --driver``) the driver plays the
recorded seats' moves instead and the teacher only labels them: the positions are the
driver's own (DAgger's on-policy labels: a net learns the values of the positions it
reaches itself, not only of those its teacher reaches).

Data lives in a directory of *shards*, each the decisions of ``shard_games`` games:

* ``spec.json``: what the data is (teacher, opponents, seed, shard size, observation
  layout fingerprint); a rerun with other settings is refused, not mixed in.
* ``shard_00000.npz`` ...: compressed arrays, one row per decision:

  =============  ==========  =====================================================
  key            dtype       content
  =============  ==========  =====================================================
  ``obs``        float16     :func:`mulle_env.observation.encode_view` of the mover
  ``legal``      int16       legal action ids, padded with -1 to :data:`MAX_LEGAL`
  ``values``     float32     the teacher's value of each legal id (points, mover's
                             seat); NaN for padding and for moves it did not search
  ``action``     int16       the move played
  ``outcome``    float32     final score difference of the game, mover's seat
  ``banked``     float32     points banked at the decision, mover's seat
                             (:func:`banked_points`; the value head learns
                             ``outcome - banked``, the points still to come)
  ``step``       int16       the mover's decision number in the game (0-based)
  ``game``       int32       the game's index in the data set
  =============  ==========  =====================================================

  With ``afterstates=True`` a shard also holds, one row per stored legal move
  (decision by decision, in the order of ``legal``; a decision has as many rows as
  its non-padding ``legal`` entries):

  ================  ==========  ==================================================
  ``after_obs``     float16     the game's afterstate encoding of the move
                                (:meth:`training.games.TrainGame.afterstates_of`:
                                :func:`agents.learned.afterstate.encode_afterstates`,
                                :func:`agents.learned.casino.encode_casino_afterstates`):
                                the position it leaves, mover's seat
  ``after_banked``  float32     the mover's score difference after the move (Casino's:
                                relative to the game totals at the decision, as
                                ``pimc``'s values are)
  ================  ==========  ==================================================

The game is Mulle unless ``game=`` names another (``game="casino"``, ``mulle-train expert
--game casino``; :mod:`training.games`): the observation, the action ids, the banked
points, the afterstates and the game loop are then that game's, and ``spec.json`` records
it (``game``; absent: Mulle). A self-play data set made without afterstates gets them
afterwards, without searching again, by replaying its games (:func:`replay_afterstates`;
Casino's): the same shards a run with ``afterstates=True`` writes.

A shard is written to a temporary name and renamed, so it is either complete or
absent: an interrupted run loses at most the shards in progress, and a rerun makes
only the missing ones. Game ``g`` has a deal seed and agent random streams fixed by
``(seed, g)``, and every shard is made by one process from its games alone, so the
same seed gives the same data for any number of workers.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import DTypeLike, NDArray

from agents.base import Agent
from agents.learned.afterstate import encode_afterstates
from agents.rollout import best_index
from mulle_env.observation import OBS_SIZE
from mulle_env.util.files import replacing

from .games import TrainGame, train_game
from .workers import process_pool

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from mulle_env.engine import Move, PlayerView

    from .cluster import RayLabeller

__all__ = ["FORMAT", "MAX_LEGAL", "Afterstates", "Arrays", "CodedRows", "DecisionRow", "GameDecision", "LabellingAgent",
           "TeacherData", "TeacherDataError", "Valuer", "banked_points", "check_data_dir", "data_game", "deal_seed",
           "decision_afterstates", "decision_arrays", "decision_row", "generate", "label_shard", "load", "move_keys",
           "play_shard", "replay_afterstates", "shard_arrays", "shard_bytes", "stable_digest", "values_moves",
           "write_shard"]

#: Tag in ``spec.json``.
FORMAT = "mulle-teacher-data-2"
#: Legal-move lists are stored padded to this length (Mulle has about 50 at most).
MAX_LEGAL = 96
#: Opponent name meaning "the teacher itself" (both seats are recorded).
SELF = "self"
#: Arrays of encodings, loaded straight into one preallocated array each (see :func:`load`).
_LARGE = ("obs", "after_obs")

#: A shard's arrays by key (the table of the module docstring).
Arrays = dict[str, NDArray[Any]]
#: Teacher data in memory (:func:`load`): the arrays by key. The encodings (``obs``, ``after_obs``) may be
#: :class:`CodedRows` instead, which index like the arrays (rows in, float32 rows out): hence ``Any``.
TeacherData = dict[str, Any]
#: One stored decision (:func:`decision_row`): ``(obs, keys, values, key played, seat, step, banked)``.
DecisionRow = tuple[NDArray[np.float16], list[int], list[float], int, int, int, float]
#: A stored decision with its game's index first: the rows :func:`decision_arrays` takes.
GameDecision = tuple[int, NDArray[np.float16], list[int], list[float], int, int, int, float]
#: The afterstates of a decision's stored moves (:func:`decision_afterstates`): ``(after_obs, after_banked)``.
Afterstates = tuple[NDArray[np.float16], NDArray[np.float32]]


class TeacherDataError(ValueError):
    """A data directory made with other settings, or a teacher that cannot label moves."""


class Valuer(Protocol):
    """What makes an agent a teacher: ``move_values`` (:meth:`agents.pimc.PIMCAgent.move_values`, ...)."""

    def move_values(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random
                    ) -> list[tuple[Move, float]]: ...


def values_moves(agent: object) -> TypeIs[Valuer]:
    """Whether ``agent`` can label moves: it has a callable ``move_values``."""
    return callable(getattr(agent, "move_values", None))


class CodedRows:
    """Encodings stored as one byte per entry: ``codes`` (uint8) index ``table`` (float32).

    An encoding takes few distinct values (flags, counts over small constants: about a
    hundred in all), so a byte per entry holds the float16 data exactly in half its
    memory; this is what lets a fit hold four teacher data sets (about 19.4 M
    afterstates: 10 GB as bytes, 20 GB as float16) on a 23 GB machine. Indexing returns
    float32 rows, like ``array[rows].astype(np.float32)``.
    """

    def __init__(self, codes: NDArray[np.uint8], table: NDArray[np.float32]) -> None:
        self.codes = codes
        self.table = np.asarray(table, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def shape(self) -> tuple[int, ...]:
        """``(rows, OBS_SIZE)``, as the float16 array's."""
        return self.codes.shape

    def __getitem__(self, rows: NDArray[np.integer[Any]] | slice) -> NDArray[np.float32]:
        return self.table[self.codes[rows]]

    def astype(self, dtype: DTypeLike) -> NDArray[Any]:
        """All rows decoded to ``dtype`` (as ``ndarray.astype``)."""
        return self.table[self.codes].astype(dtype, copy=False)


class _Coder:
    """Assigns byte codes to float16 values as they are met (at most ``capacity``; ``None`` when exceeded)."""

    capacity = 256

    def __init__(self) -> None:
        self.lut = np.full(1 << 16, -1, dtype=np.int16)
        self.values: list[np.uint16] = []

    def encode(self, a: NDArray[Any]) -> NDArray[np.uint8] | None:
        if a.dtype != np.float16:
            raise TeacherDataError(f"encodings are stored as float16, this shard's are {a.dtype}")
        bits = a.view(np.uint16)
        seen = np.zeros(1 << 16, dtype=bool)
        seen[bits.ravel()] = True
        new = np.flatnonzero(seen & (self.lut < 0))
        if len(self.values) + len(new) > self.capacity:
            return None
        self.lut[new] = np.arange(len(self.values), len(self.values) + len(new))
        self.values.extend(new.astype(np.uint16))
        return self.lut[bits].astype(np.uint8)

    def table(self) -> NDArray[np.float32]:
        return np.array(self.values, dtype=np.uint16).view(np.float16).astype(np.float32)


def stable_digest(*parts: object) -> int:
    """A 64-bit number from ``parts`` joined by ``|``, the same in every process and on every machine.

    The seeds of the self-play games of teacher data and of DMC rounds come from it.
    """
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def deal_seed(seed: int, game: int) -> int:
    """The deal seed of game ``game`` of a data set with seed ``seed`` (53 bits, stable everywhere)."""
    return stable_digest("teacher-deal", seed, game) >> 11


def banked_points(view: PlayerView) -> float:
    """The score difference the viewer has banked: finished sets exactly, the set in play as mulle + tabbe + intake.

    Equal to :func:`agents.rollout.set_value` of the state the view comes from (tested),
    computed from the view's score sheets alone.
    """
    p, o = view.player, 1 - view.player
    v = 0.0
    done = {p: dict.fromkeys(("mulle", "tabbe", "intake"), 0), o: dict.fromkeys(("mulle", "tabbe", "intake"), 0)}
    for sheets in view.sheets:
        v += sheets[p]["total"] - sheets[o]["total"]
        for q in (p, o):
            for k in done[q]:
                done[q][k] += sheets[q][k]
    if not view.over:
        for k in done[p]:
            v += (view.scores[p][k] - done[p][k]) - (view.scores[o][k] - done[o][k])
    return v


def _stream(seed: int, game: int, seat: int) -> random.Random:
    return random.Random(stable_digest("teacher-rng", seed, game, seat))


class LabellingAgent(Agent):
    """Wraps a teacher: plays its best-valued move and records the decision with every move's value.

    ``rows`` collects ``(obs, legal ids, values, action, seat, step, banked)`` per decision with a choice.
    """

    def __init__(self, teacher: Agent, record_seats: Iterable[int] = (0, 1), afterstates: bool = False,
                 driver: Agent | None = None, game: str | TrainGame | None = None) -> None:
        if not values_moves(teacher):
            raise TeacherDataError(f"teacher {teacher.spec!r} has no move_values(view, legal_moves, rng); "
                                   "use pimc or netsearch")
        self.teacher = teacher
        #: Plays the moves when given (the teacher then only labels them).
        self.driver = driver
        self.spec = teacher.spec
        self.name = teacher.name
        self.record_seats = tuple(record_seats)
        self.afterstates = bool(afterstates)
        #: The game played (:mod:`training.games`): how a decision is encoded and stored.
        self.game = train_game(game)
        self.rows: list[DecisionRow] = []
        #: Per recorded decision, ``(after_obs float16 (k, OBS_SIZE), after_banked (k,))`` with ``afterstates``.
        self.after: list[Afterstates] = []
        self._steps = [0, 0]

    def reset(self) -> None:
        """A new game: reset the teacher (and driver) and the decision counters (recorded rows are kept)."""
        self.teacher.reset()
        if self.driver is not None:
            self.driver.reset()
        self._steps = [0, 0]

    def observe(self, event: tuple[int, Move]) -> None:
        """Pass the move on to the teacher (and driver)."""
        self.teacher.observe(event)
        if self.driver is not None:
            self.driver.observe(event)

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """The teacher's best-valued move (first on a tie), or the driver's, recording the decision."""
        p = view.player
        step = self._steps[p]
        self._steps[p] += 1
        if len(legal_moves) == 1:
            return legal_moves[0]
        scored = self.teacher.move_values(view, legal_moves, rng)
        if self.driver is None:
            move = scored[best_index([v for _, v in scored])][0]
        else:  # after the teacher, from the same stream: a driver that draws nothing leaves the labels as they were
            move = self.driver.act(view, legal_moves, rng)
        if p in self.record_seats:
            self.rows.append(decision_row(view, legal_moves, move, scored, step, self.game))
            if self.afterstates:
                self.after.append(decision_afterstates(view, legal_moves, self.rows[-1][1], self.game))
        return move


def move_keys(view: PlayerView, legal_moves: Sequence[Move]) -> list[int]:
    """The numbers a decision's moves are stored under: their action ids, or under ``forced_capture=False``
    (where a ``taking`` capture has no id) their places in the legal list."""
    if view.ruleset.forced_capture:
        return [m.id for m in legal_moves]  # type: ignore[misc]  # forced capture: every move has an id
    return list(range(len(legal_moves)))


def decision_row(view: PlayerView, legal_moves: Sequence[Move], move: Move, scored: Iterable[tuple[Move, float]],
                 step: int, game: str | TrainGame | None = None) -> DecisionRow:
    """One stored decision ``(obs, keys, values, key played, seat, step, banked)``; ``scored`` holds the
    ``(move, value)`` pairs a teacher searched (none for a game record's decision). ``game``: Mulle by default."""
    g = train_game(game)  # Mulle's object calls the same move_keys, encode_view and banked_points as before
    keys = g.move_keys(view, legal_moves)
    key_of = {str(m): k for m, k in zip(legal_moves, keys)}
    value_of = {key_of[str(m)]: v for m, v in scored}
    ids = keys[:MAX_LEGAL]
    played = key_of[str(move)]
    if played not in ids:
        ids[-1] = played
    return (g.encode_view(view).astype(np.float16), ids, [value_of.get(i, np.nan) for i in ids], played,
            view.player, step, g.banked_points(view))


def decision_afterstates(view: PlayerView, legal_moves: Sequence[Move], ids: list[int],
                         game: str | TrainGame | None = None) -> Afterstates:
    """``(after_obs float16, after_banked)`` of the stored moves ``ids`` (keys of the game's ``move_keys``);
    ``game``: Mulle by default."""
    g = train_game(game)
    by_key = dict(zip(g.move_keys(view, legal_moves), legal_moves))
    if g.name == "mulle":  # the call Mulle's data has always been made with
        obs, banked = encode_afterstates(view, [by_key[i] for i in ids])
    else:
        obs, banked = g.afterstates_of(view, [by_key[i] for i in ids])
    return obs.astype(np.float16), banked.astype(np.float32)


def shard_arrays(shard: int, teacher: str, opponents: list[str], shard_games: int, seed: int,
                 rules: dict[str, Any] | None = None, afterstates: bool = False, driver: str | None = None,
                 game: str = "mulle") -> Arrays:
    """Play the games of shard ``shard``: its arrays (the table of the module docstring).

    ``game``: the game's short name (:mod:`training.games`); its agents, its game loop and its
    observation store the decisions (Mulle's are the code this always ran: the same bytes).
    """
    import agents

    tg = train_game(game)
    rows: list[GameDecision] = []
    outcomes: list[float] = []
    after: list[Afterstates] = []
    for g in range(shard * shard_games, (shard + 1) * shard_games):
        opp_spec = opponents[(g // 2) % len(opponents)]
        seat = g % 2
        drive = agents.make(driver, game=tg.name) if driver else None
        if opp_spec == SELF:
            bot = LabellingAgent(agents.make(teacher, game=tg.name), afterstates=afterstates, driver=drive, game=tg)
            seats: list[Agent] = [bot, bot]
        else:
            bot = LabellingAgent(agents.make(teacher, game=tg.name), record_seats=(seat,), afterstates=afterstates,
                                 driver=drive, game=tg)
            opp = agents.make(opp_spec, game=tg.name)
            seats = [bot, opp] if seat == 0 else [opp, bot]
        scores = tg.play(seats, deal_seed(seed, g), [_stream(seed, g, 0), _stream(seed, g, 1)], rules)
        for row in bot.rows:
            p = row[4]
            rows.append((g, *row))
            outcomes.append(scores[p] - scores[1 - p])
        after.extend(bot.after)
    return decision_arrays(rows, outcomes, after if afterstates else None, tg.obs_size)


def decision_arrays(rows: Sequence[GameDecision], outcomes: Sequence[float],
                    after: Sequence[Afterstates] | None, obs_size: int = OBS_SIZE) -> Arrays:
    """A shard's arrays from its decisions: ``rows`` of ``(game, obs, ids, values, action, seat, step, banked)``,
    each decision's final score difference, and (or ``None``) its ``(after_obs, after_banked)``; ``obs_size``:
    the length of the game's observation (Mulle's by default)."""
    n = len(rows)
    legal = np.full((n, MAX_LEGAL), -1, dtype=np.int16)
    values = np.full((n, MAX_LEGAL), np.nan, dtype=np.float32)
    for i, (_, _, ids, vals, *_rest) in enumerate(rows):
        legal[i, : len(ids)] = ids
        values[i, : len(vals)] = vals
    arrays: Arrays = {
        "obs": np.array([r[1] for r in rows], dtype=np.float16).reshape(n, obs_size),
        "legal": legal,
        "values": values,
        "action": np.array([r[4] for r in rows], dtype=np.int16),
        "outcome": np.array(outcomes, dtype=np.float32),
        "step": np.array([r[6] for r in rows], dtype=np.int16),
        "banked": np.array([r[7] for r in rows], dtype=np.float32),
        "game": np.array([r[0] for r in rows], dtype=np.int32),
    }
    if after is not None:
        arrays["after_obs"] = (np.concatenate([a for a, _ in after]) if after
                               else np.zeros((0, obs_size), dtype=np.float16))
        arrays["after_banked"] = (np.concatenate([b for _, b in after]) if after
                                  else np.zeros(0, dtype=np.float32))
    return arrays


def shard_bytes(arrays: Arrays) -> bytes:
    """A shard file's bytes: a compressed ``.npz`` (the same arrays give the same bytes, on every machine)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]  # the keys name arrays, never allow_pickle
    return buf.getvalue()


def write_shard(out_dir: str | Path, shard: int, data: bytes) -> None:
    """Write shard ``shard``'s bytes atomically (a temporary name, then a rename): whole or absent."""
    with replacing(shard_path(out_dir, shard)) as tmp:
        tmp.write_bytes(data)


def label_shard(shard: int, teacher: str, opponents: list[str], shard_games: int, seed: int,
                rules: dict[str, Any] | None = None, afterstates: bool = False,
                driver: str | None = None, game: str = "mulle") -> tuple[int, bytes]:
    """Play shard ``shard`` and return ``(decisions, file bytes)``: what a remote worker sends back to be written."""
    arrays = shard_arrays(shard, teacher, opponents, shard_games, seed, rules, afterstates, driver, game)
    return len(arrays["action"]), shard_bytes(arrays)


def play_shard(out_dir: str, shard: int, teacher: str, opponents: list[str], shard_games: int, seed: int,
               rules: dict[str, Any] | None = None, afterstates: bool = False, driver: str | None = None,
               game: str = "mulle") -> int:
    """Play the games of shard ``shard`` and write it atomically; return its number of decisions."""
    n, data = label_shard(shard, teacher, opponents, shard_games, seed, rules, afterstates, driver, game)
    write_shard(out_dir, shard, data)
    return n


def _spec(teacher: str, opponents: list[str], seed: int, shard_games: int, rules: dict[str, Any] | None,
          afterstates: bool = False, driver: str | None = None, game: str = "mulle") -> dict[str, Any]:
    import agents

    tg = train_game(game)
    # Canonical specs leave defaults out, so "pimc" can name another agent after a default changes:
    # the agents' versions (agents.Agent.version) tell such data sets apart.
    named = [teacher, *opponents, *([driver] if driver else [])]
    versions = {s: str(getattr(agents.make(s, game=tg.name), "version", "1")) for s in named if s != SELF}
    spec = {"format": FORMAT, "teacher": teacher, "opponents": list(opponents), "seed": seed, "rules": rules or {},
            "shard_games": shard_games, "obs_fingerprint": tg.layout_fingerprint(), "max_legal": MAX_LEGAL,
            "versions": versions, "afterstates": bool(afterstates)}
    if driver:  # only when there is one, so the specs of data sets made before drivers existed still match
        spec["driver"] = driver
    if tg.name != "mulle":  # only for other games, so Mulle's data sets keep their specs
        spec["game"] = tg.name
    return spec


def _check_dir(out: Path, spec: dict[str, Any]) -> None:
    path = out / "spec.json"
    if path.is_file():
        old = json.loads(path.read_text())
        # Data sets made before agents had versions were made by version "1" of each agent.
        old.setdefault("versions", {s: "1" for s in spec["versions"]})
        old.setdefault("afterstates", False)
        diff = {k: (old.get(k), spec.get(k)) for k in {*spec, "driver", "game"} if old.get(k) != spec.get(k)}
        if diff:
            what = "; ".join(f"{k}: {a!r} there, {b!r} asked" for k, (a, b) in diff.items())
            raise TeacherDataError(f"{out} holds teacher data made with other settings ({what}); "
                                   "use another directory")
    else:
        out.mkdir(parents=True, exist_ok=True)
        with replacing(path) as tmp:
            tmp.write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n")


def check_data_dir(d: str | Path) -> dict[str, Any]:
    """The ``spec.json`` of the teacher data directory ``d``; a :class:`TeacherDataError` if it is not one of this
    encoding."""
    d = Path(d)
    spec_path = d / "spec.json"
    if not spec_path.is_file():
        raise TeacherDataError(f"{d} is not a teacher data directory (no spec.json)")
    spec: dict[str, Any] = json.loads(spec_path.read_text())
    if spec.get("format") != FORMAT:
        raise TeacherDataError(f"{d}: format {spec.get('format')!r}, not {FORMAT!r}")
    game = spec.get("game", "mulle")
    try:
        here = train_game(game).layout_fingerprint()
    except ValueError as exc:
        raise TeacherDataError(f"{d}: {exc}") from None
    if spec.get("obs_fingerprint") != here:
        raise TeacherDataError(f"{d} was encoded with observation layout {spec.get('obs_fingerprint')}, "
                               f"not this mulle_env's {here}; generate it again")
    return spec


def data_game(spec: dict[str, Any]) -> str:
    """The game a data set's ``spec.json`` says it holds (``"mulle"`` for one without a ``game`` entry)."""
    return str(spec.get("game", "mulle"))


def shard_path(out_dir: str | Path, shard: int) -> Path:
    """Where shard ``shard`` is written."""
    return Path(out_dir) / f"shard_{shard:05d}.npz"


def generate(out_dir: str | Path, teacher: str, games: int, seed: int = 0, opponents: Iterable[str] = (SELF,),
             shard_games: int = 4, workers: int = 1, progress: bool = True, rules: dict[str, Any] | None = None,
             afterstates: bool = False, backend: RayLabeller | None = None,
             stop: Callable[[], bool] | None = None, driver: str | None = None,
             game: str = "mulle") -> dict[str, Any]:
    """Make the missing shards of a data set of ``games`` teacher games; return a summary.

    Game ``g`` is played against ``opponents[(g // 2) % len(opponents)]`` (``"self"``:
    the teacher in both seats, both recorded), the teacher in seat ``g % 2``. Shards
    already on disk are kept (a rerun resumes). ``workers`` processes (forkserver or
    spawn, never fork, one BLAS thread each) play shards in parallel, or with ``backend``
    (a :class:`training.cluster.RayLabeller`) Ray tasks across a cluster: the same data
    byte for byte. ``rules`` changes ruleset flags (e.g. ``{"sets": 1}`` for short games;
    under ``forced_capture=False`` a decision's moves are numbered by their place in the
    legal list, since a ``taking`` capture has no id). ``afterstates`` also stores every
    labelled move's afterstate (what an afterstate net learns from). ``driver`` (an agent
    spec) plays the recorded seats' moves while the teacher values them (module
    docstring). Once ``stop()`` is true no new shard is started (the summary's
    ``complete`` is then False). ``game`` (:mod:`training.games`): the game played, Mulle by
    default.
    """
    import agents

    tg = train_game(game)
    if afterstates and not tg.afterstates:
        raise TeacherDataError(f"{tg.title} has no afterstate encoder; its data sets have no afterstates")
    if games < 1 or shard_games < 1 or games % shard_games:
        raise TeacherDataError(f"games ({games}) must be a positive multiple of shard_games ({shard_games})")
    if workers < 1:
        raise TeacherDataError(f"workers must be >= 1, not {workers}")
    opponents = [str(o) for o in opponents] or [SELF]
    teacher = agents.canonical(teacher, game=tg.name)
    if not values_moves(agents.make(teacher, game=tg.name)):
        raise TeacherDataError(f"teacher {teacher!r} cannot value moves (no move_values); use pimc or netsearch")
    opponents = [o if o == SELF else agents.canonical(o, game=tg.name) for o in opponents]
    driver = agents.canonical(driver, game=tg.name) if driver else None
    out = Path(out_dir)
    _check_dir(out, _spec(teacher, opponents, seed, shard_games, rules, afterstates, driver, tg.name))
    todo = [k for k in range(games // shard_games) if not shard_path(out, k).is_file()]
    stop = stop or (lambda: False)
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=games, initial=games - len(todo) * shard_games, unit="game", desc=f"teacher {teacher}",
                   dynamic_ncols=True)
    made = [0, 0]  # shards, decisions

    def done(n: int) -> None:
        made[0] += 1
        made[1] += n
        if bar:
            bar.update(shard_games)

    # The game travels only when it is not Mulle: Mulle's shards are labelled by the same calls as always.
    rest = (teacher, opponents, shard_games, seed, rules, afterstates, driver,
            *((tg.name,) if tg.name != "mulle" else ()))

    def arrived(k: int, n: int, data: bytes) -> None:
        write_shard(out, k, data)
        done(n)

    try:
        if backend is not None:
            backend.run(todo, rest, arrived, stop)
        elif workers == 1:
            for k in todo:
                if stop():
                    break
                done(play_shard(str(out), k, *rest))
        else:
            _local_pool(out, todo, rest, workers, done, stop)
    finally:
        if bar:
            bar.close()
    missing = sum(not shard_path(out, k).is_file() for k in range(games // shard_games))
    return {"games": games, "shards": games // shard_games, "made": made[0], "new_decisions": made[1],
            "complete": missing == 0}


def replay_afterstates(data_dir: str | Path, out_dir: str | Path, progress: bool = False) -> dict[str, Any]:
    """Copy the self-play data set ``data_dir`` into ``out_dir`` with every labelled move's afterstate; a summary.

    No search runs again: each game is replayed from its deal (:meth:`~training.games.TrainGame.new_state`
    of its :func:`deal_seed`) and the moves its rows say were played (a decision with one legal move
    has no row: that move is played), and at every row the stored moves' afterstates are encoded
    as the labelling would have (:func:`decision_afterstates`). The shards written are those a run
    with ``afterstates=True`` and the same settings writes, byte for byte (tested), and
    ``out_dir``'s ``spec.json`` is that run's, so :func:`generate` can go on labelling into it.
    Only self-play data without a driver can be replayed (their rows hold every decision of both
    seats); shards already in ``out_dir`` are kept (a rerun resumes). A row whose observation is
    not the replayed position's raises :class:`TeacherDataError`.
    """
    src, out = Path(data_dir), Path(out_dir)
    spec = check_data_dir(src)
    tg = train_game(data_game(spec))
    if spec.get("afterstates"):
        raise TeacherDataError(f"{src} holds afterstates already")
    if spec.get("opponents") != [SELF] or spec.get("driver"):
        raise TeacherDataError(f"{src}: only self-play data sets without a driver can be replayed (their rows hold "
                               "every decision of both seats); label this one again with afterstates")
    tg.new_state(0, spec.get("rules") or None)  # a game that offers no replay says so before anything is written
    _check_dir(out, {**spec, "afterstates": True})
    shards = sorted(src.glob("shard_*.npz"))
    made = decisions = 0
    for path in shards:
        k = int(path.stem.split("_")[1])
        if shard_path(out, k).is_file():
            continue
        with np.load(path, allow_pickle=False) as z:
            arrays: Arrays = {key: z[key] for key in z.files}
        after = _replayed(arrays, spec, tg, range(k * spec["shard_games"], (k + 1) * spec["shard_games"]), path)
        arrays["after_obs"] = (np.concatenate([a for a, _ in after]) if after
                               else np.zeros((0, tg.obs_size), dtype=np.float16))
        arrays["after_banked"] = (np.concatenate([b for _, b in after]) if after
                                  else np.zeros(0, dtype=np.float32))
        write_shard(out, k, shard_bytes(arrays))
        made += 1
        decisions += len(arrays["action"])
        if progress:
            print(f"{shard_path(out, k)}: {len(arrays['action'])} decisions", flush=True)
    return {"shards": len(shards), "made": made, "new_decisions": decisions}


def _replayed(arrays: Arrays, spec: dict[str, Any], tg: TrainGame, games: range, where: Path) -> list[Afterstates]:
    """The afterstates of every row of a shard's ``arrays`` (games ``games`` of the data set ``spec``), in order."""
    out: list[Afterstates] = []
    rows = arrays["game"]
    for g in games:
        mine = np.flatnonzero(rows == g)
        st = tg.new_state(deal_seed(spec["seed"], g), spec.get("rules") or None)
        i = 0
        while not st.over:
            legal = st.legal_moves()
            if len(legal) == 1:
                st.play(legal[0])
                continue
            if i >= len(mine):
                raise TeacherDataError(f"{where}: game {g} goes on past its {len(mine)} recorded decisions")
            r = mine[i]
            i += 1
            view = st.view(st.to_move)
            if not np.array_equal(tg.encode_view(view).astype(np.float16), arrays["obs"][r]):
                raise TeacherDataError(f"{where}: decision {i} of game {g} is not the replayed position (the data "
                                       "was made by other code or rules)")
            keys = tg.move_keys(view, legal)
            if int(arrays["action"][r]) not in keys:
                raise TeacherDataError(f"{where}: decision {i} of game {g} played a move that is not legal in the "
                                       "replayed position (the data was made by other code or rules)")
            out.append(decision_afterstates(view, legal, [int(x) for x in arrays["legal"][r] if x >= 0], tg))
            st.play(legal[keys.index(int(arrays["action"][r]))])
        if i != len(mine):
            raise TeacherDataError(f"{where}: game {g} ended after {i} of its {len(mine)} recorded decisions")
    return out


def _local_pool(out: Path, todo: list[int], rest: tuple[Any, ...], workers: int, done: Callable[[int], None],
                stop: Callable[[], bool]) -> None:
    """Play shards ``todo`` in ``workers`` processes, at most ``2 * workers`` submitted at a time."""
    # Ctrl-C or SIGTERM: the pool's exit ends the workers at once (finished shards are on disk already).
    with process_pool(workers) as pool:
        queue = list(reversed(todo))
        pending: set[Future[int]] = set()
        while queue or pending:
            while queue and len(pending) < 2 * workers and not stop():
                pending.add(pool.submit(play_shard, str(out), queue.pop(), *rest))
            if not pending:
                break
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                done(fut.result())


def load(data_dirs: str | Path | Iterable[str | Path], max_games: int | None = None,
         large: tuple[str, ...] = _LARGE, compact: bool = False) -> TeacherData:
    """Every finished shard of one or more data directories, concatenated (checked against this encoding).

    ``game`` indices are made unique across directories. ``max_games`` keeps the first
    shards of each directory up to that many games. ``large`` names the encodings to
    read (an afterstate fit needs only ``("after_obs",)``); with ``compact`` they are
    :class:`CodedRows` (a byte per entry, exact) instead of float16 arrays, or float16
    arrays after all if the data takes more than 256 distinct values.
    """
    unknown = set(large) - set(_LARGE)
    if unknown:
        raise ValueError(f"large must name some of {', '.join(_LARGE)}, not {sorted(unknown)}")
    if isinstance(data_dirs, (str, Path)):
        data_dirs = [data_dirs]
    # A shard's small arrays, and where to read its large ones ("_path", "_large").
    parts: list[dict[str, Any]] = []
    offset = 0
    games: dict[str, str] = {}
    for d in data_dirs:
        d = Path(d)
        spec = check_data_dir(d)
        games[str(d)] = data_game(spec)
        shards = sorted(d.glob("shard_*.npz"))
        if max_games is not None:
            shards = shards[: max(1, max_games // spec["shard_games"])]
        top = offset
        for path in shards:
            # The large arrays (observations) are read in the second pass, straight into
            # their place: concatenating them would hold them twice in memory.
            with np.load(path, allow_pickle=False) as z:
                part = {k: z[k] for k in z.files if k not in _LARGE}
                part["_path"] = path
                part["_large"] = [k for k in large if k in z.files]
            part["game"] = part["game"] + offset
            if len(part["game"]):
                top = max(top, int(part["game"].max()) + 1)
            parts.append(part)
        offset = top
    if not parts:
        raise TeacherDataError(f"no shards in {', '.join(map(str, data_dirs))}")
    if len(set(games.values())) > 1:
        raise TeacherDataError("the data sets are of different games (" + "; ".join(f"{d}: {g}" for d, g in
                               games.items()) + "); a net is fitted for one game")
    width = train_game(next(iter(games.values()))).obs_size
    # Keys every shard has (data sets with and without afterstates load as the former's common part).
    small = [k for k in parts[0] if not k.startswith("_") and all(k in p for p in parts)]
    present = [k for k in large if all(k in p["_large"] for p in parts)]
    out: TeacherData = {k: np.concatenate([p[k] for p in parts]) for k in small}
    rows = {"obs": "action", "after_obs": "after_banked"}
    for k in present:
        out[k] = _stack_rows(parts, k, sum(len(p[rows[k]]) for p in parts), compact, width)
    return out


def _stack_rows(parts: list[dict[str, Any]], key: str, total: int, compact: bool,
                width: int = OBS_SIZE) -> NDArray[Any] | CodedRows:
    """The ``key`` encodings of every part's shard (``"_path"``; only the rows ``"_rows"`` where a part has
    them) one after the other, ``total`` rows in all, read straight into one array: byte codes while the
    coder has room (``compact``), else float16. ``width``: an encoding's length (Mulle's by default)."""
    coder = _Coder() if compact else None
    arr: NDArray[Any] = np.empty((total, width), dtype=np.uint8 if coder else np.float16)
    at = 0
    for p in parts:
        with np.load(p["_path"], allow_pickle=False) as z:
            a = z[key]
        if "_rows" in p:
            a = a[p["_rows"]]
        if coder is not None:
            codes = coder.encode(a)
            if codes is None:
                # Too many distinct values for a byte: decode what is done, go on in float16.
                wide = np.empty((total, width), dtype=np.float16)
                # Straight into place: a float32 temporary would double the peak memory.
                np.take(coder.table().astype(np.float16), arr[:at], out=wide[:at])
                arr, coder = wide, None
            else:
                a = codes
        arr[at : at + len(a)] = a
        at += len(a)
    return CodedRows(arr, coder.table()) if coder is not None else arr
