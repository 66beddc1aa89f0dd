"""The opponent pool: a different opponent every episode, drawn by weight.

:class:`OpponentPool` is itself an agent (``act``/``reset``/``observe``), so it plugs
into ``Mulle-v0`` as its ``opponent`` without touching the environment: the env calls
``reset()`` at every new game, and the pool draws the next opponent then. Members are
agent specs (``heuristic``, ``random``, ``greedy``, ...) and ``self``: a snapshot of the
policy being trained, read as a numpy :class:`~agents.learned.LearnedAgent` from the
newest files of a snapshot directory that the trainer fills as it goes (so the pool
sees new snapshots in every worker process, and after a resume). ``game="casino"`` makes
a pool of Casino's agents (``random``, ``heuristic``... as Casino's registry has them) and
Casino snapshots (:class:`~agents.learned.casino.CasinoLearnedAgent`).
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agents.learned.agent import LearnedAgent, cached_policy
from agents.learned.casino import CasinoLearnedAgent

if TYPE_CHECKING:
    from agents.base import Agent
    from mulle_env.engine import Move, PlayerView

__all__ = ["SELF", "OpponentPool", "parse_weights"]

#: The pool member that stands for earlier snapshots of the learner.
SELF = "self"


def parse_weights(text: str) -> dict[str, float]:
    """``"heuristic=0.6,random=0.1,self=0.3"`` -> ``{"heuristic": 0.6, ...}`` (finite weights >= 0, sum > 0).

    Specs with parameters keep their colon syntax: ``"pimc:samples=4=0.1"`` is not
    allowed, write ``"pimc:samples~4=0.1"``; ``~`` stands for ``=`` inside a spec.
    """
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        spec, eq, w = part.rpartition("=")
        if not eq or not spec:
            raise ValueError(f"opponent weight {part!r} must read spec=weight, e.g. heuristic=0.6")
        try:
            weight = float(w)
        except ValueError:
            raise ValueError(f"opponent weight {part!r}: {w!r} is not a number") from None
        if not math.isfinite(weight):  # nan/inf would only fail later, inside random.choices
            raise ValueError(f"opponent weight {part!r} is not a finite number (weights are finite and >= 0)")
        if weight < 0:
            raise ValueError(f"opponent weight {part!r} is negative")
        out[spec.replace("~", "=")] = weight
    if not out or sum(out.values()) <= 0:
        raise ValueError(f"opponent weights {text!r} must name at least one opponent with a positive weight")
    return out


class OpponentPool:
    """An agent that is a different opponent each game, drawn with the given weights.

    Args:
        weights: Spec -> weight; the spec ``"self"`` draws one of the ``keep`` newest
            ``*.npz`` snapshots in ``snapshot_dir`` uniformly (its weight is shared
            among the others while there is none).
        snapshot_dir: Where the trainer writes exported snapshots.
        keep: How many of the newest snapshots ``self`` chooses among.
        seed: Seed of the pool's own draw.
    """

    spec = "pool"
    name = "pool"

    def __init__(
        self, weights: dict[str, float], snapshot_dir: str | None = None, keep: int = 5, seed: int = 0,
        game: str = "mulle",
    ) -> None:
        import agents

        if SELF in weights and weights[SELF] > 0 and not snapshot_dir:
            raise ValueError("the pool member 'self' needs a snapshot directory")
        self.weights = dict(weights)
        self.snapshot_dir = snapshot_dir
        self.keep = keep
        self._rng = random.Random(seed)
        #: The game the pool plays (the short name of its agents' game).
        self.game = game
        self.games = (game,)
        self._fixed = {s: agents.make(s) if game == "mulle" else agents.make(s, game=game)
                       for s in weights if s != SELF}
        self._snapshots: list[str] = []
        self._dir_stamp: int | None = None
        #: The opponent of the game being played (``None`` until the first draw).
        self.current: Agent | None = None
        self.current_name: str | None = None
        self._scan()
        if self._snapshots or any(w > 0 for s, w in self.weights.items() if s != SELF):
            self.reset()
        # else: only 'self' and no snapshot yet; the trainer saves one before the first game's reset()

    def _scan(self) -> None:
        if not self.snapshot_dir:
            return
        try:
            stamp = os.stat(self.snapshot_dir).st_mtime_ns
        except FileNotFoundError:
            return
        if stamp == self._dir_stamp:
            return
        self._dir_stamp = stamp
        files = sorted(Path(self.snapshot_dir).glob("*.npz"))
        self._snapshots = [str(f) for f in files[-self.keep :]]

    def reset(self) -> None:
        """Draw the opponent of the next game."""
        self._scan()
        names = [s for s, w in self.weights.items() if w > 0 and (s != SELF or self._snapshots)]
        if not names:
            names = [s for s in self.weights if s != SELF] or list(self._fixed)
        if not names:
            raise ValueError(
                f"the opponent pool plays only 'self' and {self.snapshot_dir!r} holds no snapshot of the learner yet "
                "(mulle-train saves the starting policy there first)"
            )
        name = self._rng.choices(names, weights=[self.weights.get(s, 1.0) for s in names])[0]
        if name == SELF:
            path = self._rng.choice(self._snapshots)
            # A snapshot plays as the learner does, by its net alone (at Casino: without the endgame solve).
            current: Agent = (LearnedAgent.from_policy(cached_policy(path)) if self.game == "mulle" else
                              CasinoLearnedAgent.from_policy(cached_policy(path), endgame=False))
            self.current_name = f"self:{Path(path).stem}"
        else:
            current = self._fixed[name]
            self.current_name = name
        self.current = current
        current.reset()

    @property
    def needs_view(self) -> bool:
        """Whether the drawn opponent reads its view (``random`` does not: the envs then skip building it)."""
        return getattr(self.current, "needs_view", True)

    def _drawn(self) -> Agent:
        if self.current is None:  # only 'self' in the pool, and the trainer saved no snapshot before the game
            raise RuntimeError("the opponent pool has drawn no opponent yet: reset() draws one at each new game")
        return self.current

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """The drawn opponent's move."""
        return self._drawn().act(view, legal_moves, rng)

    def observe(self, event: tuple[int, Move]) -> None:
        """Pass the event on to the drawn opponent."""
        self._drawn().observe(event)
