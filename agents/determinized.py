"""Determinized search for any two-player card game with hidden hands: sample the hidden cards, roll out, average.

Per decision (a single legal move is returned at once):

1. ``samples`` **determinizations**: the cards the seat cannot see (``view.unseen()``)
   shuffled with the rng and dealt into an opponent hand of ``view.opponent_hand_size``
   cards and a stock of ``view.stock_size`` (in dealing order), then made a full state by
   the game's ``GameState.from_view(view, opponent_hand, stock, seed)`` (``seed``, drawn
   from the rng, fixes the later rounds' decks). A game may say what the view proves about
   the opponent's hand (below); a deal that breaks it is drawn again (rejection: exact,
   the deal stays uniform among those consistent with the facts).
2. Every candidate move is played on a copy of each determinization, and a **rollout**
   plays both seats with the playout policy until the horizon: a number of plies
   (default 8: the candidate and seven more moves, about one deal of Casino), the end of
   the round in play (``round``) or of the game (``game``). Every candidate sees the same
   determinizations and the same playout random numbers (common random numbers), so their
   differences carry less noise.
3. The value of a rollout is the **point difference** it adds for the searcher's seat:
   ``scores()`` at the horizon minus at the root, plus, when the rollout stops inside a
   round, the game's ``evaluate(state, seat)`` of the round in play (the points its piles
   hold so far). The move of the best mean wins, ties to the earlier legal move.

Why not to the end of the round by default: a Casino round is scored only when it ends, so
that is the one horizon with exact points, and it is offered (``horizon=round``). But its
outcome hangs on the whole rest of the round played by a cheap policy: the spread between
determinizations swamps the difference between two candidate moves. Measured over the same
100 duplicate one-round deals against ``greedy`` (seeds 1000-1049; mean points a game for
the search, ms a search decision at load 2-3 on the 2-core machine), with Casino's
``heuristic`` playout: ``samples=16,horizon=round`` -0.9 (42 %, 154 ms);
``samples=16,horizon=8`` +1.0 (56 %, 70 ms); ``samples=32,horizon=4`` +1.0 (57 %, 69 ms);
``samples=32,horizon=8`` +2.2 (64 %, 107 ms); ``samples=32,horizon=12`` +1.7 (62 %, 101 ms).
``horizon=game`` would add later rounds, fresh shuffles the move in hand barely touches:
more time and more noise.

The search knows no game: it reads only ``view.unseen()``, ``view.opponent_hand_size``,
``view.stock_size``, ``view.player`` and, on the states it builds, ``legal_moves()``,
``play()``, ``copy()``, ``is_over()`` and ``scores()``. The game's ``GameState`` is found
from the view (the module that defines the view's type, e.g. ``mulle_env.casino.state``)
or set on the agent (``state_type``). A game may add hooks in ``agents.<game>``, the agents
package named by its ``GAME_NAME``: ``PLAYOUTS`` (playout policies by name,
``policy(state, legal_moves, rng) -> move``), ``hidden_requirements(view)`` (sets of
unseen cards of which the opponent holds at least one each) and ``evaluate(state, seat)``
(the points of the round in play so far, for a horizon of plies). Casino's are in
:mod:`agents.casino.playout`. Mulle's view names its stock ``deck_size`` and Mulle has
no such hooks (its own search, :mod:`agents.pimc`, knows its reservation rules), so this
agent declares Casino only.
"""

from __future__ import annotations

import importlib
import random
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Protocol

from .base import Agent

__all__ = [
    "DeterminizedSearchAgent", "GameHooks", "HORIZONS", "MAX_REJECTIONS", "PLAYOUT_RANDOM", "SearchState",
    "deal_hidden", "game_hooks", "offered_playouts", "random_playout",
]

#: Where rollouts may stop besides a number of plies: the end of the round in play, or of the game.
HORIZONS = ("round", "game")
#: The playout policy every game has: a uniformly random legal move.
PLAYOUT_RANDOM = "random"
#: Deals drawn per determinization before the hidden facts are forced in (a fallback no real position needs).
MAX_REJECTIONS = 1000


class SearchState(Protocol):
    """What the search asks of a game's state."""

    def legal_moves(self) -> list[Any]:
        """The legal moves of the seat to move."""

    def play(self, move: Any) -> Any:
        """Play ``move`` for the seat to move."""

    def copy(self) -> SearchState:
        """An independent copy."""

    def is_over(self) -> bool:
        """The game has ended."""

    def scores(self) -> tuple[int, int]:
        """Points of the finished rounds, by seat."""


Playout = Callable[[Any, Sequence[Any], random.Random], Any]


def random_playout(state: Any, legal: Sequence[Any], rng: random.Random) -> Any:
    """A uniformly random legal move (the playout policy of every game)."""
    return legal[rng.randrange(len(legal))]


class GameHooks:
    """What the search knows of one game: how to build its states, its playouts and its hidden facts."""

    __slots__ = ("game", "state_type", "playouts", "requirements", "evaluate")

    def __init__(self, game: str, state_type: Any, playouts: dict[str, Playout],
                 requirements: Callable[[Any], list[frozenset[int]]] | None,
                 evaluate: Callable[[Any, int], float] | None) -> None:
        self.game = game
        self.state_type = state_type
        self.playouts = playouts
        self.requirements = requirements
        self.evaluate = evaluate


_HOOKS: dict[type, GameHooks] = {}


def game_hooks(view: Any, state_type: Any = None) -> GameHooks:
    """The :class:`GameHooks` of the game ``view`` belongs to (cached per view type).

    The state type is ``state_type``, or the ``GameState`` of the package that defines the view's
    type (the backend in use), else of its module; the game's name is its package's ``GAME_NAME``; the hooks are
    ``agents.<game>``'s ``PLAYOUTS`` and ``hidden_requirements`` when that package exists.
    """
    vtype = type(view)
    hooks = _HOOKS.get(vtype) if state_type is None else None
    if hooks is not None:
        return hooks
    module: ModuleType | None = sys.modules.get(vtype.__module__)
    package = vtype.__module__.rpartition(".")[0]
    # The game package's GameState is the backend MULLE_ENGINE chose (the compiled core's when built); the
    # module that defines the view has the reference's.
    found = getattr(sys.modules.get(package), "GameState", None)
    if not hasattr(found, "from_view"):
        found = getattr(module, "GameState", None)
    if state_type is None:
        state_type = found
        if state_type is None or not hasattr(state_type, "from_view"):
            raise TypeError(f"no GameState with from_view() beside {vtype.__module__}.{vtype.__name__}; "
                            "set the search's state_type")
    game = str(getattr(sys.modules.get(package), "GAME_NAME", "") or "")
    playouts: dict[str, Playout] = {PLAYOUT_RANDOM: random_playout}
    requirements = evaluate = None
    if game.isidentifier():
        try:
            plug = importlib.import_module(f"{__package__}.{game}")
        except ModuleNotFoundError:
            plug = None
        if plug is not None:
            playouts.update(getattr(plug, "PLAYOUTS", {}))
            requirements = getattr(plug, "hidden_requirements", None)
            evaluate = getattr(plug, "evaluate", None)
    hooks = GameHooks(game, state_type, playouts, requirements, evaluate)
    if state_type is found:
        _HOOKS[vtype] = hooks
    return hooks


def offered_playouts(games: Sequence[str]) -> set[str]:
    """The playout policies the search has for ``games`` (short names): ``random`` and each one's ``PLAYOUTS``."""
    names = {PLAYOUT_RANDOM}
    for game in games:
        try:
            plug = importlib.import_module(f"{__package__}.{game}")
        except ModuleNotFoundError:
            continue
        names.update(getattr(plug, "PLAYOUTS", {}))
    return names


def deal_hidden(view: Any, rng: random.Random, required: Sequence[frozenset[int]] = ()) -> tuple[list[Any], list[Any]]:
    """A random ``(opponent hand, stock)`` of the view's unseen cards in which the hand meets every ``required`` set.

    Uniform among such deals (rejection sampling); after :data:`MAX_REJECTIONS` tries a
    required card is swapped into the hand (only a position that breaks the game's own
    facts gets there). In a hand-made position that leaves cards out of play, more cards
    are unseen than the hand and the stock hold: the rest are drawn out of play.
    """
    unseen = list(view.unseen())
    h, s = int(view.opponent_hand_size), int(view.stock_size)
    if len(unseen) < h + s:
        raise ValueError(f"the view hides {len(unseen)} cards, fewer than the opponent's {h} and the stock's {s}")
    for _ in range(MAX_REJECTIONS if required else 1):
        rng.shuffle(unseen)
        hand = unseen[:h]
        if all(any(c in req for c in hand) for req in required):
            return hand, unseen[h:h + s]
    hand, rest = unseen[:h], unseen[h:]
    for req in required:  # force the facts in: swap a required card from the rest for a hand card no fact needs
        if any(c in req for c in hand):
            continue
        i = next((i for i, c in enumerate(rest) if c in req), None)
        j = next((j for j, c in enumerate(hand) if not any(c in r for r in required)), None)
        if i is not None and j is not None:
            hand[j], rest[i] = rest[i], hand[j]
    return hand, rest[:s]


class DeterminizedSearchAgent(Agent):
    """Determinized Monte Carlo search: sampled hidden cards, short rollouts, the best mean point difference.

    See the module docstring.

    Args:
        samples: Determinizations per decision; each candidate is rolled out once in each.
            The default, 32, decided Casino in 60 ms a move (mean; median 46 ms, at most
            0.44 s, over the 192 decisions of four heuristic games at load 2 on 2 cores).
        rollout: The playout policy: ``heuristic`` (the game's own, when its agents package
            offers one; Casino's plays as :class:`~agents.casino.CasinoHeuristicAgent`) or
            ``random``.
        horizon: A number of plies (default ``8``; the game must offer ``evaluate``),
            ``round`` (to the end of the round in play: exact points, noisier) or ``game``.

    Attributes:
        state_type: The game's state class; ``None`` (default) finds it from the view. Code
            may set it on an instance for a game whose view module has no ``GameState``.
    """

    name = spec = "pimc"
    games = ("casino",)  # Mulle's view has no stock_size (it says deck_size), and Mulle has agents.pimc
    version = "1"
    state_type: Any = None

    def __init__(self, samples: int = 32, rollout: str = "heuristic", horizon: str = "8") -> None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a whole number >= 1, not {samples!r}")
        horizon = str(horizon)
        if horizon not in HORIZONS and not (horizon.isdigit() and int(horizon) > 0):
            raise ValueError(f"horizon must be one of {', '.join(HORIZONS)} or a number of plies, not {horizon!r}")
        offered = offered_playouts(self.games)
        if not isinstance(rollout, str) or rollout not in offered:
            # Refused here, not at the first decision: a tournament would forfeit every game of this spec.
            raise ValueError(f"rollout must name a playout policy of {', '.join(self.games)} "
                             f"({', '.join(sorted(offered))}), not {rollout!r}")
        self.samples = samples
        self.rollout = rollout
        self.horizon = horizon

    def _policy(self, hooks: GameHooks) -> Playout:
        policy = hooks.playouts.get(self.rollout)
        if policy is None:
            raise ValueError(f"rollout={self.rollout!r}: the game {hooks.game or '?'} offers playouts "
                             f"{', '.join(sorted(hooks.playouts))}")
        return policy

    def move_values(self, view: Any, legal_moves: Sequence[Any], rng: random.Random) -> list[tuple[Any, float]]:
        """``(move, mean point difference)`` for every legal move, in the given order.

        The value is the mean over the determinizations of the points the rollout adds for
        the view's seat less those it adds for the opponent, up to the horizon. A lone move
        is returned with 0.0 without searching.
        """
        moves = list(legal_moves)
        if len(moves) == 1:
            return [(moves[0], 0.0)]
        hooks = game_hooks(view, self.state_type)
        policy = self._policy(hooks)
        required = hooks.requirements(view) if hooks.requirements is not None else []
        evaluate = hooks.evaluate
        if self.horizon.isdigit() and evaluate is None:
            raise ValueError(f"horizon={self.horizon}: the game {hooks.game or '?'} offers no evaluate() for a "
                             "position before the round's end; use horizon=round")
        me = int(view.player)
        totals = [0.0] * len(moves)
        for _ in range(self.samples):
            hand, stock = deal_hidden(view, rng, required)
            root: SearchState = hooks.state_type.from_view(view, hand, stock, seed=rng.getrandbits(63))
            a, b = root.scores()
            start = a - b if me == 0 else b - a
            playout_seed = rng.getrandbits(63)
            for i, move in enumerate(moves):
                st = root.copy()
                st.play(move)
                totals[i] += self.rollout_value(st, me, (a, b), policy, evaluate, random.Random(playout_seed)) - start
        return [(m, t / self.samples) for m, t in zip(moves, totals)]

    def rollout_value(self, st: SearchState, me: int, root_scores: tuple[int, int], policy: Playout,
                      evaluate: Callable[[Any, int], float] | None, rng: random.Random) -> float:
        """Play ``st`` on to this search's horizon with ``policy``; the score difference for ``me`` there.

        ``root_scores``: the game totals where the search started (a rollout to the round's end
        stops when they change); ``evaluate(state, me)``: the game's value of a position inside a
        round, added where a horizon of plies stops. Other searches (the Casino ISMCTS
        evaluator) value their leaves with it.
        """
        to_round_end = self.horizon != "game"
        plies = int(self.horizon) - 1 if self.horizon.isdigit() else -1
        while not st.is_over():
            if to_round_end and st.scores() != root_scores:
                break
            if plies == 0:
                a, b = st.scores()
                return float(a - b if me == 0 else b - a) + (evaluate(st, me) if evaluate is not None else 0.0)
            plies -= 1
            legal = st.legal_moves()
            st.play(policy(st, legal, rng))
        a, b = st.scores()
        return float(a - b if me == 0 else b - a)

    def act(self, view: Any, legal_moves: Sequence[Any], rng: random.Random) -> Any:
        """The move of the best mean rollout value (ties to the earlier legal move)."""
        if len(legal_moves) == 1:
            return legal_moves[0]
        values = self.move_values(view, legal_moves, rng)
        best = max(v for _, v in values)
        return next(m for m, v in values if v == best)
