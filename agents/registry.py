"""Agent specs: short strings with parameters, e.g. ``pimc:samples=30,rollout=heuristic``.

``make(spec)`` builds an agent; an unknown name or a bad parameter is an
:class:`AgentSpecError` that lists what exists. Parameters are converted to the type of
the agent's default for that keyword (int, float, bool, str).
"""

from __future__ import annotations

import difflib
import inspect
import math
from collections.abc import Callable
from typing import Any

from .base import DEFAULT_GAMES, Agent, declares


class AgentSpecError(ValueError):
    """An agent spec that names no agent or passes a bad parameter.

    The message reads ``agent spec '<spec>': <reason>``; :attr:`spec` and :attr:`reason`
    hold the two parts (a CLI prints the message as it is, without adding its own prefix).
    """

    def __init__(self, spec: object, reason: str) -> None:
        self.spec = spec
        self.reason = reason
        super().__init__(f"agent spec {spec!r}: {reason}")


_REGISTRY: dict[str, Callable[..., Agent]] = {}
_HELP: dict[str, str] = {}
# Per agent and parameter, values other than the default that build the same agent.
_SAME_AS_DEFAULT: dict[str, dict[str, set[Any]]] = {}


def register(name: str, factory: Callable[..., Agent], help: str = "") -> None:
    """Make ``factory`` buildable as ``name`` (its keyword arguments are the spec's parameters)."""
    if not name.isidentifier():
        raise ValueError(f"agent name must be an identifier, not {name!r}")
    _REGISTRY[name] = factory
    _HELP[name] = help or (inspect.getdoc(factory) or "").split("\n")[0]


def same_as_default(name: str, **values: Any) -> None:
    """Declare values that mean the same agent as a parameter's default, for :func:`canonical_spec`.

    E.g. ``same_as_default("learned", path=DEFAULT_POLICY_PATH)``: the default ``path=""``
    loads that file, so naming it explicitly must not make a different spec.
    """
    for key, value in values.items():
        _SAME_AS_DEFAULT.setdefault(name, {}).setdefault(key, set()).add(value)


def available(game: str | None = None) -> dict[str, str]:
    """Registered names with a one-line description and their parameters.

    With ``game`` (a game's short name, ``"mulle"`` or ``"casino"``), only the agents that
    play it (:func:`plays`).
    """
    _load_builtins()
    out = {}
    for name, factory in sorted(_REGISTRY.items()):
        if game is not None and not declares(getattr(factory, "games", DEFAULT_GAMES), game):
            continue
        params = _params(factory)
        sig = ",".join(f"{k}={v.default!r}" for k, v in params.items())
        out[name] = f"{_HELP[name]}" + (f" (parameters: {sig})" if sig else "")
    return out


def plays(agent: Agent | str, game: str) -> bool:
    """True if ``agent`` plays the game whose short name is ``game`` (``"mulle"``, ``"casino"``).

    ``agent`` is a built agent, judged by its own :attr:`~agents.Agent.games` (an agent
    may set it per instance), or a spec or name, judged by its registered class's
    declaration without building it (an unknown name is an :class:`AgentSpecError`). An
    agent that declares nothing plays Mulle only (:data:`~agents.base.DEFAULT_GAMES`).
    """
    if isinstance(agent, str):
        _load_builtins()
        name = parse_spec(agent)[0]
        if name not in _REGISTRY:
            _resolve(agent)  # raises the usual unknown-agent error, listing what exists
        declared: object = getattr(_REGISTRY[name], "games", DEFAULT_GAMES)
    else:
        declared = getattr(agent, "games", DEFAULT_GAMES)
    return declares(declared, game)


def _params(factory: Callable[..., Agent]) -> dict[str, inspect.Parameter]:
    return {
        k: p
        for k, p in inspect.signature(factory).parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def _convert(spec: str, key: str, text: str, default: object) -> Any:
    try:
        if isinstance(default, bool):
            low = text.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            value = float(text)
            if not math.isfinite(value):
                raise AgentSpecError(spec, f"parameter {key}={text!r} must be a finite number (default {default!r})")
            return value
    except ValueError as exc:
        if isinstance(exc, AgentSpecError):
            raise
        kind = {bool: "true or false", int: "an int", float: "a number"}.get(type(default), type(default).__name__)
        raise AgentSpecError(spec, f"parameter {key}={text!r} must be {kind} (default {default!r})") from None
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``"name:k=v,k2=v2"`` into the name and raw parameter strings."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(spec, "give a non-empty string such as 'heuristic' or 'pimc:samples=30'")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise AgentSpecError(spec, f"parameter {part!r} must read key=value")
        if key.strip() in params:
            raise AgentSpecError(spec, f"parameter {key.strip()!r} is given twice; give each parameter once")
        params[key.strip()] = value.strip()
    return name.strip(), params


def _resolve(spec: str) -> tuple[str, Callable[..., Agent], dict[str, inspect.Parameter], dict[str, Any]]:
    """The name, factory, factory parameters and converted keyword arguments of a spec."""
    _load_builtins()
    name, raw = parse_spec(spec)
    factory = _REGISTRY.get(name)
    if factory is None:
        known = "; ".join(f"{k}: {v}" for k, v in available().items())
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise AgentSpecError(spec, f"unknown agent {name!r}{hint}; available agents: {known}")
    params = _params(factory)
    kwargs: dict[str, Any] = {}
    for key, text in raw.items():
        if key not in params:
            allowed = ", ".join(params) or "none"
            raise AgentSpecError(spec, f"agent {name!r} has no parameter {key!r}; its parameters: {allowed}")
        default = params[key].default
        kwargs[key] = _convert(spec, key, text, None if default is inspect.Parameter.empty else default)
    return name, factory, params, kwargs


def make(spec: str) -> Agent:
    """Build the agent a spec names, e.g. ``make("pimc:samples=30")``."""
    name, factory, params, kwargs = _resolve(spec)
    try:
        agent = factory(**kwargs)
    except AgentSpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise AgentSpecError(spec, str(exc)) from None
    agent.spec = canonical_spec(name, kwargs, params)
    agent.name = name
    return agent


def canonical(spec: str) -> str:
    """The canonical text of ``spec`` without building the agent (see :func:`canonical_spec`).

    The name and parameter types are checked (an :class:`AgentSpecError` otherwise);
    checks an agent makes when it is built (``samples >= 1``...) are left to :func:`make`.
    ``canonical(s) == make(s).spec``.
    """
    name, _, params, kwargs = _resolve(spec)
    return canonical_spec(name, kwargs, params)


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))  # risk=1.0 reads back as 1.0 from "1", and "1" is shorter
        return repr(value)  # shortest round-trip text: 1e+308, not 309 digits
    return str(value)


def canonical_spec(name: str, kwargs: dict[str, Any], params: dict[str, inspect.Parameter] | None = None) -> str:
    """The spec text of an agent from its converted parameters, so equal agents get equal text.

    Parameters are written from their converted values (``samples=040`` reads ``samples=40``),
    in sorted order, and dropped when equal to the factory's default (``pimc:samples=40`` is
    ``pimc`` when 40 is the default). Arena game ids, seeds and duplicate checks key on it.
    """
    params = params or {}
    kept: dict[str, Any] = {}
    for key, value in kwargs.items():
        p = params.get(key)
        default = inspect.Parameter.empty if p is None else p.default
        if default is not inspect.Parameter.empty and type(value) is type(default) and value == default:
            continue
        if value in _SAME_AS_DEFAULT.get(name, {}).get(key, ()):
            continue
        kept[key] = value
    if not kept:
        return name
    return name + ":" + ",".join(f"{k}={_text(kept[k])}" for k in sorted(kept))


_loaded = False


def _load_builtins() -> None:
    # Importing the agent modules registers them; done on first use so that
    # `import agents` stays cheap and free of cycles. The flag is set only once the import
    # worked: a failed import (a module mid-edit) must be retried and reported again, not
    # leave an empty registry that answers "unknown agent" from then on.
    global _loaded
    if _loaded:
        return
    try:
        from . import builtin  # noqa: F401
    except Exception as exc:
        raise ImportError(
            f"the built-in agents (agents.builtin) could not be imported: {type(exc).__name__}: {exc}"
        ) from exc
    _loaded = True
