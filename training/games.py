"""The games training makes nets for, and what its stages ask of each: one object per game.

``mulle-train ppo`` and ``mulle-train expert`` are the same pipelines for every game; what
differs is read from a :class:`TrainGame` (``--game mulle`` or ``--game casino``):

=======================  ===================================================================
member                   what training does with it
=======================  ===================================================================
``name``, ``title``      the short name agents, envs, policy files and the arena know the game
                         by (``"casino"``) and how messages name it (``"Casino"``)
``obs_size``,            the observation a net reads and the action ids a logits net writes
``num_actions``          (:mod:`mulle_env.observation` and :mod:`mulle_env.codec` for Mulle,
                         :mod:`mulle_env.games.casino` for Casino)
``encode_view(view)``    a seat's observation (what the teacher data store and the nets read)
``layout_fingerprint()`` the observation layout's fingerprint (data sets and policy files)
``banked_points(view)``  the score difference the mover has banked (the value head learns the
                         rest: final difference minus banked)
``move_keys(view, ms)``  the numbers a decision's moves are stored under (their action ids)
``ruleset(rules)``       the game's ruleset from a dict of changed flags (``--rule``)
``rules(items)``         ``--rule KEY=VALUE`` texts as that dict, refusing what training cannot
``play(bots, ...)``      a whole game between agents through the engine's game loop; its scores
``decisions``            about how many decisions one seat makes in a game (messages)
``afterstates``          whether afterstate nets exist for it (both games have an encoder)
``afterstates_of(view,   per legal move the position it leaves, encoded from the mover's seat, and
ms)``                    the points banked after it (what afterstate data store and nets read)
``new_state(seed,        the state a deal starts from (a data set's games are replayed from it and
rules)``                 their moves, :func:`training.teacher.replay_afterstates`; Casino's only)
``suit_swap()``          the observation and action permutations of the clubs-hearts swap
                         (a fit's augmentation, :mod:`training.distill`)
=======================  ===================================================================

Mulle's object points at the code training has always used (so its data, nets and games are
bit for bit what they were); Casino's at :mod:`mulle_env.casino` and its env side.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["CASINO", "GAMES", "MULLE", "TrainGame", "train_game"]


class TrainGame:
    """What training asks of a game (the module docstring's table); Mulle's is :data:`MULLE`."""

    name = "mulle"
    title = "Mulle"
    #: About how many decisions one seat makes in a game under the default rules.
    decisions = 96
    #: Whether afterstate nets (and their extra inputs) exist for the game.
    afterstates = True

    @property
    def obs_size(self) -> int:
        """Length of one observation: the env game object's (:mod:`mulle_env.games`), which the envs encode."""
        from mulle_env.games import get_game

        return get_game(self.name).obs_size

    @property
    def num_actions(self) -> int:
        """Size of the action space (a logits net writes one logit per action id): the env game object's."""
        from mulle_env.games import get_game

        return get_game(self.name).num_actions

    def encode_view(self, view: Any) -> NDArray[np.float32]:
        """The observation of ``view``'s seat (a new float32 array)."""
        from mulle_env.observation import encode_view

        return encode_view(view)

    def layout_fingerprint(self) -> str:
        """The fingerprint of the observation layout (data sets and policy files record it)."""
        from mulle_env.observation import layout_fingerprint

        return layout_fingerprint()

    def banked_points(self, view: Any) -> float:
        """The score difference the viewer has banked (:func:`training.teacher.banked_points`)."""
        from .teacher import banked_points

        return banked_points(view)

    def move_keys(self, view: Any, legal_moves: Sequence[Any]) -> list[int]:
        """Action ids, or places in the legal list under ``forced_capture=False`` (:func:`.teacher.move_keys`)."""
        from .teacher import move_keys

        return move_keys(view, legal_moves)

    def afterstates_of(self, view: Any, legal_moves: Sequence[Any]) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
        """``(obs, banked)`` of each of ``legal_moves``: :func:`agents.learned.afterstate.encode_afterstates`."""
        from agents.learned.afterstate import encode_afterstates

        return encode_afterstates(view, legal_moves)

    def new_state(self, seed: int, rules: dict[str, Any] | None = None) -> Any:
        """The state deal ``seed`` starts from, to replay a game's moves on; Mulle's data sets store their
        afterstates as they are labelled (``--afterstates``), so Mulle offers none."""
        raise ValueError(f"{self.title}'s data sets are not replayed: label them with afterstates "
                         "(mulle-train data --afterstates)")

    def ruleset_class(self) -> Any:
        """The game's ruleset class."""
        from mulle_env.engine import Ruleset

        return Ruleset

    def suit_swap(self) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """``(obs_perm, act_perm)``: the observation and action permutations of the suit swap the rules treat
        alike (clubs and hearts, :data:`training.bc.SYMMETRIC_SUITS`), which a fit shows half its decisions under."""
        from .bc import suit_swap_permutations

        return suit_swap_permutations()

    def ruleset(self, rules: dict[str, Any] | None) -> Any:
        """The game's ruleset with the flags ``rules`` changed."""
        return self.ruleset_class().from_dict(rules or {})

    def rules(self, items: Iterable[str]) -> dict[str, Any]:
        """``--rule KEY=VALUE`` texts as the dict of flags that differ from the defaults (a ``ValueError`` if bad)."""
        changes: dict[str, Any] = self.ruleset_class().from_strings(list(items)).changes()
        return changes

    def play(self, bots: Sequence[Any], seed: int, rngs: Sequence[random.Random],
             rules: dict[str, Any] | None = None) -> tuple[int, int]:
        """Play deal ``seed`` with ``bots[p]`` in seat ``p`` to the end; the final scores, seat 0's first."""
        from mulle_env.engine import Match

        scores = Match(seed=seed, ruleset=rules).play_out(bots, rngs).scores
        return int(scores[0]), int(scores[1])

    def __repr__(self) -> str:
        return f"training.games.{self.name.upper()}"


class CasinoTrainGame(TrainGame):
    """Casino for training: logits nets over its move ids (``gather_all=True``) and afterstate nets."""

    name = "casino"
    title = "Casino"
    decisions = 84  # three or four rounds of 24 card plays a seat

    def encode_view(self, view: Any) -> NDArray[np.float32]:
        """The observation of ``view``'s seat (:func:`mulle_env.games.casino.encode_view`)."""
        from mulle_env.games.casino import encode_view

        return encode_view(view)

    def layout_fingerprint(self) -> str:
        """The fingerprint of Casino's observation layout."""
        from mulle_env.games.casino import layout_description
        from mulle_env.observation import layout_fingerprint

        return layout_fingerprint(layout_description())

    def banked_points(self, view: Any) -> float:
        """The viewer's game total less the opponent's: Casino banks points only when a round ends."""
        p = view.player
        return float(view.scores[p] - view.scores[1 - p])

    def move_keys(self, view: Any, legal_moves: Sequence[Any]) -> list[int]:
        """The moves' ids (every move has one under ``gather_all=True``, the only rules training takes)."""
        return [int(m.id) for m in legal_moves]

    def afterstates_of(self, view: Any, legal_moves: Sequence[Any]) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
        """``(obs, banked)`` of each of ``legal_moves``: :func:`agents.learned.casino.encode_casino_afterstates`
        (banked: the points after the move relative to the view's game totals, ``pimc``'s convention)."""
        from agents.learned.casino import encode_casino_afterstates

        return encode_casino_afterstates(view, legal_moves)

    def new_state(self, seed: int, rules: dict[str, Any] | None = None) -> Any:
        """:func:`mulle_env.casino.new_game` of deal ``seed`` (what :meth:`play` plays)."""
        from mulle_env import casino

        return casino.new_game(seed, self.ruleset(rules))

    def ruleset_class(self) -> Any:
        """:class:`mulle_env.casino.Ruleset`."""
        from mulle_env.casino import Ruleset

        return Ruleset

    def suit_swap(self) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """Casino's clubs-hearts swap: only spades (the spades race, little casino) and RU 10 (big casino) score
        by suit, so swapping clubs and hearts changes no value, point or legal move (checked against the card
        tables when it is made). Only a capture's tie-break between equal collections (CASINO.md 4.1.2, the
        canonical card order) may take the other of two equivalent cards."""
        from mulle_env import casino
        from mulle_env.casino.cards import CARD_NAMES, POINTS, SPADE, VALUE
        from mulle_env.games.casino import FACE_BLOCKS, OBS_SIZE, OBS_SLICES

        from .bc import swap_permutations

        return swap_permutations(CARD_NAMES, (VALUE, SPADE, POINTS), [OBS_SLICES[b].start for b in FACE_BLOCKS],
                                 OBS_SIZE, [str(m) for m in casino.MOVES], lambda text: casino.Move.from_str(text).id)

    def rules(self, items: Iterable[str]) -> dict[str, Any]:
        """``--rule`` texts as changed flags; ``gather_all=false`` is refused (its moves have no ids)."""
        changes = super().rules(items)
        if changes.get("gather_all") is False:
            raise ValueError("gather_all=false: Casino's nets write one logit per move id, and under gather_all=false "
                             "moves name what they take and have no ids; train under gather_all=true (the default)")
        return changes

    def play(self, bots: Sequence[Any], seed: int, rngs: Sequence[random.Random],
             rules: dict[str, Any] | None = None) -> tuple[int, int]:
        """Play deal ``seed`` through the engine's game loop (:class:`mulle_env.engine.GameLoop`)."""
        from mulle_env.engine import GameLoop

        state = self.new_state(seed, rules)
        loop = GameLoop(state, list(bots), list(rngs))
        loop.start()
        loop.run()
        a, b = state.scores()
        return int(a), int(b)


#: Mulle: the code training has always run.
MULLE = TrainGame()
#: Casino (``--game casino``).
CASINO = CasinoTrainGame()
#: Games by short name, as ``--game`` takes them.
GAMES: dict[str, TrainGame] = {"mulle": MULLE, "casino": CASINO}


def train_game(game: str | TrainGame | None = None) -> TrainGame:
    """The :class:`TrainGame` of ``game`` (a short name of :data:`GAMES`; ``None``: Mulle)."""
    if isinstance(game, TrainGame):
        return game
    found = GAMES.get(game or "mulle")
    if found is None:
        raise ValueError(f"unknown game {game!r}; training makes nets for {', '.join(GAMES)}")
    return found
