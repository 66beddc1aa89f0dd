"""Agent specs: short strings with parameters, e.g. ``pimc:samples=30,rollout=heuristic``.

``make(spec)`` builds an agent; an unknown name or a bad parameter is an
:class:`AgentSpecError` that lists what exists. Parameters are converted to the type of
the agent's default for that keyword (int, float, bool, str).
"""

from __future__ import annotations

import inspect
from typing import Callable

from .base import Agent


class AgentSpecError(ValueError):
    """An agent spec that names no agent or passes a bad parameter."""


_REGISTRY: dict[str, Callable[..., Agent]] = {}
_HELP: dict[str, str] = {}


def register(name: str, factory: Callable[..., Agent], help: str = "") -> None:
    """Make ``factory`` buildable as ``name`` (its keyword arguments are the spec's parameters)."""
    if not name.isidentifier():
        raise ValueError(f"agent name must be an identifier, not {name!r}")
    _REGISTRY[name] = factory
    _HELP[name] = help or (inspect.getdoc(factory) or "").split("\n")[0]


def available() -> dict[str, str]:
    """Registered names with a one-line description and their parameters."""
    _load_builtins()
    out = {}
    for name, factory in sorted(_REGISTRY.items()):
        params = _params(factory)
        sig = ",".join(f"{k}={v.default!r}" for k, v in params.items())
        out[name] = f"{_HELP[name]}" + (f" (parameters: {sig})" if sig else "")
    return out


def _params(factory) -> dict[str, inspect.Parameter]:
    return {
        k: p
        for k, p in inspect.signature(factory).parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def _convert(name: str, key: str, text: str, default):
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
            return float(text)
    except ValueError:
        raise AgentSpecError(
            f"agent {name!r}: parameter {key}={text!r} must be a {type(default).__name__} (default {default!r})"
        ) from None
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``"name:k=v,k2=v2"`` into the name and raw parameter strings."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec is a non-empty string like 'pimc:samples=30', not {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise AgentSpecError(f"agent spec {spec!r}: parameter {part!r} must read key=value")
        params[key.strip()] = value.strip()
    return name.strip(), params


def make(spec: str) -> Agent:
    """Build the agent a spec names, e.g. ``make("pimc:samples=30")``."""
    _load_builtins()
    name, raw = parse_spec(spec)
    factory = _REGISTRY.get(name)
    if factory is None:
        known = "; ".join(f"{k}: {v}" for k, v in available().items())
        raise AgentSpecError(f"unknown agent {name!r}; available agents: {known}")
    params = _params(factory)
    kwargs = {}
    for key, text in raw.items():
        if key not in params:
            allowed = ", ".join(params) or "none"
            raise AgentSpecError(f"agent {name!r} has no parameter {key!r}; its parameters: {allowed}")
        default = params[key].default
        kwargs[key] = _convert(name, key, text, None if default is inspect.Parameter.empty else default)
    try:
        agent = factory(**kwargs)
    except (TypeError, ValueError) as exc:
        raise AgentSpecError(f"agent spec {spec!r}: {exc}") from None
    agent.spec = canonical_spec(name, raw)
    agent.name = name
    return agent


def canonical_spec(name: str, params: dict[str, str]) -> str:
    """The spec text with parameters in sorted order (so equal agents compare equal)."""
    if not params:
        return name
    return name + ":" + ",".join(f"{k}={params[k]}" for k in sorted(params))


_loaded = False


def _load_builtins() -> None:
    # Importing the agent modules registers them; done on first use so that
    # `import agents` stays cheap and free of cycles.
    global _loaded
    if _loaded:
        return
    _loaded = True
    from . import builtin  # noqa: F401
