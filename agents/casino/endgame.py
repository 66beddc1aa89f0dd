"""The round's last deal solved exactly: once the stock is empty, Casino is a game of perfect information.

Every card of the deck is dealt once (CASINO.md 1.2), so when the stock is empty the cards a
player has not seen (:meth:`~mulle_env.casino.PlayerView.unseen`) are exactly the opponent's
hand. From then on to the round's end (at most eight plies: four cards in each hand) nothing
is hidden and nothing is left to chance, and the round's result under best play by both
seats is a number an alpha-beta search finds in about half a millisecond on average on the
compiled core (a thousand or two positions from the deal's first move; fewer later; the pure-Python
reference engine takes 15 to 25 times as long a position).

That is where a one-pass net is weakest and where the most is at stake: the cards left on
the table go to the last capturer (5.2), and the cards race (3 points) and the spades race
are often settled in this deal. Measured at the start of this work: ``learned`` with
``pimc`` playing its last deals scored +0.5 points a one-round game more against ``pimc``
than the net alone, on the same deals (docs/casino.md, "The learned agent").

A position's value is from the searching seat: the difference of the game totals when the
round ends, plus :data:`WIN` for a game won then (less for one lost), so a won game comes
before any margin and, game outcome equal, more points come before fewer. A round that ends
without ending the game stops the search there (the next round's deck is a fresh shuffle).

The search is deterministic: it counts positions, not seconds. A last deal that branches more
than ``node_limit`` positions allow is given up, and the caller plays as it would have
without it: under the default rules none measured came near; under ``gather_all=False``, where
every choice of cards is its own move, some do (:data:`NODE_LIMIT`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["NODE_LIMIT", "WIN", "SearchLimit", "endgame_choice", "endgame_state", "endgame_value", "endgame_values"]

#: The value of a won game beyond any margin of points (a round is worth 11 points plus sweeps).
WIN = 1000
#: Positions one decision may search before the search gives up: about 0.2 s on the compiled core under the
#: default rules (0.8 us a position), 1.2 s under ``gather_all=False`` (6 us). Searching every move of a
#: decision with a full window, a last deal's decisions took at most 22,944 positions (median 94, 99th
#: percentile 9,320) over 2,020 decisions of 300 one-round games under the default rules; under
#: ``gather_all=False`` a last deal's first move took a median 8,091 and at most 356,373 (40 random games).
NODE_LIMIT = 200_000


class SearchLimit(Exception):
    """The search reached its ``node_limit`` (positions); the caller plays without it."""


def endgame_state(view: Any, seed: int = 0, state_type: Any = None) -> Any | None:
    """The whole game state behind ``view`` when nothing is hidden (the stock empty), else ``None``.

    The opponent's hand is the view's unseen cards. ``seed`` deals a later round's deck (the
    real one is hidden; the search stops at the round's end and never looks at it).
    ``state_type`` is the backend's ``GameState`` to build (default: the one in use,
    ``mulle_env.casino.GameState``).
    """
    if state_type is None:
        from mulle_env.casino import GameState as state_type

    if view.over or view.stock_size != 0:
        return None
    unseen = list(view.unseen())
    if len(unseen) != view.opponent_hand_size:
        return None  # not the whole deck dealt (cannot happen under CASINO.md's deal; never guessed)
    return state_type.from_view(view, unseen, [], seed=seed)


def endgame_value(state: Any, seat: int, alpha: float = -float("inf"), beta: float = float("inf"),
                  node_limit: int = NODE_LIMIT) -> float:
    """The value of ``state`` for ``seat`` under best play by both (module docstring), by alpha-beta.

    ``state`` is a whole state in the round's last deal (its stock empty: :func:`endgame_state`).
    Fail-hard: a value at most ``alpha`` or at least ``beta`` says only that (a bound).
    Raises :class:`SearchLimit` after ``node_limit`` positions, and a ``ValueError`` for a state
    that is over or still has a stock (the search would run on into deals nobody knows).
    """
    if state.over or state.stock:
        raise ValueError("endgame_value searches the round's last deal: a state in play with an empty stock, not "
                         f"{'a finished game' if state.over else f'one with {len(state.stock)} cards in the stock'}")
    search = _Search(seat, state.round, node_limit, state.ruleset.gather_all)
    return search.value(state, alpha, beta)


def endgame_choice(view: Any, legal_moves: Sequence[Any], order: Sequence[int],
                   node_limit: int = NODE_LIMIT) -> int | None:
    """The place in ``legal_moves`` of a move of the best value for the view's seat, or ``None``.

    ``None`` when something is hidden (the stock not empty) or the search passed
    ``node_limit`` positions. ``order`` lists the places in the caller's order of
    preference (a net's scores, best first): of the moves of equal best value, the earliest
    there is chosen, so against an opponent who does not play perfectly the caller's
    judgement still picks among the moves perfect play allows.
    """
    root = _root(view, "endgame_choice chooses for", node_limit, WIN)
    if root is None:
        return None
    state, search = root
    best, best_i = -float("inf"), None
    try:
        for i in order:
            # A later move replaces the best only when strictly better: searching with alpha = best is enough.
            value = search.value(_after(state, legal_moves[i]), best, float("inf"))
            if best_i is None or value > best:
                best, best_i = value, int(i)
    except SearchLimit:
        return None
    return best_i


def endgame_values(view: Any, legal_moves: Sequence[Any], node_limit: int = NODE_LIMIT,
                   win: float = WIN) -> list[float] | None:
    """Every legal move's exact value for the view's seat (not bounds: each searched with a full window), or ``None``.

    ``None`` as for :func:`endgame_choice`. ``win`` is the bonus of a won game; ``win=0`` gives
    plain points (the totals' difference at the round's end), the scale of a search's move values
    and of teacher labels. ``node_limit`` counts the positions of all the moves together.
    """
    root = _root(view, "endgame_values values the moves of", node_limit, win)
    if root is None:
        return None
    state, search = root
    try:
        return [search.value(_after(state, move), -float("inf"), float("inf")) for move in legal_moves]
    except SearchLimit:
        return None


def _root(view: Any, caller: str, node_limit: int, win: float) -> tuple[Any, _Search] | None:
    """The whole state behind ``view`` and a search for the view's seat, or ``None`` while something is hidden.

    ``caller`` names the public function for the refusal of a view whose seat is not to move.
    """
    if view.to_move != view.player:
        raise ValueError(f"{caller} the player to move; player {view.player} is not to move")
    state = endgame_state(view)
    if state is None:
        return None
    return state, _Search(int(view.player), state.round, node_limit, state.ruleset.gather_all, win)


def _after(state: Any, move: Any) -> Any:
    """A copy of ``state`` with ``move`` played (``state`` itself unchanged)."""
    child = state.copy()
    child.play(move)
    return child


class _Search:
    """One decision's alpha-beta: the searching seat, the round it ends with, the positions left, a win's bonus."""

    __slots__ = ("seat", "round", "left", "ids", "win")

    def __init__(self, seat: int, round_no: int, node_limit: int, ids: bool, win: float = WIN) -> None:
        self.seat, self.round, self.left, self.ids, self.win = seat, round_no, node_limit, ids, win

    def leaf(self, state: Any) -> float | None:
        if not state.over and state.round == self.round:
            return None
        a, b = state.scores()
        diff = a - b if self.seat == 0 else b - a
        value = float(diff)
        if state.over and diff:
            value += self.win if diff > 0 else -self.win
        return value

    def value(self, state: Any, alpha: float, beta: float) -> float:
        self.left -= 1
        if self.left < 0:
            raise SearchLimit
        done = self.leaf(state)
        if done is not None:
            return done
        mine = state.to_move == self.seat
        # Move ids and play_id are the compiled core's fast path (gather_all=True: every move has an id).
        moves: Sequence[Any] = state.legal_ids() if self.ids else state.legal_moves()
        play = "play_id" if self.ids else "play"
        for move in moves:
            child = state.copy()
            getattr(child, play)(move)
            v = self.value(child, alpha, beta)
            if mine:
                if v > alpha:
                    alpha = v
            elif v < beta:
                beta = v
            if alpha >= beta:
                break
        return alpha if mine else beta
