"""``netsearch``: determinized search guided by a learned policy and value head.

The same frame as ``pimc`` (deal the unseen cards exactly from what the player knows,
:mod:`agents.inference`; compare candidates on common determinizations), with the
network in the three places where pimc uses hand-written rules:

1. **Candidates**: the legal moves ranked by the policy's logits; only the best
   ``width`` are searched (0 = all).
2. **Rollouts**: after the candidate, both seats play the policy's moves (its argmax)
   for ``depth - 1`` more plies. The rollouts of every candidate and determinization
   advance together, so each ply is one batched forward pass.
3. **Leaves**: ``leaf=score`` scores a leaf with the points banked so far
   (:func:`agents.rollout.set_value`, as pimc); ``leaf=value`` adds the value
   head's prediction of the points still to come from the searcher's seat; ``auto``
   uses the value head when the file has one. A finished game is scored exactly.

``prior`` (points) adds ``prior x log p(move)`` from the policy to each candidate's
value, which breaks near-ties toward the network's choice when samples are few.

With an **afterstate** policy file (``head="afterstate"``, every shipped one) the net
scores moves by the positions they leave (``banked + net``, :mod:`agents.learned.agent`),
and the same three places use that score: candidates are the best-scored moves;
in a rollout each seat plays its best-scored move (its afterstates encoded from its
own seat of the determinization, so only what that seat would know enters); and the
leaf is the score of the last move played, from the searcher's seat (negated when the
opponent played it: the score is a point difference). ``depth=1`` is the ``learned``
agent itself; ``depth=2`` adds the opponent's best reply to each candidate in each
determinization; the default, ``depth=5``, plays on to the searcher's third move, which
measured far stronger than ``depth=2``, still in less time than pimc's (docs/agents.md).
``leaf`` does not apply (``auto``).
Like pimc it exposes :meth:`NetSearchAgent.move_values`, so it can label teacher data
for the next generation (:mod:`training.teacher`).

Speed: the batched forward passes are small matrix products, for which a multithreaded
BLAS is many times *slower* on a loaded machine (measured: 48 x 524 through a shipped
net, 1.6 ms with one OpenBLAS thread, 6-150 ms with two on 2 busy cores). Run it with
``OPENBLAS_NUM_THREADS=1`` (``mulle-expert`` sets it for its worker processes), or
install ``threadpoolctl``, which the agent then uses to limit BLAS to one thread in its
process.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from mulle_env.engine import GameState, Move, PlayerView, Ruleset
from mulle_env.engine.moves import MOVES
from mulle_env.observation import OBS_DTYPE, encode_state, encode_view
from mulle_env.threads import single_blas_thread

from .inference import HistorySearchAgent, sample_hidden
from .learned.afterstate import afterstate_scores, state_afterstates
from .learned.agent import DEFAULT_POLICY_PATH, cached_policy, policy_version
from .learned.policy import VALUE_SCALE, check_game
from .rollout import set_value

__all__ = ["DEFAULT_NET_PATH", "LEAVES", "NetSearchAgent", "limit_blas_threads"]

#: The net ``netsearch`` plays without ``policy=``: generation 4's, with which version 3's
#: defaults were measured against pimc (docs/learning.md, "Aims"). It is pinned rather than
#: following the shipped ``learned`` net: the newer net reads extra inputs and costs more a
#: forward pass, and a search's time a decision is mostly forward passes, so netsearch keeps
#: the net its figures hold for until it is measured with another.
DEFAULT_NET_PATH = str(Path(DEFAULT_POLICY_PATH).parent / "generations" / "gen4.npz")

#: Leaf evaluations.
LEAVES = ("auto", "value", "score")


def limit_blas_threads() -> bool:
    """One BLAS thread in this process: :func:`mulle_env.threads.single_blas_thread`.

    A kept compatibility name (CHANGELOG, 0.2.0) for old callers; new code calls
    :func:`mulle_env.threads.single_blas_thread`.

    netsearch no longer calls it itself: worker processes (the arena's, training's) get one
    BLAS thread from :mod:`mulle_env.threads`, and a command run in one process keeps the
    user's setting.
    """
    return single_blas_thread()


class NetSearchAgent(HistorySearchAgent):
    """Determinized search whose candidates, rollouts and leaves come from a policy file (module docstring).

    Args:
        policy: The policy ``.npz`` file; empty means :data:`DEFAULT_NET_PATH` (generation 4's afterstate net).
        samples: Determinizations per decision.
        width: Search the policy's best ``width`` moves (0 = all).
        depth: Plies per rollout, the candidate included (1 = evaluate right after it).
        leaf: ``auto``, ``value`` (banked points + the value head's points to come) or
            ``score`` (banked points only); see the module docstring.
        prior: Weight in points of the policy's log-probability added to each value.
        history: Deal determinizations by what the heard moves prove (as pimc).

    The defaults (32 determinizations, 4 candidates, depth 5: the candidate and four
    more plies of best replies) were chosen against ``pimc`` with generation 3's
    afterstate net (shipped then), at less thinking time than pimc's (docs/agents.md).
    Version 2's were 48, 4 and 2; version 1's 16, 6 and 4.

    Its :attr:`~agents.base.Agent.version` is ``"3+"`` and the policy file's fingerprint
    (as ``learned``): the same spec with a retrained policy is another agent, and
    versions 2 (afterstate nets, defaults 48/4/2) and 3 (defaults 32/4/5) are other agents
    than the one before.
    """

    name = spec = "netsearch"
    games: tuple[str, ...] = ("mulle",)  # its nets read Mulle's observation
    #: The search code's own version; :func:`~agents.learned.agent.policy_version` appends the net's fingerprint.
    code_version = "3"

    @staticmethod
    def _default_policy() -> str:
        """The net played without ``policy=``."""
        return DEFAULT_NET_PATH

    def __init__(self, policy: str = "", samples: int = 32, width: int = 4, depth: int = 5, leaf: str = "auto",
                 prior: float = 0.0, history: bool = True) -> None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, not {samples!r}")
        if width < 0:
            raise ValueError(f"width must be >= 0, not {width!r}")
        if depth < 1:
            raise ValueError(f"depth must be >= 1, not {depth!r}")
        if leaf not in LEAVES:
            raise ValueError(f"leaf must be one of {', '.join(LEAVES)}, not {leaf!r}")
        if prior < 0:
            raise ValueError(f"prior must be >= 0, not {prior!r}")
        self.path = str(policy) if policy else self._default_policy()
        self.net = cached_policy(self.path)
        check_game(self.net, self.games[0], f"policy file {self.path!r}")  # its search plays its game's nets only
        self.version = policy_version(self.code_version, self.net)
        self.afterstate = self.net.head == "afterstate"
        if self.afterstate and leaf != "auto":
            raise ValueError(f"leaf={leaf} applies to logits policies; {self.path} is an afterstate net, "
                             "whose leaves are the last move's score (leave leaf at auto)")
        if self.afterstate and prior:
            raise ValueError(f"prior applies to logits policies; {self.path} is an afterstate net (leave prior at 0)")
        if leaf == "value" and not self.net.has_value:
            raise ValueError(f"leaf=value needs a policy file with a value head; {self.path} has none")
        self.samples = samples
        self.width = width
        self.depth = depth
        self.leaf = ("value" if self.net.has_value else "score") if leaf == "auto" else leaf
        self.prior = float(prior)
        super().__init__(history)

    def check_ruleset(self, ruleset: Ruleset) -> None:
        """Refuse rules the net was not trained for (as ``learned`` does) and ``forced_capture=False``.

        The search ranks candidates by the net's logits over the fixed move ids, which have
        no index for the captures of ``forced_capture=False``.
        """
        if not getattr(ruleset, "forced_capture", True):
            raise ValueError("netsearch's fixed action space needs forced_capture=True (with forced_capture=false "
                             "a capture names the cards it takes, which has no action index)")
        self.net.check_ruleset(ruleset)

    def _candidates(self, view: PlayerView, legal_moves: Sequence[Move]) -> tuple[list[Move], NDArray[np.float64]]:
        ids = [m.id for m in legal_moves]
        if None in ids:
            raise ValueError("netsearch's fixed action space needs forced_capture=True; "
                             f"this game's ruleset is {view.ruleset.changes()}")
        z = self.net.legal_logits(self._view_obs(view), cast("list[int]", ids)).astype(np.float64)  # no None here
        logp = z - z.max()
        logp -= np.log(np.exp(logp).sum())
        order = np.argsort(-z, kind="stable")
        if self.width:
            order = order[: self.width]
        return [legal_moves[i] for i in order], logp[order]

    def _played(self, view: PlayerView, rng: random.Random, cands: Sequence[Move]) -> list[GameState]:
        """Per determinization (``samples``, dealt from what the player knows), each candidate played on a copy."""
        required = self.known_values(view)
        states: list[GameState] = []
        for _ in range(self.samples):
            hand, deck = sample_hidden(view, rng, required)
            root = GameState.from_view(view, hand, deck, seed=rng.getrandbits(31))
            states.extend(root.copy().play_unchecked(m) for m in cands)
        return states

    def _afterstate_values(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random
                           ) -> list[tuple[Move, float]]:
        scores = afterstate_scores(self.net, view, legal_moves)
        order = np.argsort(-scores, kind="stable")
        if self.width:
            order = order[: self.width]
        cands = [legal_moves[i] for i in order]
        if len(cands) == 1 or self.depth == 1:
            return [(m, float(scores[i])) for m, i in zip(cands, order)]
        me = view.player
        states = self._played(view, rng, cands)
        values = np.tile(scores[order], self.samples)
        for _ in range(self.depth - 1):
            self._advance_afterstate(states, values, me)
        totals = values.reshape(self.samples, len(cands)).mean(axis=0)
        return [(m, float(v)) for m, v in zip(cands, totals)]

    def _advance_afterstate(self, states: list[GameState], values: NDArray[np.float64], me: int) -> None:
        """One ply of every unfinished rollout: each mover's best-scored move, one batched forward pass.

        ``values[i]`` becomes the score of the move played in rollout ``i`` from ``me``'s
        seat (a finished game's exact score difference).
        """
        live, blocks, banked = [], [], []
        for i, st in enumerate(states):
            if st.over:
                values[i] = set_value(st, me)
                continue
            mover = st.to_move
            legal = st.legal_moves()
            obs, b = state_afterstates(st, mover, legal)
            live.append((i, mover, legal))
            blocks.append(obs)
            banked.append(b)
        if not live:
            return
        z = self.net.points_to_come(np.concatenate(blocks))
        at = 0
        for (i, mover, legal), b in zip(live, banked):
            s = b + z[at : at + len(b)]
            at += len(b)
            k = int(np.argmax(s))
            states[i].play_unchecked(legal[k])
            values[i] = s[k] if mover == me else -s[k]

    def move_values(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random
                    ) -> list[tuple[Move, float]]:
        """``(move, value)`` for each searched move, best policy logit first; values in points, mover's seat."""
        if self.afterstate:
            return self._afterstate_values(view, legal_moves, rng)
        cands, logp = self._candidates(view, legal_moves)
        if len(cands) == 1:
            return [(cands[0], 0.0)]
        me = view.player
        states = self._played(view, rng, cands)
        for _ in range(self.depth - 1):
            self._advance(states)
        leaf = self._leaf_values(states, me)
        totals = leaf.reshape(self.samples, len(cands)).mean(axis=0)
        if self.prior:
            totals = totals + self.prior * logp
        return [(m, float(v)) for m, v in zip(cands, totals)]

    def _advance(self, states: list[GameState]) -> None:
        """One ply of every unfinished rollout: the policy's argmax, one batched forward pass."""
        live = [st for st in states if not st.over]
        if not live:
            return
        obs = np.empty((len(live), self.net.obs_size), dtype=OBS_DTYPE)
        rows: list[int] = []
        ids: list[int] = []
        bounds = [0]
        for j, st in enumerate(live):
            self._state_obs(st, st.to_move, obs[j])
            legal = self._legal_ids(st)
            rows.extend([j] * len(legal))
            ids.extend(legal)
            bounds.append(len(ids))
        z = self.net.batch_legal_logits(obs, np.asarray(rows), np.asarray(ids))
        for j, st in enumerate(live):
            a, b = bounds[j], bounds[j + 1]
            self._play_id(st, ids[a + int(np.argmax(z[a:b]))])

    def _leaf_values(self, states: list[Any], me: int) -> NDArray[np.float64]:
        exact = np.array([self._banked(st, me, self.leaf == "score") for st in states], dtype=np.float64)
        if self.leaf == "score":
            return exact
        live = [i for i, st in enumerate(states) if not st.over]
        if live:
            obs = np.empty((len(live), self.net.obs_size), dtype=OBS_DTYPE)
            for j, i in enumerate(live):
                self._state_obs(states[i], me, obs[j])
            exact[live] += self.net.value(obs).astype(np.float64) * VALUE_SCALE
        return exact

    # ----- what the search asks of its game (Mulle's here; CasinoNetSearchAgent's for Casino) -----
    def _view_obs(self, view: Any) -> NDArray[np.float32]:
        """The observation of the view's seat, as the net reads it."""
        return encode_view(view)

    def _state_obs(self, st: Any, seat: int, out: NDArray[np.float32]) -> None:
        """Write ``seat``'s observation of the determinization ``st`` into ``out``."""
        encode_state(st, seat, out=out)

    def _legal_ids(self, st: Any) -> Sequence[int]:
        """The action ids of the legal moves of ``st``'s seat to move."""
        return cast("Sequence[int]", st.legal_move_ids())

    def _play_id(self, st: Any, move_id: int) -> None:
        """Play the legal move of id ``move_id`` in the determinization ``st``."""
        st.play_unchecked(MOVES[move_id])

    def _banked(self, st: Any, me: int, leaf_score: bool) -> float:
        """``me``'s points banked in ``st`` (a finished game's exact difference); ``leaf_score``: the leaf is
        these points alone (``leaf=score``), else the value head's points to come are added to them."""
        return set_value(st, me)

    def __getstate__(self) -> dict[str, Any]:
        # The weights travel with the agent (arena workers need not read the file again).
        return self.__dict__.copy()
