"""Which games a tournament plays: pairings, deal seeds, seat orders, game ids.

Deal seeds come from the tournament seed and the *deal index* only, not from the
pairing (SHA-256 of ``("deal", seed, index)``, the arena's own :func:`arena.worker.stable_seed`,
so the arena needs nothing from a game module but its play interface): every pairing of a
tournament plays the same deals, and ``A B`` and ``B A``
name the same duplicate games. With the duplicate format (the default) game ``2j`` and
game ``2j + 1`` of a pairing share deal ``j`` with the seats swapped. With an odd
``--games N`` the last deal is played once, first-named spec in seat 0; it counts in
W/D/L, score differences and ratings, but not in pentanomial statistics or the SPRT,
which need complete pairs.

A game's identity (``game_id``) is its specs by seat, deal seed and ruleset, plus the
game module when it is not ``mulle_env``. Resuming skips every game whose id is already
in the results file.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Callable, Iterator

from mulle_env.engine.rng import seed_problem

from .game import resolve_game
from .worker import stable_seed

#: Deal seeds are kept below 2**53 so that every JSON reader (JavaScript too) reads them exactly.
SEED_BITS = 53
DEFAULT_GAME = "mulle_env"


def deal_seed(base: int, deal: int) -> int:
    """The deal seed of deal index ``deal`` in a tournament with seed ``base`` (below ``2**SEED_BITS``)."""
    return stable_seed("deal", base, deal) >> (64 - SEED_BITS)


def rules_key(ruleset: dict[str, Any], game: str = DEFAULT_GAME) -> str:
    """A short stable digest of the ruleset (and game) for game ids."""
    text = json.dumps(ruleset, sort_keys=True, separators=(",", ":"))
    if game != DEFAULT_GAME:
        text = game + "|" + text
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def game_id(specs: tuple[str, str] | list[str], seed: int, ruleset: dict[str, Any], game: str = DEFAULT_GAME) -> str:
    """The identity of one game: ``"<spec0>|<spec1>|<seed>|<rules digest>"``."""
    return f"{specs[0]}|{specs[1]}|{seed}|{rules_key(ruleset, game)}"


@dataclass(frozen=True)
class Plan:
    """A tournament's fixed parameters; :meth:`tasks` lists its games in play order.

    ``game`` is a game's import path or a short name of :data:`arena.game.GAMES`
    (``"casino"``), which is kept as its module's path (``"mulle_env.casino"``), so both
    spellings make the same game ids.
    """

    specs: tuple[str, ...]
    games: int
    seed: int = 1
    ruleset: dict[str, Any] | None = None
    duplicate: bool = True
    game: str = DEFAULT_GAME
    move_timeout: float | None = 10.0
    save_games: bool = False
    worker_init: str | None = None
    #: Play each agent in a process of its own (:mod:`arena.isolate`) under ``move_timeout`` and this memory
    #: limit in MiB (``None``: the arena's default); isolation changes no result, so it is not part of a game id.
    isolate: bool = False
    agent_memory_mb: int | None = None

    def __post_init__(self) -> None:
        specs = tuple(self.specs)
        if len(specs) < 2:
            raise ValueError(f"a tournament needs at least 2 agent specs, not {len(specs)}")
        dupes = sorted({s for s in specs if specs.count(s) > 1})
        if dupes:
            raise ValueError(f"agent spec(s) named twice: {', '.join(dupes)}; each agent may appear once")
        if (why := seed_problem(self.seed, "the tournament seed")) is not None:
            raise ValueError(why)
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 1:
            raise ValueError(f"games per pairing must be an int of at least 1, not {self.games!r}")
        object.__setattr__(self, "specs", specs)
        # A short name (casino) is recorded as its module (mulle_env.casino): one game, one set of game ids.
        object.__setattr__(self, "game", resolve_game(self.game))
        mt = self.move_timeout
        if mt is not None and (isinstance(mt, bool) or not isinstance(mt, (int, float)) or not 0 < mt < math.inf):
            raise ValueError(f"move_timeout must be a positive number of seconds or None (no limit), not {mt!r}")
        if self.isolate and mt is None:
            raise ValueError("isolated agents need a move time limit: without one a hung agent cannot be told from "
                             "a thinking one (give move_timeout, --move-timeout SEC)")
        mb = self.agent_memory_mb
        if mb is not None and (isinstance(mb, bool) or not isinstance(mb, int) or mb < 64):
            raise ValueError(f"agent_memory_mb is a whole number of MiB of at least 64, not {mb!r}")
        if mb is not None and not self.isolate:
            raise ValueError("agent_memory_mb limits isolated agents only: give isolate=True with it (--isolate)")
        import agents

        from .game import game_name, make_ruleset
        from .worker import load_game, run_init

        # A spec that names no agent (of this game) would forfeit every game: refuse it now (AgentSpecError).
        # The worker_init hook runs first, as in the workers, since it may register agents.
        run_init(self.worker_init)
        game = load_game(self.game)
        name = game_name(game, self.game)
        for spec in specs:
            if name is None or agents.plays(spec, name):  # one that does not play it: arena.run refuses the plan
                agents.canonical(spec, game=name)
        # Record every flag, not just the changed ones, so a line says exactly what was played.
        rules = make_ruleset(game, self.ruleset)
        object.__setattr__(self, "ruleset", rules.to_dict() if hasattr(rules, "to_dict") else dict(rules or {}))

    def pairings(self) -> list[tuple[str, str]]:
        """Every unordered pair of specs, in the order the specs were given."""
        return list(combinations(self.specs, 2))

    def task(self, pairing: tuple[str, str], index: int) -> dict[str, Any]:
        """Game ``index`` (0-based) of ``pairing``."""
        a, b = pairing
        if self.duplicate:
            deal, swap = divmod(index, 2)
        else:
            deal, swap = index, index % 2
        seed = deal_seed(self.seed, deal)
        specs = (b, a) if swap else (a, b)
        rules = dict(self.ruleset or {})
        return {
            "game_id": game_id(specs, seed, rules, self.game),
            "specs": list(specs),
            "seed": seed,
            "pairing": [a, b],
            "pair": deal if self.duplicate else None,
            "index": index,
            "ruleset": rules,
            "game": self.game,
            "move_timeout": self.move_timeout,
            "save_games": self.save_games,
            "worker_init": self.worker_init,
            **({"isolate": self.isolation()} if self.isolate else {}),
        }

    def isolation(self) -> dict[str, Any]:
        """A task's ``"isolate"`` entry (:func:`arena.worker.agent_for`): the time and memory limits of each agent."""
        from .isolate import DEFAULT_MEMORY_MB

        return {"seconds": self.move_timeout, "memory_mb": self.agent_memory_mb or DEFAULT_MEMORY_MB,
                "worker_init": self.worker_init}

    def total(self) -> int:
        """Number of games in the tournament (``games`` per pairing)."""
        return self.games * len(self.pairings())

    def iter_tasks(self, start: int = 0) -> Iterator[dict[str, Any]]:
        """All games, deal by deal across pairings, so partial results stay balanced; lazily.

        For a head-to-head this is simply pair 0, pair 1, ... in order, which the SPRT
        relies on. A task is made only when asked for, so memory does not grow with
        ``games`` (``--games 1000000000`` starts playing at once). ``start`` skips to
        game index ``start`` of every pairing.
        """
        pairings = self.pairings()
        for i in range(start, self.games):
            for p in pairings:
                yield self.task(p, i)

    def tasks(self) -> list[dict[str, Any]]:
        """All games as a list (:meth:`iter_tasks` without its laziness; small plans only)."""
        return list(self.iter_tasks())

    def order(self, task_or_line: dict[str, Any]) -> tuple[int, int]:
        """Where a task (or its result line) stands in the schedule: ``(game index, pairing index)``."""
        return task_or_line["index"], self.pairings().index(tuple(task_or_line["pairing"]))

    def locate(self, line: dict[str, Any], deal_of_seed: Callable[[int], int | None] | None = None
               ) -> tuple[int, int] | None:
        """The schedule position ``(game index, pairing index)`` of a result line, or ``None`` if not this plan's.

        Lines record their game ``index``; older ones do not, and then a duplicate line's
        ``pair`` gives it, and for a single-format line ``deal_of_seed(seed)`` (see
        :meth:`deal_finder`) finds it from the seed.
        """
        specs: Any = line.get("specs")
        pairings = self.pairings()
        if (a := tuple(specs)) in pairings:
            pi, swap = pairings.index(a), 0
        elif (b := tuple(reversed(specs))) in pairings:
            pi, swap = pairings.index(b), 1
        else:
            return None
        seed = line["seed"]
        if line["game_id"] != game_id(specs, seed, dict(self.ruleset or {}), self.game):
            return None
        index = line.get("index")
        if index is not None:  # recorded by the arena since results lines carry it
            deal = index // 2 if self.duplicate else index
        elif self.duplicate:
            deal = line.get("pair")
            index = None if deal is None else 2 * deal + swap
        else:  # an older single-format line: find its deal from its seed
            deal = index = deal_of_seed(seed) if deal_of_seed is not None else None
        if index is None or index >= self.games or index % 2 != swap or deal_seed(self.seed, deal) != seed:
            return None
        return index, pi

    def deal_finder(self, seeds: set[int]) -> Callable[[int], int | None]:
        """A ``deal_of_seed`` for :meth:`locate`: scans deal indices once for the given seeds.

        The scan stops as soon as every seed is found, so it costs what the results file
        holds, not ``games``, unless a seed is not this tournament's (then it runs to the
        last deal once). Memory holds only the seeds asked for.
        """
        found: dict[int, int] = {}
        wanted = set(seeds)
        deals = self.games  # single format: one deal per game index

        def scan() -> None:
            for d in range(deals):
                s = deal_seed(self.seed, d)
                if s in wanted:
                    found[s] = d
                    wanted.discard(s)
                    if not wanted:
                        return

        scanned = False

        def deal_of_seed(seed: int) -> int | None:
            nonlocal scanned
            if not scanned:
                scan()
                scanned = True
            return found.get(seed)

        return deal_of_seed
