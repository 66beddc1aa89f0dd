"""``learned`` at Casino: a Casino policy file played with numpy alone (no torch).

A Casino policy file holds one of two kinds of net (its ``head`` key, :mod:`agents.learned.policy`):

* a **logits** net: the agent encodes its view with the encoder Casino's environments use
  (:func:`mulle_env.games.casino.encode_view`, 456 floats), computes the logits of the legal
  moves only (a move's index among the net's 504 outputs is its id,
  :data:`mulle_env.casino.MOVES`) and plays the best one;
* an **afterstate** net: the agent encodes the position each legal move leaves
  (:func:`encode_casino_afterstates`, the same encoder from the mover's seat) and plays the
  move with the most points banked after it (less the opponent's expected best reply, as
  ``greedy`` reckons it) plus the net's points still to come (:func:`casino_afterstate_scores`).
  What a capture takes is then exact; the net learns what the move leaves to the opponent
  beyond that reply.

Once the stock is empty nothing is hidden, and the agent plays the round's last deal by an exact
search (:mod:`agents.casino.endgame`), the net's order choosing among moves of equal value
(``endgame=false``: the net alone to the round's end).

``sample=true`` samples from the softmax of either instead (the net alone). The file must be a Casino net
(its ``game`` key): ``mulle-train ppo --game casino`` and ``mulle-train expert --game casino``
write them. Without a path it plays the shipped Casino net,
:data:`DEFAULT_CASINO_POLICY_PATH` (made by ``mulle-train expert --game casino``; how, and how
strong it is: docs/casino.md, "The learned agent").

>>> import agents
>>> bot = agents.make("learned", game="casino")                                # the shipped net
>>> bot = agents.make("learned:path=runs/casino/best.npz", game="casino")  # doctest: +SKIP
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..base import Agent
from ..casino.endgame import endgame_choice
from .afterstate import afterstate_rows, afterstate_scores
from .agent import cached_policy, pick, policy_version
from .policy import MLPPolicy, check_game

__all__ = ["AFTERSTATE_SEED", "CasinoLearnedAgent", "DEFAULT_CASINO_POLICY_PATH", "DEFAULT_CASINO_SEARCH_POLICY_PATH",
           "NO_SHIPPED_NET",
           "best_afterstate", "casino_afterstate_scores", "encode_casino_afterstates", "expected_replies"]

#: The seed of later rounds' decks in the states afterstates are played on. The real one is hidden, and a
#: round's last card deals the next round from it: a fixed seed makes that afterstate the same from every view.
AFTERSTATE_SEED = 0

#: The shipped Casino net (an afterstate net), played by ``learned`` at Casino without a path.
DEFAULT_CASINO_POLICY_PATH = str(Path(__file__).resolve().parents[1] / "data" / "casino_learned.npz")
#: The shipped Casino logits net, searched by Casino's ``netsearch`` without ``policy=`` (``learned``'s net until
#: the afterstate net replaced it: docs/casino.md).
DEFAULT_CASINO_SEARCH_POLICY_PATH = str(Path(__file__).resolve().parents[1] / "data" / "casino_netsearch.npz")

#: Why ``learned`` without a path cannot play Casino when the shipped net's file is missing (an install without
#: the package data).
NO_SHIPPED_NET = (
    f"the shipped Casino net {DEFAULT_CASINO_POLICY_PATH} is missing (an install without agents/data): name a "
    "Casino policy file, learned:path=FILE (mulle-train ppo --game casino or mulle-train expert --game casino make "
    "one), or reinstall mulle-env")


def encode_casino_afterstates(view: Any, legal_moves: Sequence[Any], out: NDArray[np.float32] | None = None,
                              replies: bool = True) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
    """``(obs, banked)``: per legal move, the encoding of the position it leaves and the points banked after it.

    ``view`` is the mover's :class:`~mulle_env.casino.PlayerView`. The hidden cards (the
    opponent's hand, the stock) are filled with the view's unseen cards in their canonical
    order, so nothing hidden enters: the encoding (:func:`mulle_env.games.casino.encode_state`
    of the mover's seat, which reads only that seat's view) shows the opponent's hand as a
    size, and two views that differ only in hidden cards give the same afterstates. When the
    move is the deal's last card and the stock still holds cards, the opponent is given one of
    them first (the view's stock one smaller), so the move never deals the next hands from
    cards the mover cannot know (as Mulle's afterstates keep the opponent a card). The
    round's last card deals the next round from :data:`AFTERSTATE_SEED`.

    ``banked`` is the mover's points after the move relative to the view's game totals: the
    change of the totals (a round scored by the move) plus the round in play's points as its
    piles stand (:func:`agents.casino.playout.evaluate`, ``pimc``'s leaf), the convention of
    ``pimc``'s move values, less the opponent's expected best capture in reply
    (:func:`agents.casino.greedy.expected_best_reply`, over the hands the unseen cards make).
    That reply is what a net reading cards one by one finds hardest (which sums of table cards
    a card the opponent may hold takes), and with it in ``banked`` the net learns only what
    the search sees beyond it: on the same 580 labelled games the held-out regret fell from
    0.31 to 0.27 points and the net scored 53.0% against ``greedy`` where the one without it
    scored 48.7% (300 duplicate games, docs/casino.md). ``obs`` is ``(len(legal_moves), 456)``
    float32 (written into ``out`` when it is given and large enough); ``banked`` is float64.
    With ``replies=False`` the reply is left out of ``banked`` (:func:`expected_replies` gives it).
    """
    from mulle_env.casino import GameState
    from mulle_env.games.casino import OBS_DTYPE, OBS_SIZE, encode_state

    from ..casino.playout import evaluate

    n = len(legal_moves)
    obs, banked = afterstate_rows(n, OBS_SIZE, OBS_DTYPE, out)
    if n == 0:
        return obs, banked
    p = int(view.player)
    if view.over or view.to_move != p:
        raise ValueError(f"afterstates are of the player to move; player {p} is not to move")
    unseen = list(view.unseen())
    held = int(view.opponent_hand_size)
    base_view = view
    if held == 0 and view.stock_size > 0:
        # The deal's last card: give the opponent a stock card, so playing it deals nothing hidden.
        base_view = view._replace(opponent_hand_size=1, stock_size=view.stock_size - 1)
        held = 1
    base = GameState.from_view(base_view, unseen[:held], unseen[held:], seed=AFTERSTATE_SEED)
    start = view.scores[p] - view.scores[1 - p]

    for i, move in enumerate(legal_moves):
        after = base.copy()
        after.play(move)
        encode_state(after, p, out=obs[i])  # in C on the compiled core
        a, b = after.scores()
        banked[i] = float((a - b if p == 0 else b - a) - start)
        if not after.over:
            banked[i] += evaluate(after, p)
    if replies:
        banked -= expected_replies(view, legal_moves)
    return obs, banked


def expected_replies(view: Any, legal_moves: Sequence[Any], which: Sequence[int] | None = None
                     ) -> NDArray[np.float64]:
    """The opponent's expected best capture in reply to each of ``legal_moves`` (or to those at the places
    ``which``), as ``greedy`` reckons it (:func:`agents.casino.greedy.expected_best_reply`): none after the
    round's last play, and the round's last play itself when each holds one card and the stock is empty."""
    places = range(len(legal_moves)) if which is None else which
    reply = _replier(view)
    return np.array([reply(legal_moves[i]) if reply else 0.0 for i in places], dtype=np.float64)


def _replier(view: Any) -> Callable[[Any], float] | None:
    """A move's expected reply (:func:`expected_replies`), what every move shares reckoned once; ``None`` on the
    round's last play (nothing replies)."""
    from ..casino.effects import Pricing, is_last_play, table_after, view_table
    from ..casino.greedy import expected_best_reply

    if is_last_play(view):
        return None
    p = int(view.player)
    plans, pricing, table = view.move_plans(), Pricing(view), view_table(view)
    reply_last = view.stock_size == 0 and len(view.hand) == 1 and view.opponent_hand_size == 1
    return lambda move: expected_best_reply(table_after(table, plans[move], p), 1 - p, pricing, reply_last)


def casino_afterstate_scores(policy: MLPPolicy, view: Any, legal_moves: Sequence[Any],
                             out: NDArray[np.float32] | None = None) -> NDArray[np.float64]:
    """Each legal move's score by a Casino afterstate ``policy``: points banked after it + the net's points to come.

    One batched forward pass over :func:`encode_casino_afterstates` (written into ``out`` when given):
    :func:`agents.learned.afterstate.afterstate_scores` with Casino's encoder.
    """
    return afterstate_scores(policy, view, legal_moves, out, encode=encode_casino_afterstates)


def best_afterstate(policy: MLPPolicy, view: Any, legal_moves: Sequence[Any],
                    out: NDArray[np.float32] | None = None) -> int:
    """The place of the move :func:`casino_afterstate_scores` scores highest (the first on a tie), found with
    fewer replies reckoned: a reply only lowers a score, so once a move's score without its reply is below the
    best score so far, no later move (taken best first) can win. The reply is most of the time a decision costs."""
    obs, banked = encode_casino_afterstates(view, legal_moves, out, replies=False)
    upper = banked + policy.points_to_come(obs)
    reply = _replier(view)
    if reply is None:
        return int(np.argmax(upper))
    best, best_i = -np.inf, -1
    for i in np.argsort(-upper, kind="stable"):
        if upper[i] < best:
            break
        score = upper[i] - reply(legal_moves[i])
        if score > best or (score == best and i < best_i):
            best, best_i = score, int(i)
    return best_i


class CasinoLearnedAgent(Agent):
    """A Casino net (logits or afterstate) from a ``.npz`` policy file (``learned:path=FILE`` at ``--game casino``).

    Args:
        path: The Casino policy ``.npz`` file; empty means the shipped net (:data:`DEFAULT_CASINO_POLICY_PATH`).
        sample: Sample from the softmax over the legal moves (using the game's ``rng``)
            instead of playing the most likely one.
        temperature: Softmax temperature when sampling.
        endgame: Once the stock is empty (nothing hidden, :mod:`agents.casino.endgame`), play a move of the
            best value under perfect play by both seats, the net choosing among equal ones; ``false`` plays
            the net alone to the round's end. Only when not sampling.

    Raises a ``ValueError`` at construction when the shipped net is asked for and its file is missing, and
    :class:`~agents.learned.policy.PolicyFileError` /
    :class:`~agents.learned.policy.PolicyGameError` for a bad file or a Mulle net.
    Its :attr:`~agents.base.Agent.version` is ``"2+"`` and the policy's fingerprint when it solves the last deal,
    ``"1+"`` and the fingerprint when it plays the net alone (``endgame=false``, or sampling).
    """

    name = "learned"
    spec = "learned"
    games = ("casino",)
    #: The playing code's own version; :func:`~agents.learned.agent.policy_version` appends the policy's fingerprint.
    #: 2: the last deal solved exactly (``endgame``, on by default); results of version 1 are of the net alone.
    code_version = "2"

    def __init__(self, path: str = "", sample: bool = False, temperature: float = 1.0, endgame: bool = True) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, not {temperature!r}")
        if not path and not Path(DEFAULT_CASINO_POLICY_PATH).is_file():
            raise ValueError(NO_SHIPPED_NET)
        self.path = str(path) if path else DEFAULT_CASINO_POLICY_PATH
        self._setup(cached_policy(self.path), sample, temperature, endgame, f"policy file {self.path!r}")

    @classmethod
    def from_policy(cls, policy: MLPPolicy, sample: bool = False, temperature: float = 1.0,
                    endgame: bool = True) -> CasinoLearnedAgent:
        """An agent around an in-memory Casino policy (training snapshots, evaluations and tests)."""
        agent = cls.__new__(cls)
        agent.path = "<memory>"
        agent._setup(policy, sample, temperature, endgame, "the policy")
        return agent

    def _setup(self, policy: MLPPolicy, sample: bool, temperature: float, endgame: bool, where: str) -> None:
        check_game(policy, "casino", where)  # a Mulle net: refused, naming its game
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, not {temperature!r}")
        self.policy = policy
        self.sample = bool(sample)
        self.temperature = float(temperature)
        self.endgame = bool(endgame)
        # Version 1's play (the net alone) keeps version 1's number: its results stay comparable.
        self.version = policy_version(self.code_version if self.endgame and not self.sample else "1", policy)
        self._obs = np.empty(policy.obs_size, dtype=np.float32)
        self._checked: Any = None

    def check_ruleset(self, ruleset: Any) -> None:
        """Refuse rules the net was not trained for, and ``gather_all=False`` for a logits net (moves without ids
        have no logit; an afterstate net scores positions and plays any rules it was trained for)."""
        if self.policy.head == "logits" and not getattr(ruleset, "gather_all", True):
            raise ValueError(
                "a Casino logits net writes one logit per move id, and under gather_all=False moves name what they "
                "take and have no ids: play it under gather_all=True (the default)")
        self.policy.check_ruleset(ruleset)

    def act(self, view: Any, legal_moves: Sequence[Any], rng: random.Random) -> Any:
        """The policy's choice among ``legal_moves`` (argmax, or a sample with ``sample=true``)."""
        from mulle_env.games.casino import encode_view

        if view.ruleset != self._checked:
            # Tools that do not ask check_ruleset up front still never see a net play rules it does not know.
            self.check_ruleset(view.ruleset)
            self._checked = view.ruleset
        if len(legal_moves) == 1:
            return legal_moves[0]
        z: NDArray[Any]  # float64 scores or float32 logits
        solve = self.endgame and not self.sample and view.stock_size == 0
        if self.policy.head == "afterstate":
            if not self.sample and not solve:
                best = best_afterstate(self.policy, view, legal_moves, self._after_buffer(len(legal_moves)))
                return legal_moves[best]
            z = casino_afterstate_scores(self.policy, view, legal_moves, out=self._after_buffer(len(legal_moves)))
        else:
            obs = encode_view(view, out=self._obs)
            z = self.policy.legal_logits(obs, [m.id for m in legal_moves])
        if solve:
            # Nothing is hidden now: perfect play, the net's order choosing among moves of equal value.
            solved = endgame_choice(view, legal_moves, [int(i) for i in np.argsort(-z, kind="stable")])
            if solved is not None:
                return legal_moves[solved]
        return legal_moves[pick(z, self.sample, self.temperature, rng)]

    def _after_buffer(self, n: int) -> NDArray[np.float32]:
        buf = self.__dict__.get("_after")
        if buf is None or buf.shape[0] < n:
            buf = self._after = np.empty((max(n, 32), self.policy.obs_size), dtype=np.float32)
        return buf

    def __getstate__(self) -> dict[str, Any]:
        # The weights travel with the agent (pickling for arena workers must not need the file).
        return self.__dict__.copy()
