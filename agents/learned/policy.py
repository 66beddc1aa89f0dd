"""The learned policy as plain numpy: an MLP from observation to action logits, and its file.

A policy file is a ``.npz`` archive (read with ``allow_pickle=False``) holding:

=====================  =================================================================
key                    content
=====================  =================================================================
``format``             the string ``"mulle-learned-policy"``
``format_version``     int, :data:`FORMAT_VERSION` (3; versions 1 and 2 are still read, see below)
``game``               optional (version 3): the game the net plays, one of :data:`POLICY_GAMES`
                       (``"mulle"``, ``"casino"``); absent: ``"mulle"``, which every file made
                       before the key was. The observation and action entries below are that
                       game's (Casino's: :mod:`mulle_env.games.casino`, 456 floats, 504 move ids)
``head``               (version 3) what the net's layers compute: ``"logits"`` (one logit per
                       action from the observation) or ``"afterstate"`` (one number from the
                       observation of the position a move leaves; see below). Files of
                       versions 1 and 2 are ``"logits"``.
``activation``         hidden-layer activation: one of :data:`ACTIVATIONS`
``obs_size``           observation length the net reads (:data:`mulle_env.observation.OBS_SIZE`)
``obs_version``        the encoding's :data:`~mulle_env.observation.OBS_VERSION` (version 2)
``obs_layout``         JSON text: :func:`~mulle_env.observation.layout_description` (version 2)
``obs_fingerprint``    :func:`~mulle_env.observation.layout_fingerprint` of that layout (version 2)
``num_actions``        the action space the net plays in (:data:`mulle_env.codec.NUM_ACTIONS`);
                       a ``logits`` net writes that many numbers, an ``afterstate`` net one
``num_layers``         number of affine layers ``L`` (hidden layers + the output layer)
``layer{i}.weight``    float array ``(in, out)`` of layer ``i`` (``x @ W + b``)
``layer{i}.bias``      float array ``(out,)``
``metadata``           JSON text: training command, steps, seed, evaluation figures
``extras``             optional (version 3, afterstate nets): the name of the extra-input block
                       appended to each encoding (:mod:`mulle_env.extras`); layer 0 then
                       reads ``obs_size`` + that block's size
``ruleset``            optional (version 3): JSON text, the :class:`mulle_env.Ruleset` flags the
                       net was trained for (``Ruleset.to_dict()``); absent: the default rules,
                       which every file made before rulesets were recorded was trained for
``symmetries``         optional (version 3, afterstate nets): int ``k`` from 2 to 12; the net's value of
                       an afterstate is the mean over the first ``k`` face symmetries
                       (:data:`mulle_env.engine.cards.FACE_SYMMETRIES`) of the position; absent: 1
                       (the position as it is). A reader that predates the key plays the net
                       without them
``value_layers``       optional (version 2): number of affine layers of the value head
``value{i}.weight``    its layers, same convention; the last writes one number: the
``value{i}.bias``      points still to come / 100 from the observer's seat (final score
                       difference minus :func:`agents.rollout.set_value` now)
=====================  =================================================================

Every hidden layer is followed by the activation; the last layer gives the logits.

An ``afterstate`` net scores moves instead of writing logits: for each legal move it
reads the encoding of the position the move leaves, from the mover's seat
(:func:`agents.learned.afterstate.encode_afterstates`), and writes the points still to
come beyond those the move banks, divided by :data:`VALUE_SCALE`. A move's score is
``banked + VALUE_SCALE x net(afterstate)``: one batched forward pass over the legal
moves decides.
:func:`load_policy` checks all of it and raises :class:`PolicyFileError` (a
``ValueError``) saying what is wrong, so a corrupt or incompatible file never plays.

A file is tied to the observation encoding it was trained on, not just to its size:
version 2 stores the layout and its fingerprint, and a file whose layout differs from
this mulle_env's is refused with the differences spelled out. Version-1 files carry no
layout; they were all made for the layout frozen here as :data:`V1_LAYOUT`, so they
load while today's layout is that one and are refused (saying what changed) after.

A file is also tied to its game: :func:`game_layout` is the layout it is checked against,
and an agent refuses a net of another game (:func:`check_game`), naming the file's game.
Casino nets are logits nets over Casino's move ids or afterstate nets of Casino's afterstates
(:func:`agents.learned.casino.encode_casino_afterstates`; no extra inputs).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mulle_env import observation as _obs
from mulle_env.codec import NUM_ACTIONS
from mulle_env.engine.cards import FACE_SYMMETRIES
from mulle_env.extras import EXTRAS, extends, extras_size, symmetry_columns, with_extras
from mulle_env.observation import OBS_SIZE
from mulle_env.util.files import replacing

__all__ = [
    "ACTIVATIONS",
    "DEFAULT_POLICY_GAME",
    "FORMAT",
    "HEADS",
    "FORMAT_VERSION",
    "V1_LAYOUT",
    "VALUE_SCALE",
    "MLPPolicy",
    "POLICY_GAMES",
    "PolicyFileError",
    "PolicyGameError",
    "average_policies",
    "check_game",
    "game_layout",
    "RulesetMismatchError",
    "load_policy",
    "save_policy",
]

#: Tag stored in every policy file.
FORMAT = "mulle-learned-policy"
#: Version of the file layout written; versions 1 to 3 are read, others refused.
FORMAT_VERSION = 3
#: What a net's layers compute (the ``head`` key of version-3 files).
HEADS = ("logits", "afterstate")
#: The games a policy file may be for (its ``game`` key).
POLICY_GAMES = ("mulle", "casino")
#: The game of a file without a ``game`` key: Mulle, the game of every file made before the key existed.
DEFAULT_POLICY_GAME = "mulle"
#: How messages name each game.
_TITLES = {"mulle": "Mulle", "casino": "Casino"}
#: The value head predicts the points still to come (final minus banked score difference) divided by this.
VALUE_SCALE = 100.0
#: The observation layout every version-1 file was made for (version 1 recorded only its size).
V1_LAYOUT: dict[str, Any] = json.loads(
    '{"version": 1, "size": 524, "slices": [["hand", 0, 52], ["loose", 52, 104], ["build_cards", 104, 156], '
    '["my_mulle", 156, 208], ["my_intake", 208, 260], ["opp_mulle", 260, 312], ["opp_intake", 312, 364], '
    '["unseen", 364, 416], ["builds", 416, 491], ["my_score", 491, 496], ["opp_score", 496, 501], '
    '["my_set_score", 501, 506], ["opp_set_score", 506, 511], ["scalars", 511, 524]], "face_blocks": ["hand", '
    '"loose", "build_cards", "my_mulle", "my_intake", "opp_mulle", "opp_intake", "unseen"], "build_features": '
    '["present", "mine", "opponents", "locked", "cards"], "build_values": [2, 16], "scalar_features": '
    '["opponent_hand_size", "deck_size", "set", "deal", "my_turn", "i_lead", "seat", "last_capturer_me", '
    '"last_capturer_opponent", "over", "lock_every_build", "discard_only_if_no_capture", "mulle_hand_values"], '
    '"sheet_keys": ["mulle", "tabbe", "intake", "bonus", "total"], "scales": {"score": 100.0, "build_cards": 10.0, '
    '"deck": 80, "hand": 8, "deals_per_set": 6}}'
)
#: Batches up to this many rows skip the zero inputs of a net with extra inputs (:meth:`MLPPolicy.afterstate_values`).
_SPARSE_ROWS = 64
#: Hidden-layer activations the numpy forward pass implements.
ACTIVATIONS = ("tanh", "relu")


class PolicyFileError(ValueError):
    """A policy file that cannot be used: not an npz, corrupt, or made for another observation/action space."""


class PolicyGameError(ValueError):
    """A net of one game asked to play another (a Casino file as Mulle's ``learned``, or the reverse)."""


def _check_game_name(game: object, where: str) -> str:
    if not isinstance(game, str) or game not in POLICY_GAMES:
        raise PolicyFileError(f"{where}: game {game!r} is not one this code plays nets of; games: "
                              f"{', '.join(POLICY_GAMES)}")
    return game


def _casino_env() -> Any:
    """:mod:`mulle_env.games.casino` (imported when a Casino net is first met)."""
    from mulle_env.games import casino

    return casino


def game_obs_size(game: str) -> int:
    """The length of ``game``'s observation (Mulle's 524, Casino's 456): its env game object's."""
    from mulle_env.games import get_game

    return get_game(game).obs_size


def game_num_actions(game: str) -> int:
    """The action space a logits net of ``game`` writes a logit for each of (Mulle's 2812 ids, Casino's 504)."""
    from mulle_env.games import get_game

    return get_game(game).num_actions


def game_layout(game: str = DEFAULT_POLICY_GAME) -> dict[str, Any]:
    """The observation layout a net of ``game`` reads today (what its files record and are checked against)."""
    layout: dict[str, Any] = _obs.layout_description() if game == "mulle" else _casino_env().layout_description()
    return layout


def _layout_differences(theirs: dict[str, Any], mine: dict[str, Any], limit: int = 6) -> list[str]:
    """What differs between the layout descriptions ``theirs`` (a file's) and ``mine`` (today's), in words."""
    out: list[str] = []
    for key in sorted(set(mine) | set(theirs)):
        a, b = theirs.get(key), mine.get(key)
        if a == b:
            continue
        if key == "slices" and isinstance(a, list) and isinstance(b, list):
            there = {row[0]: tuple(row[1:]) for row in a if isinstance(row, list) and row}
            here = {row[0]: tuple(row[1:]) for row in b}
            for name in [*here, *(n for n in there if n not in here)]:
                if there.get(name) != here.get(name):
                    span = ["absent" if s is None else f"[{s[0]}:{s[1]}]" for s in (there.get(name), here.get(name))]
                    out.append(f"slice {name!r}: {span[0]} in the file, {span[1]} here")
        else:
            out.append(f"{key}: {a!r} in the file, {b!r} here")
    return out[:limit] + ([f"... and {len(out) - limit} more"] if len(out) > limit else [])


def check_game(policy: MLPPolicy, game: str, where: str = "this policy") -> None:
    """Raise :class:`PolicyGameError` unless ``policy`` is a net of ``game``, naming the net's game and the way out."""
    if policy.game == game:
        return
    theirs, ours = _TITLES.get(policy.game, policy.game), _TITLES.get(game, game)
    raise PolicyGameError(
        f"{where} is a {theirs} net (its game is {policy.game!r}), and this agent plays {ours}: play it at "
        f"{theirs} (mulle-arena --game {policy.game} learned:path=FILE), or train a {ours} net "
        f"(mulle-train ppo --game {game} or mulle-train expert --game {game})")


#: A float32 array: weights, biases, encodings and what the net computes from them.
Floats = NDArray[np.float32]
#: The arrays of a policy file (an ``np.load`` archive).
Arrays = Mapping[str, NDArray[Any]]


#: Ruleset flags a net plays under whatever value it was trained with (see :meth:`MLPPolicy.check_ruleset`).
ANY_VALUE_PLAYS = frozenset({"sets"})
#: The same, per game: Casino's ``rounds`` and ``target_score`` decide how long a game lasts, as Mulle's ``sets`` does.
_ANY_VALUE_PLAYS_BY_GAME = {"mulle": ANY_VALUE_PLAYS, "casino": frozenset({"rounds", "target_score"})}


class RulesetMismatchError(ValueError):
    """A net asked to play under rules other than those it was trained for."""


def _ruleset_class(game: str) -> Any:
    """The ruleset class of ``game``: :class:`mulle_env.engine.Ruleset` or :class:`mulle_env.casino.Ruleset`."""
    from mulle_env.games import get_game

    return get_game(game).Ruleset


def _ruleset_dict(ruleset: Any, game: str = DEFAULT_POLICY_GAME) -> dict[str, Any]:
    """The full flags of ``ruleset`` (a ruleset of ``game``, a dict of flags or ``None``)."""
    try:
        flags: dict[str, Any] = _ruleset_class(game).from_dict(ruleset).to_dict()
        return flags
    except ValueError as exc:
        raise PolicyFileError(f"ruleset: {exc}") from None


def _tanh(x: Floats) -> Floats:
    return np.tanh(x, out=x)


def _relu(x: Floats) -> Floats:
    return np.maximum(x, 0, out=x)


_ACT = {"tanh": _tanh, "relu": _relu}


class MLPPolicy:
    """A multilayer perceptron from observations to action logits, evaluated with numpy.

    Optionally a second MLP, the value head, reads the same observation and predicts the
    points still to come from the observer's seat (the final score difference minus the
    points banked now, :func:`agents.rollout.set_value`) divided by :data:`VALUE_SCALE`
    (searches use it to evaluate positions; the ``learned`` agent ignores it).

    Attributes:
        weights: Per layer, the ``(in, out)`` float32 weight matrix.
        biases: Per layer, the ``(out,)`` float32 bias.
        activation: Hidden-layer activation name (one of :data:`ACTIVATIONS`).
        metadata: Free-form dict saved with the policy (how it was trained and measured).
        value_weights: The value head's weight matrices (empty: no value head).
        value_biases: The value head's biases.
        obs_layout: The observation layout the net reads (:func:`game_layout` of its game).
        game: The game the net plays (:data:`POLICY_GAMES`; ``"mulle"`` unless the file says otherwise):
            its observation, action space and rules are that game's.
        head: ``"logits"`` (one logit per action) or ``"afterstate"`` (one score per
            afterstate, :meth:`afterstate_values`); see the module docstring.
        extras: ``None``, or the name of the extra-input block (:mod:`mulle_env.extras`)
            an afterstate net reads after the encoding.
        symmetries: An afterstate net's value of a position is the mean of its outputs on
            the first ``symmetries`` face symmetries of it
            (:func:`mulle_env.observation.face_symmetry_columns`); 1: the position alone.
        ruleset: The rules the net was trained for, every flag (``Ruleset.to_dict()``);
            the default rules unless the file says otherwise.
    """

    def __init__(
        self,
        weights: Sequence[ArrayLike],
        biases: Sequence[ArrayLike],
        activation: str = "tanh",
        metadata: dict[str, Any] | None = None,
        value_weights: Sequence[ArrayLike] = (),
        value_biases: Sequence[ArrayLike] = (),
        head: str = "logits",
        extras: str | None = None,
        ruleset: Any = None,
        symmetries: int = 1,
        game: str = DEFAULT_POLICY_GAME,
    ) -> None:
        if head not in HEADS:
            raise PolicyFileError(f"policy head {head!r} is not supported; supported: {', '.join(HEADS)}")
        self.game = _check_game_name(game, "policy")
        _check_game_head(game, head, "policy")
        _check_extras(extras, head, "policy")
        _check_symmetries(symmetries, head, "policy")
        self.symmetries = int(symmetries)
        self.head = head
        self.extras = extras
        self.weights = [np.ascontiguousarray(w, dtype=np.float32) for w in weights]
        self.biases = [np.ascontiguousarray(b, dtype=np.float32) for b in biases]
        self.activation = activation
        self.metadata = dict(metadata or {})
        _check_layers(self.weights, self.biases, activation, "policy",
                      outputs=1 if head == "afterstate" else None, extras=extras, game=game)
        self.value_weights = [np.ascontiguousarray(w, dtype=np.float32) for w in value_weights]
        self.value_biases = [np.ascontiguousarray(b, dtype=np.float32) for b in value_biases]
        if self.value_weights or self.value_biases:
            _check_layers(self.value_weights, self.value_biases, activation, "policy value head", outputs=1,
                          game=game)
        self.obs_layout = game_layout(game)
        self._act = _ACT[activation]
        self.ruleset = _ruleset_dict(ruleset, game)
        # Hidden layers made of nets side by side (average_policies) run block by block: the dense
        # product would spend half its time (two thirds for three nets) on the zeros between them.
        # Afterstate nets only: a logits net's layers stay dense, and its fingerprint (below) as it was.
        self._blocks = [_diagonal_blocks(w) for w in self.weights[1:-1]] if head == "afterstate" else []
        self._sym_cols: NDArray[np.intp] | None = None
        if self.symmetries > 1:
            # A symmetric position's inputs are a column permutation of the position's own (the extras computed
            # once): one gather makes all of them, and layer 0 multiplies their few nonzero columns.
            self._sym_cols = symmetry_columns(extras, self.symmetries).ravel()

    def check_ruleset(self, ruleset: Any) -> None:
        """Raise :class:`RulesetMismatchError` unless ``ruleset`` plays as the one this net was trained for.

        Every flag must match but ``sets``: the number of sets changes how long a game
        lasts, not a decision's moves or scoring, and the observation scales the set number
        by it (a one-set game reads as the last set of a longer one), so a net plays any.
        A Casino net likewise plays any ``rounds`` and ``target_score``: they decide when the
        game ends, not a round's moves or its points (a net trained on one-round games plays
        games to 21).
        """
        theirs = _ruleset_dict(ruleset, self.game)
        free = _ANY_VALUE_PLAYS_BY_GAME.get(self.game, frozenset())
        diff = ", ".join(f"{k}={theirs[k]} (trained for {self.ruleset[k]})"
                         for k in self.ruleset if k not in free and theirs[k] != self.ruleset[k])
        if diff:
            how = "mulle-train expert --rule ..." if self.game == "mulle" else \
                f"mulle-train ppo --game {self.game} --rule ..., or expert --game {self.game} --rule ..."
            raise RulesetMismatchError(
                f"this net was trained for other rules than these: {diff}; train one for these rules "
                f"({how}) or play under the rules it was trained for")

    @property
    def obs_size(self) -> int:
        """Length of the observation the net reads (without its extra inputs, which it computes itself)."""
        inputs: int = self.weights[0].shape[0]
        return inputs - extras_size(self.extras)

    @property
    def num_actions(self) -> int:
        """Size of the action space the net plays in (the number of logits of a ``logits`` net)."""
        if self.head == "afterstate":
            return NUM_ACTIONS if self.game == "mulle" else game_num_actions(self.game)
        return int(self.weights[-1].shape[1])

    @property
    def hidden_sizes(self) -> tuple[int, ...]:
        """Widths of the hidden layers."""
        return tuple(w.shape[1] for w in self.weights[:-1])

    @property
    def has_value(self) -> bool:
        """True if the file carries a value head."""
        return bool(self.value_weights)

    def _forward(self, h: Floats, weights: Sequence[Floats], biases: Sequence[Floats]) -> Floats:
        last = len(weights) - 1
        for i, (w, b) in enumerate(zip(weights, biases)):
            h = h @ w
            h += b
            if i < last:
                h = self._act(h)
        return h

    def _deep(self, h: Floats) -> Floats:
        """Layers 1 to the output on layer 0's activations ``h`` (an afterstate net), block by block where
        a hidden layer is block-diagonal."""
        last = len(self.weights) - 1
        for i in range(1, last + 1):
            w, b = self.weights[i], self.biases[i]
            blocks = self._blocks[i - 1] if i < last else None
            if blocks is None:
                h = h @ w
            else:
                out = np.empty((len(h), w.shape[1]), dtype=np.float32)
                for r0, r1, c0, c1, wb in blocks:
                    np.matmul(h[:, r0:r1], wb, out=out[:, c0:c1])
                h = out
            h += b
            if i < last:
                h = self._act(h)
        return h

    def _need_logits(self) -> None:
        if self.head != "logits":
            raise ValueError("this policy is an afterstate net: it scores the positions moves leave "
                             "(afterstate_values), it has no action logits")

    def afterstate_values(self, obs: Floats) -> Floats:
        """An ``afterstate`` net's output for a batch of afterstate encodings ``(n, obs_size)``: ``(n,)``.

        The points still to come beyond what the move banked, divided by :data:`VALUE_SCALE`.
        """
        if self.head != "afterstate":
            raise ValueError("this policy writes action logits, not afterstate values")
        if self._sym_cols is None:
            return self._afterstate_values(obs)
        x = np.asarray(obs, dtype=np.float32)
        rows = with_extras(x.reshape(-1, x.shape[-1]), self.extras)
        k, n = self.symmetries, len(rows)
        sym = rows[:, self._sym_cols].reshape(n * k, rows.shape[1])  # row i k + j: position i's symmetry j
        out = self._after_layer0(self._layer0(sym, self.weights[0], self.biases[0], sparse=n <= _SPARSE_ROWS))
        mean: Floats = out.reshape(n, k).mean(axis=1, dtype=np.float32).reshape(x.shape[:-1])
        return mean

    def _afterstate_values(self, obs: Floats) -> Floats:
        x = with_extras(obs, self.extras)
        if x.ndim != 2:
            return self._forward(x, self.weights, self.biases)[..., 0]
        # A decision's few encodings use about 200 of the ~700 inputs (card blocks are mostly
        # zeros): multiplying only those columns makes the widest layer about 2.5x cheaper,
        # which keeps a net with extra inputs within the time of one without. Only nets with
        # extras take this path, so older nets' outputs (and the games and data made with
        # them) stay bit for bit what they were.
        sparse = self.extras is not None and len(x) <= _SPARSE_ROWS
        return self._after_layer0(self._layer0(x, self.weights[0], self.biases[0], sparse=sparse))[:, 0]

    def _after_layer0(self, h: Floats) -> Floats:
        """The net's output from layer 0's pre-activations ``h``: ``h`` itself for a one-layer net."""
        return h if len(self.weights) == 1 else self._deep(self._act(h))

    @staticmethod
    def _layer0(x: Floats, w0: Floats, b0: Floats, sparse: bool | None = None) -> Floats:
        """``x @ w0 + b0``; a sparse product (``sparse``, default: at most ``_SPARSE_ROWS`` rows) multiplies
        only the nonzero columns."""
        if (len(x) <= _SPARSE_ROWS) if sparse is None else sparse:
            cols = np.flatnonzero(x.any(axis=0))
            h = x[:, cols] @ w0[cols]
        else:
            h = x @ w0
        h += b0
        return h

    def points_to_come(self, obs: Floats) -> NDArray[np.float64]:
        """:meth:`afterstate_values` in points (float64): what a move's score adds to the points it banked.

        The one place net outputs become points, so ``learned``, ``netsearch`` and the
        DMC learner score moves alike.
        """
        return VALUE_SCALE * self.afterstate_values(obs).astype(np.float64)

    def logits(self, obs: ArrayLike) -> Floats:
        """Action logits for one observation ``(obs_size,)`` or a batch ``(n, obs_size)``."""
        self._need_logits()
        return self._forward(np.asarray(obs, dtype=np.float32), self.weights, self.biases)

    def hidden(self, obs: Floats) -> Floats:
        """The last hidden layer's activations for one observation or a batch (what the output layer reads)."""
        h = with_extras(obs, self.extras)
        for w, b in zip(self.weights[:-1], self.biases[:-1]):
            h = h @ w
            h += b
            h = self._act(h)
        return h

    def legal_logits(self, obs: Floats, legal_ids: Sequence[int]) -> Floats:
        """Logits of the actions ``legal_ids`` only (one observation).

        Only the output columns of the legal actions are computed: about 8 of 2812, so
        the output layer, the largest, costs almost nothing.
        """
        self._need_logits()
        h = self.hidden(obs)
        ids = np.asarray(legal_ids, dtype=np.intp)
        return h @ self.weights[-1][:, ids] + self.biases[-1][ids]

    def batch_legal_logits(self, obs: Floats, rows: ArrayLike, ids: ArrayLike) -> Floats:
        """Logits of action ``ids[k]`` in observation ``obs[rows[k]]``, for a batch of observations.

        The hidden layers run once on the whole batch ``(n, obs_size)``; only the output
        columns that some row needs are computed.
        """
        self._need_logits()
        h = self.hidden(obs)
        cols = np.asarray(ids, dtype=np.intp)
        picked = h[np.asarray(rows, dtype=np.intp)]
        logits: Floats = np.einsum("kj,jk->k", picked, self.weights[-1][:, cols]) + self.biases[-1][cols]
        return logits

    def value(self, obs: ArrayLike) -> Floats:
        """The value head's prediction (points still to come / :data:`VALUE_SCALE`) for one observation or a batch."""
        if not self.value_weights:
            raise ValueError("this policy has no value head (train one with mulle-expert fit)")
        out = self._forward(np.asarray(obs, dtype=np.float32), self.value_weights, self.value_biases)
        values: Floats = out[..., 0]
        return values

    def best_action(self, obs: Floats, legal_ids: Sequence[int]) -> int:
        """The legal action with the highest logit (the first one on an exact tie)."""
        if len(legal_ids) == 0:
            raise ValueError("best_action needs at least one legal action id")
        z = self.legal_logits(obs, legal_ids)
        return int(legal_ids[int(np.argmax(z))])

    def num_parameters(self) -> int:
        """Number of weights and biases (value head included)."""
        layers = zip(self.weights + self.value_weights, self.biases + self.value_biases)
        return sum(w.size + b.size for w, b in layers)

    def save(self, path: str | Path) -> Path:
        """Write this policy to ``path`` (see :func:`save_policy`)."""
        return save_policy(self, path)

    def fingerprint(self) -> str:
        """12 hex digits of a SHA-256 over what decides play and what the file says it is.

        Covers the activation, every layer's shape, dtype and bytes (value head included)
        and the metadata (and, for averaged or symmetric nets, the symmetries and the block-by-block
        forward pass, which may break a near tie otherwise than the dense product), so a retrained or
        re-measured file gets another fingerprint, and
        the same policy, saved again or loaded in another process, the same one. Agents
        that play a policy use it as their version (:attr:`agents.base.Agent.version`).
        """
        h = hashlib.sha256()
        # Logits nets hash as before version 3 (their fingerprints, agent versions, must not change).
        h.update(self.activation.encode() if self.head == "logits" else f"{self.head}|{self.activation}".encode())
        if self.extras is not None:
            h.update(f"|extras={self.extras}".encode())
        if self.symmetries > 1:  # another function of the same layers: another agent version
            h.update(f"|symmetries={self.symmetries}".encode())
        if self.symmetries > 1 or any(b is not None for b in self._blocks):
            # Computed block by block, the symmetric inputs through one sparse layer (since 0.2.0's generation 8
            # was measured): the same values to float rounding, but a near tie may fall the other way (about one
            # decision in 6,000), so the agent playing such a net is another version. Plain nets hash as before.
            h.update(b"|forward=blocks")
        if self.game != DEFAULT_POLICY_GAME:  # another game's net is another agent; Mulle nets hash as before
            h.update(f"|game={self.game}".encode())
        changes = _changes(self.ruleset, self.game)
        if changes:  # nets for the default rules keep the fingerprints they had before rulesets were recorded
            h.update(f"|ruleset={json.dumps(changes, sort_keys=True)}".encode())
        for tag, arrays in (("w", self.weights), ("b", self.biases), ("vw", self.value_weights),
                            ("vb", self.value_biases)):
            for a in arrays:
                h.update(f"|{tag}{a.shape}{a.dtype.str}|".encode())
                h.update(np.ascontiguousarray(a).tobytes())
        h.update(json.dumps(self.metadata, sort_keys=True, separators=(",", ":")).encode())
        return h.hexdigest()[:12]


def _changes(ruleset: dict[str, Any], game: str = DEFAULT_POLICY_GAME) -> dict[str, Any]:
    changed: dict[str, Any] = _ruleset_class(game).from_dict(ruleset).changes()
    return changed


def _check_game_head(game: str, head: str, where: str) -> None:
    """Casino nets are logits or afterstate nets (:mod:`agents.learned.casino` encodes its afterstates); this
    guards a game whose heads are fewer."""
    if game != "mulle" and head not in ("logits", "afterstate"):
        raise PolicyFileError(f"{where}: a {_TITLES.get(game, game)} net is a logits or an afterstate net, "
                              f"not a {head} net")


def _check_extras(extras: str | None, head: str, where: str) -> None:
    if extras is None:
        return
    if extras not in EXTRAS:
        raise PolicyFileError(f"{where}: extra inputs {extras!r} are not supported; this code computes "
                              f"{', '.join(EXTRAS)} (mulle_env/extras.py)")
    if head != "afterstate":
        raise PolicyFileError(f"{where}: extra inputs are for afterstate nets, not {head} nets")


def _diagonal_blocks(w: Floats) -> list[tuple[int, int, int, int, Floats]] | None:
    """``w``'s diagonal blocks ``(row0, row1, col0, col1, block)`` if it is block-diagonal with two or more
    (every entry outside them zero), else ``None``."""
    if not w.any(axis=1).all() or not w.any(axis=0).all():
        return None  # a unit reading or feeding nothing: leave such a layer to the dense product
    first = np.argmax(w != 0, axis=1)  # each row's first and last nonzero column
    last = w.shape[1] - 1 - np.argmax(w[:, ::-1] != 0, axis=1)
    reach = np.maximum.accumulate(last)  # the last column rows 0..r reach
    start = np.minimum.accumulate(first[::-1])[::-1]  # the first column rows r.. reach
    cuts = [r for r in range(1, len(w)) if reach[r - 1] < start[r]]
    if not cuts:
        return None
    edges = [0, *cuts, len(w)]
    spans = [(r0, r1, int(start[r0]), int(reach[r1 - 1]) + 1) for r0, r1 in zip(edges, edges[1:])]
    return [(r0, r1, c0, c1, np.ascontiguousarray(w[r0:r1, c0:c1])) for r0, r1, c0, c1 in spans]


def _check_symmetries(symmetries: int, head: str, where: str) -> None:
    top = len(FACE_SYMMETRIES)
    if type(symmetries) is not int or not 1 <= symmetries <= top:
        raise PolicyFileError(f"{where}: symmetries must be an int from 1 to {top} (the game's face symmetries), "
                              f"not {symmetries!r}")
    if symmetries > 1 and head != "afterstate":
        raise PolicyFileError(f"{where}: only an afterstate net averages over symmetries (a logits net's action "
                              f"ids name faces); this one is {head!r}")


def _check_layers(weights: Sequence[NDArray[Any]], biases: Sequence[NDArray[Any]], activation: str, where: str,
                  outputs: int | None = None,
                  extras: str | None = None, game: str = DEFAULT_POLICY_GAME) -> None:
    if activation not in ACTIVATIONS:
        raise PolicyFileError(
            f"{where}: activation {activation!r} is not supported; supported: {', '.join(ACTIVATIONS)}"
        )
    if not weights or len(weights) != len(biases):
        raise PolicyFileError(
            f"{where}: needs one or more layers with one bias each, got {len(weights)} weights and {len(biases)} biases"
        )
    for i, (w, b) in enumerate(zip(weights, biases)):
        if w.ndim != 2 or b.ndim != 1 or b.shape[0] != w.shape[1]:
            raise PolicyFileError(
                f"{where}: layer {i} has weight shape {w.shape} and bias shape {b.shape}; "
                "expected a 2-D (in, out) weight and an (out,) bias"
            )
        if i and w.shape[0] != weights[i - 1].shape[1]:
            raise PolicyFileError(
                f"{where}: layer {i} reads {w.shape[0]} inputs but layer {i - 1} writes {weights[i - 1].shape[1]}"
            )
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise PolicyFileError(f"{where}: layer {i} holds NaN or infinite values")
    if game != "mulle":
        size, actions = game_obs_size(game), game_num_actions(game)
        title = _TITLES.get(game, game)
        if weights[0].shape[0] != size:
            raise PolicyFileError(f"{where}: the net reads observations of {weights[0].shape[0]} floats, but "
                                  f"{title}'s encoder writes {size} (the policy was trained for another encoder)")
        want = actions if outputs is None else outputs
        if weights[-1].shape[1] != want:
            if outputs is not None:  # an afterstate net: one score per position
                raise PolicyFileError(f"{where}: the net writes {weights[-1].shape[1]} numbers, but an afterstate "
                                      f"net writes {outputs} (its head is not the one its layers were made for)")
            raise PolicyFileError(f"{where}: the net writes {weights[-1].shape[1]} numbers, but {title}'s action "
                                  f"space has {want} (the policy was trained for another action codec)")
        return
    inputs = OBS_SIZE + extras_size(extras)
    if weights[0].shape[0] != inputs:
        plus = f" plus {inputs - OBS_SIZE} extra inputs ({extras})" if extras else ""
        raise PolicyFileError(
            f"{where}: the net reads observations of {weights[0].shape[0]} floats, but this mulle_env encodes "
            f"{OBS_SIZE}{plus} (the policy was trained for another observation encoder)"
        )
    want = NUM_ACTIONS if outputs is None else outputs
    if weights[-1].shape[1] != want:
        if outputs is not None:
            raise PolicyFileError(f"{where}: the last layer writes {weights[-1].shape[1]} numbers, not {want}")
        raise PolicyFileError(
            f"{where}: the net writes {weights[-1].shape[1]} action logits, but the action space has "
            f"{NUM_ACTIONS} actions (the policy was trained for another action codec)"
        )


def save_policy(policy: MLPPolicy, path: str | Path) -> Path:
    """Write ``policy`` as a compressed ``.npz`` file (format version 3, the layout of the module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    layout = game_layout(policy.game)
    arrays: dict[str, NDArray[Any]] = {
        "format": np.array(FORMAT),
        "format_version": np.array(FORMAT_VERSION),
        "game": np.array(policy.game),
        "head": np.array(policy.head),
        "activation": np.array(policy.activation),
        "obs_size": np.array(policy.obs_size),
        "obs_version": np.array(layout["version"]),
        "obs_layout": np.array(json.dumps(layout, sort_keys=True)),
        "obs_fingerprint": np.array(_obs.layout_fingerprint(layout)),
        "num_actions": np.array(policy.num_actions),
        "num_layers": np.array(len(policy.weights)),
        "metadata": np.array(json.dumps(policy.metadata, sort_keys=True)),
    }
    if policy.extras is not None:
        arrays["extras"] = np.array(policy.extras)
    if policy.symmetries > 1:
        arrays["symmetries"] = np.array(policy.symmetries)
    if _changes(policy.ruleset, policy.game):
        # Files for the default rules are written as before (a reader that predates the key reads them).
        arrays["ruleset"] = np.array(json.dumps(policy.ruleset, sort_keys=True))
    for i, (w, b) in enumerate(zip(policy.weights, policy.biases)):
        arrays[f"layer{i}.weight"] = w
        arrays[f"layer{i}.bias"] = b
    if policy.value_weights:
        arrays["value_layers"] = np.array(len(policy.value_weights))
        for i, (w, b) in enumerate(zip(policy.value_weights, policy.value_biases)):
            arrays[f"value{i}.weight"] = w
            arrays[f"value{i}.bias"] = b
    # Whole or absent: a reader (a pool drawing snapshots, a resume) never sees half a file.
    with replacing(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub reads **arrays as allow_pickle
    return path


def average_policies(policies: Sequence[MLPPolicy], symmetries: int = 1,
                     metadata: dict[str, Any] | None = None) -> MLPPolicy:
    """One afterstate net whose output is the mean of ``policies``' outputs: an ensemble as a single MLP.

    The nets' hidden layers sit side by side (layer 0 reads the widest extra-input block,
    each net's weights for a block it does not read are zeros; deeper layers are
    block-diagonal) and the output layer averages, so one batched forward pass scores a
    decision, and the file is an ordinary policy file. The nets must be afterstate nets of
    the same depth, activation and ruleset, without value heads, and their extra-input
    blocks must be prefixes of one another (:func:`mulle_env.extras.extends`).
    ``symmetries`` is the result's (:class:`MLPPolicy`).
    """
    nets = list(policies)
    if not nets:
        raise ValueError("average_policies needs at least one policy")
    first = nets[0]
    for i, net in enumerate(nets):
        why = ("is not an afterstate net" if net.head != "afterstate" else
               "has a value head" if net.value_weights else
               "differs in depth" if len(net.weights) != len(first.weights) else
               "differs in activation" if net.activation != first.activation else
               "was trained for other rules" if net.ruleset != first.ruleset else "")
        if why:
            raise ValueError(f"policy {i} {why}: only afterstate nets alike in all of these average into one")
    extras = max((net.extras for net in nets), key=extras_size)
    if not all(extends(extras, net.extras) for net in nets):
        raise ValueError("the policies' extra-input blocks are not prefixes of one block: "
                         + ", ".join(str(net.extras) for net in nets))
    width_in = OBS_SIZE + extras_size(extras)
    weights: list[NDArray[np.float32]] = []
    biases: list[NDArray[np.float32]] = []
    for layer in range(len(first.weights)):
        last = layer == len(first.weights) - 1
        rows = width_in if layer == 0 else sum(net.weights[layer - 1].shape[1] for net in nets)
        cols = 1 if last else sum(net.weights[layer].shape[1] for net in nets)
        w = np.zeros((rows, cols), dtype=np.float32)
        r = c = 0
        for net in nets:
            nw = net.weights[layer]
            at = 0 if layer == 0 else r  # layer 0: every net reads the same inputs; after it, its own units
            if last:
                w[at:at + nw.shape[0]] += nw / len(nets)
            else:
                w[at:at + nw.shape[0], c:c + nw.shape[1]] = nw
                c += nw.shape[1]
            r += nw.shape[0]
        b = (np.mean([net.biases[layer] for net in nets], axis=0) if last else
             np.concatenate([net.biases[layer] for net in nets]))
        weights.append(w)
        biases.append(b.astype(np.float32))
    return MLPPolicy(weights, biases, first.activation, metadata, head="afterstate", extras=extras,
                     ruleset=first.ruleset, symmetries=symmetries)


@overload
def _scalar(data: Arrays, key: str, kind: type[int], where: str) -> int: ...
@overload
def _scalar(data: Arrays, key: str, kind: type[str], where: str) -> str: ...
def _scalar(data: Arrays, key: str, kind: type[int] | type[str], where: str) -> int | str:
    if key not in data:
        raise PolicyFileError(f"{where}: missing {key!r}; a policy file holds {_REQUIRED}")
    a = data[key]
    if a.shape != ():
        raise PolicyFileError(f"{where}: {key!r} must be a scalar, not an array of shape {a.shape}")
    try:
        return kind(a.item())
    except (TypeError, ValueError):
        raise PolicyFileError(f"{where}: {key!r} must be a {kind.__name__}, not {a.item()!r}") from None


_REQUIRED = ("format, format_version, head (version 3), activation, obs_size, obs_version, obs_layout, "
             "obs_fingerprint (versions 2 and 3), num_actions, num_layers, layer{i}.weight/bias, metadata")


#: The largest policy file read (the shipped ones hold about 4 MB; this bounds what a wrong path can cost).
MAX_POLICY_BYTES = 256 * 1024 * 1024

#: What a policy file is, for messages about a file that is not one.
WHAT_A_POLICY_FILE_IS = (
    "A policy file is a .npz archive (a zip of numpy arrays, read without pickle) as mulle-train and "
    "agents.learned.save_policy write it: the tag format='mulle-learned-policy', its format version, the "
    "observation layout it was trained on, the network's layer{i}.weight/bias arrays and metadata"
)
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip


def load_policy(path: str | Path) -> MLPPolicy:
    """Read and check a policy file; raise :class:`PolicyFileError` saying what is wrong.

    The path must be a regular file of at most :data:`MAX_POLICY_BYTES`
    (:func:`mulle_env.files.read_bytes`: no directory, device or FIFO); a file that is no
    ``.npz`` archive, or one whose arrays need pickle, is "not a policy file", with what
    a policy file is. Nothing is ever loaded with pickle.
    """
    from mulle_env.files import PathError, read_bytes

    path = Path(path)
    where = f"policy file {str(path)!r}"
    try:
        data = read_bytes(path, "policy file", limit=MAX_POLICY_BYTES)
    except PathError as exc:
        raise PolicyFileError(f"{exc} (pass learned:path=<file.npz> or train one with mulle-train)") from None

    def not_a_policy(why: str) -> PolicyFileError:
        return PolicyFileError(f"{where} is not a policy file (not a readable .npz policy file: {why}). "
                               f"{WHAT_A_POLICY_FILE_IS}")

    if not data.startswith(_ZIP_MAGIC):
        raise not_a_policy("it does not begin like a zip archive")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
            if unpacked > MAX_POLICY_BYTES:
                raise not_a_policy(f"its arrays would unpack to {unpacked:,} bytes, more than the "
                                   f"{MAX_POLICY_BYTES:,} a policy may hold")
            for info in archive.infolist():
                if (why := _declared_too_large(archive, info)) is not None:
                    raise not_a_policy(why)
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            return _from_arrays(arrays, where)
    except PolicyFileError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc):  # numpy's text would suggest an unsafe load: never pass it on
            raise not_a_policy("it holds Python objects (pickled data), which a policy file never does") from None
        raise not_a_policy(f"{type(exc).__name__}: {exc}") from None
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, zipfile.LargeZipFile) as exc:
        raise not_a_policy(f"{type(exc).__name__}: {exc}") from None


def _declared_too_large(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str | None:
    """Why member ``info``'s ``.npy`` header declares more data than the member holds (``None``: it does not).

    numpy allocates an array by its header's shape before it reads the data, so a crafted
    header (a shape of 10**12) would end a load in a ``MemoryError``; the header is read first.
    """
    if not info.filename.endswith(".npy"):
        return None
    with archive.open(info) as member:
        try:
            major, _ = np.lib.format.read_magic(member)
            read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape, _, dtype = read_header(member)
        except (ValueError, OSError, EOFError) as exc:
            return f"{info.filename}: not a .npy array ({exc})"
        header_end = member.tell()
    if dtype.hasobject:
        return None  # refused below, without pickle, by np.load(allow_pickle=False)
    declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if declared > info.file_size - header_end:
        return (f"{info.filename}'s header declares a {shape} {dtype} array ({declared:,} bytes) but the file holds "
                f"{max(info.file_size - header_end, 0):,} bytes of it")
    return None


def _json_object(data: Arrays, key: str, where: str) -> dict[str, Any]:
    """The JSON object stored as text under ``key``; a :class:`PolicyFileError` naming ``key`` otherwise."""
    from mulle_env.files import JSONInputError, parse_json

    try:
        obj = parse_json(_scalar(data, key, str, where), f"{where}: {key}")
    except JSONInputError as exc:
        raise PolicyFileError(str(exc)) from None
    if not isinstance(obj, dict):
        raise PolicyFileError(f"{where}: {key} must be a JSON object, not {type(obj).__name__}")
    return obj


def _check_layout(data: Arrays, version: int, where: str, game: str = DEFAULT_POLICY_GAME) -> None:
    """Refuse a file made for another observation layout of its game, naming what differs."""
    if version == 1:
        layout, source = V1_LAYOUT, "version-1 files were made for observation layout"
    else:
        obs_version = _scalar(data, "obs_version", int, where)
        layout = _json_object(data, "obs_layout", where)
        stored = _scalar(data, "obs_fingerprint", str, where)
        if stored != _obs.layout_fingerprint(layout):
            raise PolicyFileError(
                f"{where}: obs_fingerprint {stored!r} does not match the stored obs_layout "
                f"({_obs.layout_fingerprint(layout)!r}); the file was altered or corrupted"
            )
        if obs_version != layout.get("version"):
            raise PolicyFileError(f"{where}: obs_version {obs_version} disagrees with its obs_layout's version "
                                  f"{layout.get('version')!r}")
        source = "made for observation layout"
    if game != "mulle":
        mine = game_layout(game)
        here, theirs = _obs.layout_fingerprint(mine), _obs.layout_fingerprint(layout)
        if theirs != here:
            diffs = "; ".join(_layout_differences(layout, mine)) or "the descriptions differ"
            raise PolicyFileError(
                f"{where}: {source} {theirs} (encoding version {layout.get('version')!r}), but {_TITLES[game]}'s "
                f"encoder writes layout {here} (version {mine.get('version')!r}): {diffs}. Retrain the policy for "
                "this encoding.")
        return
    here = _obs.layout_fingerprint()
    theirs = _obs.layout_fingerprint(layout)
    if theirs != here:
        diffs = "; ".join(_obs.layout_differences(layout)) or "the descriptions differ"
        raise PolicyFileError(
            f"{where}: {source} {theirs} (encoding version {layout.get('version')!r}), but this mulle_env encodes "
            f"layout {here} (version {_obs.OBS_VERSION}): {diffs}. Retrain the policy for this encoding."
        )


def _layers(data: Arrays, prefix: str, n: int, where: str) -> tuple[list[NDArray[Any]], list[NDArray[Any]]]:
    weights: list[NDArray[Any]] = []
    biases: list[NDArray[Any]] = []
    for i in range(n):
        for key, out in ((f"{prefix}{i}.weight", weights), (f"{prefix}{i}.bias", biases)):
            if key not in data:
                count = "num_layers" if prefix == "layer" else "value_layers"
                raise PolicyFileError(f"{where}: missing array {key!r} ({count} is {n})")
            a = data[key]
            if not np.issubdtype(a.dtype, np.floating):
                raise PolicyFileError(f"{where}: {key!r} must hold floats, not {a.dtype}")
            out.append(a)
    return weights, biases


def _from_arrays(data: Arrays, where: str) -> MLPPolicy:
    fmt = _scalar(data, "format", str, where)
    if fmt != FORMAT:
        raise PolicyFileError(f"{where}: format tag is {fmt!r}, not {FORMAT!r}")
    version = _scalar(data, "format_version", int, where)
    if version not in (1, 2, 3):
        raise PolicyFileError(
            f"{where}: format version {version} is not supported (this code reads versions 1 to 3)"
        )
    head = _scalar(data, "head", str, where) if version >= 3 else "logits"
    if head not in HEADS:
        raise PolicyFileError(f"{where}: head {head!r} is not supported; supported: {', '.join(HEADS)}")
    activation = _scalar(data, "activation", str, where)
    obs_size = _scalar(data, "obs_size", int, where)
    num_actions = _scalar(data, "num_actions", int, where)
    game = _check_game_name(_scalar(data, "game", str, where), where) if "game" in data else DEFAULT_POLICY_GAME
    if game != "mulle":
        if version < 3:
            raise PolicyFileError(f"{where}: a {game!r} net in a version-{version} file; nets of games other than "
                                  "Mulle exist from version 3 on (the file was altered)")
        _check_game_head(game, head, where)
        title, size, actions = _TITLES[game], game_obs_size(game), game_num_actions(game)
        if obs_size != size:
            raise PolicyFileError(f"{where}: a {title} net made for observations of {obs_size} floats, but "
                                  f"{title}'s encoder writes {size}")
        _check_layout(data, version, where, game)
        if num_actions != actions:
            raise PolicyFileError(f"{where}: a {title} net made for {num_actions} actions, but {title}'s action "
                                  f"space has {actions}")
    elif obs_size != OBS_SIZE:
        raise PolicyFileError(
            f"{where}: made for observations of {obs_size} floats, but this mulle_env encodes {OBS_SIZE}"
        )
    if game == "mulle":
        _check_layout(data, version, where)
        if num_actions != NUM_ACTIONS:
            raise PolicyFileError(f"{where}: made for {num_actions} actions, but the action space has {NUM_ACTIONS}")
    n = _scalar(data, "num_layers", int, where)
    if not 1 <= n <= 64:
        raise PolicyFileError(f"{where}: num_layers must be between 1 and 64, not {n}")
    weights, biases = _layers(data, "layer", n, where)
    value_w: list[NDArray[Any]] = []
    value_b: list[NDArray[Any]] = []
    if version >= 2 and "value_layers" in data:
        nv = _scalar(data, "value_layers", int, where)
        if not 1 <= nv <= 64:
            raise PolicyFileError(f"{where}: value_layers must be between 1 and 64, not {nv}")
        value_w, value_b = _layers(data, "value", nv, where)
    meta = _json_object(data, "metadata", where)
    extras = _scalar(data, "extras", str, where) if "extras" in data else None
    _check_extras(extras, head, where)
    symmetries = _scalar(data, "symmetries", int, where) if "symmetries" in data else 1
    _check_symmetries(symmetries, head, where)
    ruleset = _json_object(data, "ruleset", where) if "ruleset" in data else None
    if ruleset is not None:
        try:
            ruleset = _ruleset_dict(ruleset, game)
        except PolicyFileError as exc:
            raise PolicyFileError(f"{where}: {exc}") from None
    _check_layers(weights, biases, activation, where, outputs=1 if head == "afterstate" else None, extras=extras,
                  game=game)
    if value_w:
        _check_layers(value_w, value_b, activation, f"{where} value head", outputs=1, game=game)
    return MLPPolicy(weights, biases, activation, meta, value_w, value_b, head=head, extras=extras, ruleset=ruleset,
                     symmetries=symmetries, game=game)
