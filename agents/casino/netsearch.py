"""``netsearch`` at Casino: the determinized search of :mod:`agents.netsearch` with a Casino logits net.

The search is :class:`agents.netsearch.NetSearchAgent`'s (candidates ranked by the net's
logits, ``samples`` determinizations, rollouts of ``depth - 1`` plies in which both seats play
the net's argmax with one batched forward pass a ply, then a leaf value, averaged over the
determinizations); only what it asks of the game is Casino's here:

* **determinizations** are dealt as Casino's ``pimc`` deals them
  (:func:`agents.determinized.deal_hidden`: the unseen cards into the opponent's hand and the
  stock, an opponent who owns a build holding a card of its value,
  :func:`agents.casino.playout.hidden_requirements`) and made states by
  :meth:`mulle_env.casino.GameState.from_view`;
* observations are the environments' (:func:`mulle_env.games.casino.encode_state`), moves are
  played by id (:meth:`mulle_env.casino.GameState.play_id`);
* a **leaf** is the searcher's game total less the opponent's, plus (``leaf=score``, the
  default) the round in play's points as its piles stand (:func:`agents.casino.playout.evaluate`,
  pimc's leaf) or (``leaf=value``, or ``auto`` with a file that has a value head) the value head's
  points to come, which is what the expert pipeline fits it to (final difference less the totals
  banked: :mod:`training.games`). A finished game counts exactly. ``score`` is the default
  because it measured far stronger with its shipped net (docs/casino.md, "netsearch at Casino":
  40.2% against ``pimc`` on 200 one-round deals where ``value`` scored 10.2%): a value head
  fitted to the outcomes of a few hundred games is too noisy a leaf.

Once the stock is empty nothing is hidden and nothing needs sampling: with ``endgame=true`` (the
default) every legal move gets its exact value, the totals' difference at the round's end under
perfect play by both seats (:func:`agents.casino.endgame.endgame_values`, in points: the scale of
the search's own values and of the teacher labels they become), in the net's order, which breaks
ties.

Without ``policy=`` it searches with the shipped Casino logits net
(:data:`agents.learned.casino.DEFAULT_CASINO_SEARCH_POLICY_PATH`, the net ``learned`` played before
its afterstate net). It searches with logits nets only (Casino's afterstate nets score moves without
logits to rank candidates by), and has no public-history inference beyond the builds'
reservations, so ``history`` does not apply.

>>> import agents
>>> bot = agents.make("netsearch:samples=16,depth=4", game="casino")  # doctest: +SKIP
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..determinized import deal_hidden
from ..learned.agent import policy_version
from ..learned.casino import DEFAULT_CASINO_SEARCH_POLICY_PATH
from ..netsearch import NetSearchAgent
from .endgame import endgame_values
from .playout import evaluate, hidden_requirements

__all__ = ["CasinoNetSearchAgent"]


class CasinoNetSearchAgent(NetSearchAgent):
    """``netsearch`` at Casino (module docstring): determinized search with a Casino logits net.

    Args:
        policy: A Casino policy file with a logits head; empty means the shipped Casino logits net.
        samples: Determinizations per decision.
        width: Search the net's best ``width`` moves (0 = all).
        depth: Plies per rollout, the candidate included (1 = the leaf right after it).
        leaf: ``score`` (the round's points as the piles stand), ``value`` (the value head's points to
            come) or ``auto`` (``value`` when the file has a value head).
        prior: Weight in points of the net's log-probability added to each move's value.
        endgame: Value the round's last deal exactly once the stock is empty (module docstring);
            ``false`` searches it like any other deal.

    The defaults (16 determinizations, the 4 best moves, 4 plies, ``leaf=score``) are what
    docs/casino.md's measurement against ``pimc`` used. Its
    :attr:`~agents.base.Agent.version` is ``"3+"`` and the policy file's fingerprint (version 2 searched
    the last deal too, what ``endgame=false`` does and is numbered; version 1 had ``leaf=auto``, the value
    head's leaves, as its default: the same spec was another agent).
    """

    games = ("casino",)
    code_version = "3"

    def __init__(self, policy: str = "", samples: int = 16, width: int = 4, depth: int = 4, leaf: str = "score",
                 prior: float = 0.0, endgame: bool = True) -> None:
        super().__init__(policy, samples, width, depth, leaf, prior, history=False)
        self.endgame = bool(endgame)
        if not self.endgame:
            self.version = policy_version("2", self.net)  # version 2's play: its results stay comparable
        if self.afterstate:
            raise ValueError(f"{self.path} is an afterstate net; Casino's netsearch ranks moves by a logits "
                             "net's logits (mulle-train expert --game casino --net logits makes them)")

    @staticmethod
    def _default_policy() -> str:
        return DEFAULT_CASINO_SEARCH_POLICY_PATH

    def check_ruleset(self, ruleset: Any) -> None:
        """Refuse ``gather_all=False`` (its moves have no ids, so no logits) and rules the net was not trained for."""
        if not getattr(ruleset, "gather_all", True):
            raise ValueError("netsearch ranks moves by the net's logits over Casino's move ids, and under "
                             "gather_all=False moves have no ids: play it under gather_all=True (the default)")
        self.net.check_ruleset(ruleset)

    def move_values(self, view: Any, legal_moves: Sequence[Any], rng: random.Random) -> list[tuple[Any, float]]:
        """``(move, value)`` for each searched move, best logit first, in points from the mover's seat.

        In the round's last deal (``endgame``) every legal move, valued exactly; elsewhere, and if the exact
        search gives up, :meth:`agents.netsearch.NetSearchAgent.move_values`'s search.
        """
        if self.endgame and view.stock_size == 0 and len(legal_moves) > 1:
            exact = endgame_values(view, legal_moves, win=0)
            if exact is not None:
                ids = [m.id for m in legal_moves]
                order = np.argsort(-self.net.legal_logits(self._view_obs(view), ids), kind="stable")
                return [(legal_moves[i], exact[i]) for i in order]
        return super().move_values(view, legal_moves, rng)

    def reset(self) -> None:
        """Nothing to forget: the search deals from the view alone."""

    def observe(self, event: tuple[int, Any]) -> None:
        """Nothing to hear: the view's builds say all the search uses about the opponent's hand."""

    def _played(self, view: Any, rng: random.Random, cands: Sequence[Any]) -> list[Any]:
        """Per determinization (``samples``, dealt as Casino's ``pimc`` deals), each candidate played on a copy."""
        from mulle_env.casino import GameState

        required = hidden_requirements(view)
        states: list[Any] = []
        for _ in range(self.samples):
            hand, stock = deal_hidden(view, rng, required)
            root = GameState.from_view(view, hand, stock, seed=rng.getrandbits(63))
            states.extend(root.copy().play(m) for m in cands)
        return states

    def _view_obs(self, view: Any) -> NDArray[np.float32]:
        from mulle_env.games.casino import encode_view

        return encode_view(view)

    def _state_obs(self, st: Any, seat: int, out: NDArray[np.float32]) -> None:
        from mulle_env.games.casino import encode_state

        encode_state(st, seat, out=out)

    def _legal_ids(self, st: Any) -> Sequence[int]:
        return tuple(st.legal_ids())

    def _play_id(self, st: Any, move_id: int) -> None:
        st.play_id(move_id)

    def _banked(self, st: Any, me: int, leaf_score: bool) -> float:
        a, b = st.scores()
        total = float(a - b if me == 0 else b - a)
        if leaf_score and not st.is_over():
            total += evaluate(st, me)  # the round in play as its piles stand: pimc's leaf
        return total
