"""The learned policy as plain numpy: an MLP from observation to action logits, and its file.

A policy file is a ``.npz`` archive (read with ``allow_pickle=False``) holding:

=====================  =================================================================
key                    content
=====================  =================================================================
``format``             the string ``"mulle-learned-policy"``
``format_version``     int, :data:`FORMAT_VERSION`
``activation``         hidden-layer activation: one of :data:`ACTIVATIONS`
``obs_size``           observation length the net reads (:data:`mulle_env.observation.OBS_SIZE`)
``num_actions``        logits the net writes (:data:`mulle_env.codec.NUM_ACTIONS`)
``num_layers``         number of affine layers ``L`` (hidden layers + the output layer)
``layer{i}.weight``    float array ``(in, out)`` of layer ``i`` (``x @ W + b``)
``layer{i}.bias``      float array ``(out,)``
``metadata``           JSON text: training command, steps, seed, evaluation figures
=====================  =================================================================

Every hidden layer is followed by the activation; the last layer gives the logits.
:func:`load_policy` checks all of it and raises :class:`PolicyFileError` (a
``ValueError``) saying what is wrong, so a corrupt or incompatible file never plays.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mulle_env.codec import NUM_ACTIONS
from mulle_env.observation import OBS_SIZE

__all__ = [
    "ACTIVATIONS",
    "FORMAT",
    "FORMAT_VERSION",
    "MLPPolicy",
    "PolicyFileError",
    "load_policy",
    "save_policy",
]

#: Tag stored in every policy file.
FORMAT = "mulle-learned-policy"
#: Version of the file layout; a file of another version is refused.
FORMAT_VERSION = 1
#: Hidden-layer activations the numpy forward pass implements.
ACTIVATIONS = ("tanh", "relu")


class PolicyFileError(ValueError):
    """A policy file that cannot be used: not an npz, corrupt, or made for another observation/action space."""


def _tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x, out=x)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0, out=x)


_ACT = {"tanh": _tanh, "relu": _relu}


class MLPPolicy:
    """A multilayer perceptron from observations to action logits, evaluated with numpy.

    Attributes:
        weights: Per layer, the ``(in, out)`` float32 weight matrix.
        biases: Per layer, the ``(out,)`` float32 bias.
        activation: Hidden-layer activation name (one of :data:`ACTIVATIONS`).
        metadata: Free-form dict saved with the policy (how it was trained and measured).
    """

    def __init__(
        self,
        weights: Sequence[np.ndarray],
        biases: Sequence[np.ndarray],
        activation: str = "tanh",
        metadata: dict | None = None,
    ) -> None:
        self.weights = [np.ascontiguousarray(w, dtype=np.float32) for w in weights]
        self.biases = [np.ascontiguousarray(b, dtype=np.float32) for b in biases]
        self.activation = activation
        self.metadata = dict(metadata or {})
        _check_layers(self.weights, self.biases, activation, "policy")
        self._act = _ACT[activation]

    @property
    def obs_size(self) -> int:
        """Length of the observation the net reads."""
        return self.weights[0].shape[0]

    @property
    def num_actions(self) -> int:
        """Number of logits the net writes."""
        return self.weights[-1].shape[1]

    @property
    def hidden_sizes(self) -> tuple[int, ...]:
        """Widths of the hidden layers."""
        return tuple(w.shape[1] for w in self.weights[:-1])

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Action logits for one observation ``(obs_size,)`` or a batch ``(n, obs_size)``."""
        h = np.asarray(obs, dtype=np.float32)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ w
            h += b
            if i < last:
                h = self._act(h)
        return h

    def legal_logits(self, obs: np.ndarray, legal_ids: Sequence[int]) -> np.ndarray:
        """Logits of the actions ``legal_ids`` only (one observation).

        Only the output columns of the legal actions are computed: about 8 of 2812, so
        the output layer, the largest, costs almost nothing.
        """
        h = np.asarray(obs, dtype=np.float32)
        for w, b in zip(self.weights[:-1], self.biases[:-1]):
            h = h @ w
            h += b
            h = self._act(h)
        ids = np.asarray(legal_ids, dtype=np.intp)
        return h @ self.weights[-1][:, ids] + self.biases[-1][ids]

    def best_action(self, obs: np.ndarray, legal_ids: Sequence[int]) -> int:
        """The legal action with the highest logit (the first one on an exact tie)."""
        if len(legal_ids) == 0:
            raise ValueError("best_action needs at least one legal action id")
        z = self.legal_logits(obs, legal_ids)
        return int(legal_ids[int(np.argmax(z))])

    def num_parameters(self) -> int:
        """Number of weights and biases."""
        return sum(w.size + b.size for w, b in zip(self.weights, self.biases))

    def save(self, path: str | Path) -> Path:
        """Write this policy to ``path`` (see :func:`save_policy`)."""
        return save_policy(self, path)


def _check_layers(weights, biases, activation, where: str) -> None:
    if activation not in ACTIVATIONS:
        raise PolicyFileError(f"{where}: activation {activation!r} is not supported; supported: {', '.join(ACTIVATIONS)}")
    if not weights or len(weights) != len(biases):
        raise PolicyFileError(f"{where}: needs one or more layers with one bias each, got {len(weights)} weights and {len(biases)} biases")
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
    if weights[0].shape[0] != OBS_SIZE:
        raise PolicyFileError(
            f"{where}: the net reads observations of {weights[0].shape[0]} floats, but this mulle_env encodes "
            f"{OBS_SIZE} (the policy was trained for another observation encoder)"
        )
    if weights[-1].shape[1] != NUM_ACTIONS:
        raise PolicyFileError(
            f"{where}: the net writes {weights[-1].shape[1]} action logits, but the action space has "
            f"{NUM_ACTIONS} actions (the policy was trained for another action codec)"
        )


def save_policy(policy: MLPPolicy, path: str | Path) -> Path:
    """Write ``policy`` as a compressed ``.npz`` file in the layout of the module docstring."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {
        "format": np.array(FORMAT),
        "format_version": np.array(FORMAT_VERSION),
        "activation": np.array(policy.activation),
        "obs_size": np.array(policy.obs_size),
        "num_actions": np.array(policy.num_actions),
        "num_layers": np.array(len(policy.weights)),
        "metadata": np.array(json.dumps(policy.metadata, sort_keys=True)),
    }
    for i, (w, b) in enumerate(zip(policy.weights, policy.biases)):
        arrays[f"layer{i}.weight"] = w
        arrays[f"layer{i}.bias"] = b
    # Written to a temporary name first so a reader never sees half a file.
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    tmp.replace(path)
    return path


def _scalar(data, key: str, kind, where: str):
    if key not in data:
        raise PolicyFileError(f"{where}: missing {key!r}; a policy file holds {_REQUIRED}")
    a = data[key]
    if a.shape != ():
        raise PolicyFileError(f"{where}: {key!r} must be a scalar, not an array of shape {a.shape}")
    try:
        return kind(a.item())
    except (TypeError, ValueError):
        raise PolicyFileError(f"{where}: {key!r} must be a {kind.__name__}, not {a.item()!r}") from None


_REQUIRED = "format, format_version, activation, obs_size, num_actions, num_layers, layer{i}.weight/bias, metadata"


def load_policy(path: str | Path) -> MLPPolicy:
    """Read and check a policy file; raise :class:`PolicyFileError` saying what is wrong."""
    path = Path(path)
    where = f"policy file {str(path)!r}"
    if path.is_dir():
        raise PolicyFileError(f"{where} is a directory, not a file (pass learned:path=<file.npz>)")
    if not path.is_file():
        raise PolicyFileError(f"{where} does not exist (pass learned:path=<file.npz> or train one with mulle-train)")
    try:
        with np.load(path, allow_pickle=False) as data:
            return _from_arrays(data, where)
    except PolicyFileError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError, zipfile.LargeZipFile) as exc:
        raise PolicyFileError(f"{where} is not a readable .npz policy file ({type(exc).__name__}: {exc})") from None


def _from_arrays(data, where: str) -> MLPPolicy:
    fmt = _scalar(data, "format", str, where)
    if fmt != FORMAT:
        raise PolicyFileError(f"{where}: format tag is {fmt!r}, not {FORMAT!r}")
    version = _scalar(data, "format_version", int, where)
    if version != FORMAT_VERSION:
        raise PolicyFileError(f"{where}: format version {version} is not supported (this code reads version {FORMAT_VERSION})")
    activation = _scalar(data, "activation", str, where)
    obs_size = _scalar(data, "obs_size", int, where)
    num_actions = _scalar(data, "num_actions", int, where)
    if obs_size != OBS_SIZE:
        raise PolicyFileError(
            f"{where}: made for observations of {obs_size} floats, but this mulle_env encodes {OBS_SIZE}"
        )
    if num_actions != NUM_ACTIONS:
        raise PolicyFileError(f"{where}: made for {num_actions} actions, but the action space has {NUM_ACTIONS}")
    n = _scalar(data, "num_layers", int, where)
    if not 1 <= n <= 64:
        raise PolicyFileError(f"{where}: num_layers must be between 1 and 64, not {n}")
    weights, biases = [], []
    for i in range(n):
        for key, out in ((f"layer{i}.weight", weights), (f"layer{i}.bias", biases)):
            if key not in data:
                raise PolicyFileError(f"{where}: missing array {key!r} (num_layers is {n})")
            a = data[key]
            if not np.issubdtype(a.dtype, np.floating):
                raise PolicyFileError(f"{where}: {key!r} must hold floats, not {a.dtype}")
            out.append(a)
    try:
        meta = json.loads(_scalar(data, "metadata", str, where))
    except json.JSONDecodeError as exc:
        raise PolicyFileError(f"{where}: metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise PolicyFileError(f"{where}: metadata must be a JSON object, not {type(meta).__name__}")
    _check_layers(weights, biases, activation, where)
    return MLPPolicy(weights, biases, activation, meta)
