"""Afterstates: the position each legal move leaves, as the mover sees it.

A fishing game's moves are best judged by what they leave: which cards the mover took,
what the table offers the opponent next, which build the mover now owns. An
*afterstate* network scores exactly that. For every legal move the mover's view is
turned into a state whose hidden cards are placeholders of the right number (the
opponent keeps at least one, so playing the mover's last card never ends the deal and
deals from an unknown deck), the move is played on a copy, and the copy is encoded from the mover's seat with the
environments' encoder (:func:`mulle_env.observation.encode_state`). Nothing hidden
enters: the placeholder is never encoded (the mover's view of the opponent is a hand
*size*), so two views that differ only in hidden cards give the same afterstates.

Next to each encoding comes the score difference the move banks (the mover's
:func:`agents.rollout.set_value` after the move): the network learns only the
points *still to come*, and its move score is ``banked + net(afterstate) x
VALUE_SCALE``. Points a capture takes now are therefore exact, whatever the net
learned; the net adds what the move gives away or prepares (the opponent's replies,
builds, the last capture of the set).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from mulle_env.afterstates import placeholder_state, reference_afterstates, write_afterstates
from mulle_env.engine import GameState, Move, PlayerView
from mulle_env.observation import OBS_DTYPE, OBS_SIZE

from .policy import MLPPolicy

__all__ = ["AfterstateEncoder", "afterstate_rows", "afterstate_scores", "encode_afterstates", "reference_afterstates",
           "state_afterstates"]


def encode_afterstates(
    view: PlayerView, legal_moves: Sequence[Move], out: NDArray[np.float32] | None = None
) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
    """``(obs, banked)``: per legal move, its afterstate's encoding and the points banked after it.

    ``obs`` is ``(len(legal_moves), OBS_SIZE)`` (written into ``out`` when it is given and
    large enough), ``banked`` the mover's score difference after the move (float64).
    """
    # Placeholders (card 0) for the hidden cards: their number is encoded, never their faces.
    base = GameState.from_view(view, [0] * max(1, view.opponent_hand_size), [0] * view.deck_size)
    return state_afterstates(base, view.player, legal_moves, out)


def afterstate_rows(n: int, size: int, dtype: Any, out: NDArray[np.float32] | None = None
                    ) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
    """A decision's ``(obs, banked)`` rows to write: ``out[:n]`` when ``out`` is given and large enough (a caller's
    reused buffer), else a new ``(n, size)`` array; ``banked`` always new (float64)."""
    if out is None or out.shape[0] < n:
        out = np.empty((n, size), dtype=dtype)
    return out[:n], np.empty(n, dtype=np.float64)


def state_afterstates(st: GameState, player: int, legal_moves: Sequence[Move],
                      out: NDArray[np.float32] | None = None) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
    """:func:`encode_afterstates` of ``player``'s view of ``st`` (``player`` to move), without making the view.

    The hidden cards of ``st`` (the opponent's hand, the deck) are replaced by placeholders,
    so a search can call this on its determinizations: the result is the same as from the
    view. The envs' afterstates (:func:`mulle_env.afterstates.write_afterstates`, compiled on
    the compiled core) write the rows; moves without an id (a ruleset the action space does
    not cover) go through their reference loop.
    """
    n = len(legal_moves)
    obs, banked = afterstate_rows(n, OBS_SIZE, OBS_DTYPE, out)
    if n == 0:
        return obs, banked
    if st.over or st.to_move != player:
        raise ValueError(f"afterstates are of the player to move; player {player} is not to move")
    ids = [m.id for m in legal_moves]
    if None not in ids:
        write_afterstates(st, player, cast("list[int]", ids), obs, banked)
    else:
        reference_afterstates(placeholder_state(st, player), player, legal_moves, obs, banked)
    return obs, banked


#: What encodes a decision's afterstates: ``(view, legal_moves, out) -> (obs, banked)``.
AfterstateEncoder = Callable[[Any, Sequence[Any], "NDArray[np.float32] | None"],
                             tuple[NDArray[np.float32], NDArray[np.float64]]]


def afterstate_scores(policy: MLPPolicy, view: PlayerView, legal_moves: Sequence[Move],
                      out: NDArray[np.float32] | None = None,
                      encode: AfterstateEncoder | None = None) -> NDArray[np.float64]:
    """Each legal move's score by an afterstate ``policy``: points banked after it + the net's points to come.

    One batched forward pass over the decision's afterstates (written into ``out`` when given),
    encoded by ``encode`` (default :func:`encode_afterstates`, Mulle's; Casino passes its own).
    """
    obs, banked = (encode or encode_afterstates)(view, legal_moves, out)
    scores: NDArray[np.float64] = banked + policy.points_to_come(obs)
    return scores
