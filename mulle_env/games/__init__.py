"""The games the environments play: what the env core asks of a game, written down once, and the games by name.

The env core (:mod:`mulle_env.envcore`) and its three faces (``Mulle-v0``, the vector env, the
PettingZoo AEC env) are game-agnostic. Everything they need to know about a game comes from one
small object per game, an :class:`EnvGame`:

============================  ==================================================================
member                        what the env layer does with it
============================  ==================================================================
``name``, ``env_id``,         the game's name (``"mulle"``), its Gymnasium id (``"Mulle-v0"``)
``aec_name``                  and its PettingZoo name (``"mulle_v0"``): messages, ``metadata``
``Ruleset``,                  the game's ruleset class; ``check_ruleset(None | dict | Ruleset)``
``check_ruleset(r)``          gives the checked ruleset or refuses one the action space cannot
                              express (a ``ValueError`` naming why)
``new_game(seed, ruleset)``   deal a game: a state of the :class:`EnvState` protocol
``num_actions``,              the action codec: ``Discrete(num_actions)``, the move an action
``move_of(a)``,               stands for, the action of a move played in ``state``, and
``action_of(m, state)``,      ``decode(state, a)``: the legal move of an action, or an
``decode(state, a)``          :class:`IllegalActionError` naming the action, its move, why, and
                              the legal actions (the core turns actions into moves by ``decode``)
``obs_size``, ``obs_dtype``,  the observation: its size and dtype, its bounds under a ruleset,
``observation_bounds(r)``,    and the encoder writing seat ``s``'s observation of a state into a
``encode(state, s, out)``     preallocated row
``score_bound(r)``            the largest difference of game totals a game can end with: the cost
                              of an illegal action under ``illegal_action="lose"``, ``reward="score"``
``max_decisions(r)``          the most decisions one seat makes in a game (``max_steps``)
``make_stepper(...)``         K games stepped together (:mod:`mulle_env.stepper`): a game with a
                              compiled stepper returns it; the default is the generic
                              :class:`~mulle_env.stepper.PyStepper` over this object
``render(view)``              a seat's view as text (``render_mode="ansi"``)
``extra_blocks``,             the optional extra-input blocks (``extras=``): their names (none by
``extras_bounds(name)``,      default), their bounds, and the writer that computes a block from
``add_extras(base, out, n)``  a batch of observations
============================  ==================================================================

:class:`EnvGame` is a :class:`typing.Protocol`: a game object may match it structurally, or subclass
it to inherit the generic members (``check_ruleset``, ``action_of``, ``decode``, ``make_stepper``,
``render`` and "no extra inputs"), so that a game written in Python needs little more than its
tables, ``new_game``, ``move_of``, ``encode`` and its bounds. Mulle's object is
:data:`mulle_env.games.mulle.MULLE`.

Games are found by name (:func:`get_game`; ``game="mulle"``), each imported only when first asked
for, so that registering an env id needs no import: ``gymnasium.register(..., kwargs={"game":
"casino"})``. ``None`` is the default game, Mulle.

The generic parts of an action codec live here too, beside the protocol that needs them:
:class:`IllegalActionError`, :func:`action_int`, :func:`action_index` and :func:`shown`
(:mod:`mulle_env.codec` re-exports them for Mulle).
"""

from __future__ import annotations

import importlib
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ..engine.errors import GameOverError, IllegalMoveError

if TYPE_CHECKING:
    from ..stepper import Stepper

__all__ = ["DEFAULT_GAME", "GAMES", "EnvGame", "EnvState", "IllegalActionError", "action_index", "action_int",
           "get_game", "shown"]

#: Games by name: ``"module:attribute"`` of each game object, imported when first asked for. A new game
#: adds its line here (its object in ``mulle_env/games/<name>.py``).
GAMES: dict[str, str] = {
    "mulle": "mulle_env.games.mulle:MULLE",
    "casino": "mulle_env.games.casino:CASINO",
    # Casino under gather_all=False: another action space (action k = the k-th legal move), so another object.
    "casino_choices": "mulle_env.games.casino:CASINO_CHOICES",
}
#: The game of every env built without ``game=``.
DEFAULT_GAME = "mulle"


class IllegalActionError(IllegalMoveError):
    """An action index that is out of range or not legal in the current state (of any game).

    Also ``mulle_env.codec.IllegalActionError`` (the same class): code that catches it there keeps working.
    """


def action_int(action: Any) -> int | None:
    """``action`` as a Python int if it is an integer (int, numpy integer, 0-d integer array), else ``None``.

    Floats (``7.0``) and bools (``True``) are not actions, even where they equal an int:
    a float action is almost always a bug upstream (a policy's raw output), and
    accepting it would hide that bug.
    """
    if type(action) is int:
        return action
    if isinstance(action, (bool, np.bool_)):
        return None
    try:
        return operator.index(action)
    except TypeError:
        return None


def shown(value: object) -> str:
    """``value`` for a message: a numpy scalar as its Python value (``5000``, not ``np.int64(5000)``)."""
    return repr(value.item()) if isinstance(value, np.generic) else repr(value)


def action_index(action: object, num_actions: int) -> int:
    """``action`` as an int from 0 to ``num_actions - 1``; an :class:`IllegalActionError` saying what is wrong else."""
    i = action_int(action)
    if i is None:
        raise IllegalActionError(
            f"an action must be an int from 0 to {num_actions - 1} (a Python or numpy integer, "
            f"not a float or bool), not {shown(action)}"
            + (f" ({type(action).__name__})" if isinstance(action, np.generic) else "")
        )
    if not 0 <= i < num_actions:
        raise IllegalActionError(f"action {i} is out of range: actions are ints from 0 to {num_actions - 1}")
    return i


class EnvState(Protocol):
    """A game's state as the env layer reads and plays it (both Mulle backends, and any game's states).

    The steppers play actions with :meth:`play_id` only after checking them against :meth:`legal_ids`;
    agents opponents play through the engine's game loop, which reads :meth:`view` and
    :meth:`legal_moves` and parses an answer with :meth:`check`.
    """

    @property
    def over(self) -> bool:
        """True once the game has ended."""
    @property
    def to_move(self) -> int:
        """The seat to move, 0 or 1."""
    def legal_ids(self) -> Sequence[int]:
        """The actions (move ids) legal for the seat to move, ascending; empty once the game is over."""
    def play_id(self, action: int, /) -> Any:
        """Play the legal action ``action`` for the seat to move."""
    def scores(self) -> tuple[int, int]:
        """The two game totals, seat 0's first."""
    def view(self, seat: int, /) -> Any:
        """What ``seat`` may know (the agents' view)."""
    def legal_moves(self) -> Sequence[Any]:
        """The legal moves of the seat to move."""
    def check(self, move: Any, /) -> Any:
        """``move`` (a move or its text) as the legal move it names; a ``ValueError`` saying why if it is not one."""


class EnvGame(Protocol):
    """What the env core asks of a game (the module docstring's table): one object per game.

    Subclass it to inherit the generic members below that have a body; the others each game writes.
    """

    #: The game's name, as :data:`GAMES` knows it (``"mulle"``).
    name: str
    #: Its Gymnasium id (``"Mulle-v0"``), named in the envs' messages.
    env_id: str
    #: Its PettingZoo name (``"mulle_v0"``): the AEC env's ``metadata["name"]``.
    aec_name: str
    #: The game's ruleset class (frozen; ``Ruleset()`` the defaults, ``Ruleset.from_dict(d)`` a dict of flags).
    Ruleset: type[Any]
    #: Size of the action space, ``Discrete(num_actions)``: an action is a move id, the same move in every state.
    num_actions: int
    #: Size of one observation (without extra inputs).
    obs_size: int
    #: The observation's dtype (float32: the steppers write float32 rows).
    obs_dtype: type[np.float32]

    def new_game(self, seed: int, ruleset: Any, /) -> EnvState:
        """A new game dealt from ``seed`` under the (checked) ``ruleset``."""
        ...

    def move_of(self, action: int, /) -> Any:
        """The move action ``action`` (in range) stands for, legal or not."""
        ...

    def encode(self, state: Any, seat: int, out: NDArray[np.float32], /) -> Any:
        """Write seat ``seat``'s observation of ``state`` into ``out`` (a preallocated row of ``obs_size``)."""
        ...

    def observation_bounds(self, ruleset: Any, /) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Elementwise ``(low, high)`` of the observation under ``ruleset``."""
        ...

    def score_bound(self, ruleset: Any, /) -> float:
        """The largest difference of game totals a game under ``ruleset`` can end with (an illegal action's cost)."""
        ...

    def max_decisions(self, ruleset: Any, /) -> int:
        """The most decisions one seat makes in a game under ``ruleset``."""
        ...

    # ----- generic members: a game that subclasses EnvGame gets these, and may write its own --------------
    def check_ruleset(self, ruleset: Any, /) -> Any:
        """``ruleset`` (``None`` for the defaults, a dict of flags, or a :attr:`Ruleset`) as the game's checked ruleset.

        A game whose action space cannot express some rulesets refuses them here, with a
        ``ValueError`` that says why.
        """
        if ruleset is None:
            return self.Ruleset()
        if isinstance(ruleset, self.Ruleset):
            return ruleset
        return self.Ruleset.from_dict(ruleset)

    def for_ruleset(self, ruleset: Any, /) -> EnvGame:
        """The game object whose action space plays ``ruleset`` (``None``, a dict of flags or a Ruleset, unchecked).

        This one, unless the game has several action spaces for several rulesets (Casino: move
        ids under ``gather_all=True``, the k-th legal move under ``gather_all=False``); the env
        core and its faces ask before they check the ruleset, so a user names the rules and
        gets the action space that plays them.
        """
        return self

    def action_of(self, move: Any, state: Any = None, /) -> int:
        """The action of ``move`` (its id), a legal move of ``state``.

        The env core hands the position the move is played in: a game whose actions index a
        position's legal moves (Casino under ``gather_all=False``) needs it; ids ignore it.
        """
        action: int = move.id
        return action

    def decode(self, state: Any, action: Any, /) -> Any:
        """The legal move ``action`` stands for in ``state``.

        Raises :class:`IllegalActionError` naming the action, the move it stands for and the legal
        actions (each with its move), or :class:`~mulle_env.GameOverError` once the game is over.
        """
        i = action_index(action, self.num_actions)
        ids = state.legal_ids()
        move = self.move_of(i)
        if i in ids:
            return move
        if state.over:
            raise GameOverError(f"action {i} ({move}): the game is over, no action is legal")
        legal = ", ".join(f"{a} ({self.move_of(a)})" for a in ids) or "none"
        raise IllegalActionError(f"action {i} ({move}) is not legal for player {state.to_move}; legal actions: {legal}")

    def make_stepper(self, num_envs: int, ruleset: Any, internal_random: bool, num_threads: int | str = 1, /
                     ) -> Stepper:
        """K games of this game stepped together: the generic :class:`~mulle_env.stepper.PyStepper` over this object.

        ``internal_random``: the stepper's own random opponent plays the seat the learner does not
        hold; ``num_threads`` is checked (:func:`~mulle_env.stepper.resolve_threads`) and the
        Python stepper runs on the calling thread.
        """
        from ..stepper import PyStepper, resolve_threads

        return PyStepper(num_envs, ruleset, internal_random, num_threads=resolve_threads(num_threads), game=self)

    def render(self, view: Any, /) -> str:
        """A seat's view as text (``render_mode="ansi"``)."""
        return str(view)

    @property
    def extra_blocks(self) -> tuple[str, ...]:
        """Names of the extra-input blocks ``extras=`` may name (none by default)."""
        return ()

    def extras_bounds(self, name: str, /) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Elementwise ``(low, high)`` of block ``name`` (its length is the block's size)."""
        raise ValueError(f"{self.env_id} has no extra-input block {name!r}")

    def add_extras(self, base: NDArray[np.float32], out: NDArray[np.float32], name: str, /) -> None:
        """Block ``name`` of each observation row of ``base`` into the rows of ``out``."""
        raise ValueError(f"{self.env_id} has no extra-input block {name!r}")

    #: Floats of one afterstate (:meth:`write_afterstates`); 0: the game offers none.
    afterstate_size: int = 0

    def check_afterstates(self) -> int:
        """:attr:`afterstate_size`, or a ``ValueError`` saying this game offers no afterstates."""
        if not self.afterstate_size:
            raise ValueError(f"{self.env_id} offers no afterstates yet; Mulle-v0 does (mulle_env.afterstates)")
        return self.afterstate_size

    def write_afterstates(self, state: Any, player: int, actions: Sequence[int], obs: NDArray[np.float32],
                          banked: NDArray[np.float64], /) -> None:
        """Row ``j``: the encoding of the position action ``actions[j]`` of ``player`` (to move) leaves, from
        ``player``'s seat with its hidden cards never shown, and ``player``'s score difference after it
        (:mod:`mulle_env.afterstates` is Mulle's)."""
        self.check_afterstates()
        raise NotImplementedError(f"{self.env_id} declares afterstates but does not write them")


def get_game(game: EnvGame | str | None = None, ruleset: Any = None) -> EnvGame:
    """The game object of ``game``: an :class:`EnvGame` as it is, a name of :data:`GAMES`, or ``None`` (Mulle).

    Given ``ruleset`` (the env's option, unchecked), the object whose action space plays it
    (:meth:`EnvGame.for_ruleset`).
    """
    found = _find_game(game)
    return found if ruleset is None else found.for_ruleset(ruleset)


def _find_game(game: EnvGame | str | None) -> EnvGame:
    if game is None:
        game = DEFAULT_GAME
    if isinstance(game, str):
        where = GAMES.get(game)
        if where is None:
            raise ValueError(f"unknown game {game!r}; games: {', '.join(sorted(GAMES))}")
        module, _, attribute = where.partition(":")
        found: EnvGame = getattr(importlib.import_module(module), attribute)
        return found
    missing = [m for m in ("name", "num_actions", "obs_size", "new_game", "encode", "make_stepper")
               if not hasattr(game, m)]
    if missing:
        raise ValueError(f"game must be a game object (mulle_env.games.EnvGame) or one of the names "
                         f"{', '.join(map(repr, sorted(GAMES)))}, not {game!r} (it has no {', '.join(missing)})")
    return game
