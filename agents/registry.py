"""Agent specs: short strings with parameters, e.g. ``pimc:samples=30,rollout=heuristic``.

``make(spec)`` builds an agent; an unknown name or a bad parameter is an
:class:`AgentSpecError` that lists what exists. Parameters are converted to the type of
the agent's default for that keyword (int, float, bool, str).

A name stands for one agent per game: ``heuristic`` is Mulle's heuristic when the game is
Mulle and Casino's when it is Casino (``make(spec, game="casino")``; without ``game`` a
spec means its Mulle agent, as it did before there were two games). Each agent is
registered for the games it declares (:attr:`Agent.games`); ``random`` for every game.
"""

from __future__ import annotations

import difflib
import inspect
import math
from collections.abc import Callable
from typing import Any

from .base import ANY_GAME, DEFAULT_GAMES, Agent, declares

#: The game a spec is built for when none is named: Mulle, the game every caller written before
#: there were two games means.
DEFAULT_GAME = DEFAULT_GAMES[0]


class AgentSpecError(ValueError):
    """An agent spec that names no agent or passes a bad parameter.

    The message reads ``agent spec '<spec>': <reason>``; :attr:`spec` and :attr:`reason`
    hold the two parts (a CLI prints the message as it is, without adding its own prefix).
    """

    def __init__(self, spec: object, reason: str) -> None:
        self.spec = spec
        self.reason = reason
        super().__init__(f"agent spec {spec!r}: {reason}")


# name -> game (a short name, or ANY_GAME) -> the factory that builds the agent of that name for that game.
_REGISTRY: dict[str, dict[str, Callable[..., Agent]]] = {}
_HELP: dict[str, dict[str, str]] = {}
# Per agent and parameter, values other than the default that build the same agent.
_SAME_AS_DEFAULT: dict[str, dict[str, set[Any]]] = {}


def register(name: str, factory: Callable[..., Agent], help: str = "", games: tuple[str, ...] | None = None) -> None:
    """Make ``factory`` buildable as ``name`` for the games it plays (its keyword arguments are the spec's parameters).

    ``games``: the short names of those games, or ``(ANY_GAME,)``; by default the
    factory's own declaration (:attr:`Agent.games`, Mulle for one without). A name may be
    registered once per game: registering it for a game replaces only that game's agent
    (``heuristic`` for Casino leaves Mulle's ``heuristic`` as it is), and registering it
    for every game (``ANY_GAME``) replaces all of them.
    """
    if not name.isidentifier():
        raise ValueError(f"agent name must be an identifier, not {name!r}")
    declared: object = getattr(factory, "games", DEFAULT_GAMES) if games is None else games
    if isinstance(declared, str):  # ("casino") without its comma names one game, not its letters
        declared = (declared,)
    if (not isinstance(declared, (tuple, list, set, frozenset)) or not declared
            or not all(isinstance(g, str) and g for g in declared)):
        raise ValueError(f"games of agent {name!r} must be short names of games (e.g. ('mulle', 'casino')) or "
                         f"({ANY_GAME!r},) for every game, not {declared!r}")
    if ANY_GAME in declared:
        _REGISTRY.pop(name, None)
        _HELP.pop(name, None)
    text = help or (inspect.getdoc(factory) or "").split("\n")[0]
    for game in declared:
        _REGISTRY.setdefault(name, {})[game] = factory
        _HELP.setdefault(name, {})[game] = text


def _entry(name: str, game: str) -> str | None:
    """Under which key of ``_REGISTRY[name]`` the agent ``name`` of ``game`` is: the game's own, else ANY_GAME."""
    entries = _REGISTRY.get(name, {})
    return game if game in entries else ANY_GAME if ANY_GAME in entries else None


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
    play it (:func:`plays`), each described as it plays that game. Without, every name,
    described as it plays Mulle (or, for a name Mulle has no agent of, its first game).
    """
    _load_builtins()
    out = {}
    for name, entries in sorted(_REGISTRY.items()):
        key = _entry(name, game if game is not None else DEFAULT_GAME)
        if key is None:
            if game is not None:
                continue
            key = next(iter(entries))
        params = _params(entries[key])
        sig = ",".join(f"{k}={v.default!r}" for k, v in params.items())
        out[name] = f"{_HELP[name][key]}" + (f" (parameters: {sig})" if sig else "")
    return out


def plays(agent: Agent | str, game: str) -> bool:
    """True if ``agent`` plays the game whose short name is ``game`` (``"mulle"``, ``"casino"``).

    ``agent`` is a built agent, judged by its own :attr:`~agents.Agent.games` (an agent
    may set it per instance), or a spec or name, judged by the registry without building
    it: whether the name has an agent for ``game`` (an unknown name is an
    :class:`AgentSpecError`). An agent that declares nothing plays Mulle only
    (:data:`~agents.base.DEFAULT_GAMES`).
    """
    if isinstance(agent, str):
        _load_builtins()
        name = parse_spec(agent)[0]
        if name not in _REGISTRY:
            _resolve(agent)  # raises the usual unknown-agent error, listing what exists
        return _entry(name, game) is not None
    return declares(getattr(agent, "games", DEFAULT_GAMES), game)


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


def _resolve(spec: str, game: str | None = None
             ) -> tuple[str, Callable[..., Agent], dict[str, inspect.Parameter], dict[str, Any]]:
    """The name, factory, factory parameters and converted keyword arguments of a spec for ``game`` (default Mulle)."""
    _load_builtins()
    name, raw = parse_spec(spec)
    game = DEFAULT_GAME if game is None else game
    entries = _REGISTRY.get(name)
    if entries is None:
        known = "; ".join(f"{k}: {v}" for k, v in available(game).items())
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        which = "available agents" if game == DEFAULT_GAME else f"agents that play {game}"
        raise AgentSpecError(spec, f"unknown agent {name!r}{hint}; {which}: {known}")
    key = _entry(name, game)
    if key is None:
        raise AgentSpecError(spec, f"agent {name!r} does not play {game} (it plays {', '.join(sorted(entries))}); "
                                   f"the agents that play {game}: {', '.join(available(game))}")
    factory = entries[key]
    params = _params(factory)
    kwargs: dict[str, Any] = {}
    for key, text in raw.items():
        if key not in params:
            allowed = ", ".join(params) or "none"
            raise AgentSpecError(spec, f"agent {name!r} has no parameter {key!r}; its parameters: {allowed}")
        default = params[key].default
        kwargs[key] = _convert(spec, key, text, None if default is inspect.Parameter.empty else default)
    return name, factory, params, kwargs


def make(spec: str, game: str | None = None) -> Agent:
    """Build the agent a spec names for ``game`` (a short name; default Mulle), e.g. ``make("pimc:samples=30")``.

    A name with no agent for ``game`` is an :class:`AgentSpecError` naming the agents that
    play it; so is an agent that, once built, says it does not play ``game`` after all (an
    instance's own :attr:`~agents.Agent.games`: a policy file of another game).
    """
    name, factory, params, kwargs = _resolve(spec, game)
    try:
        agent = factory(**kwargs)
    except AgentSpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise AgentSpecError(spec, str(exc)) from None
    # Only an instance's own declaration can narrow what its registration says (a class's is the registration).
    own = getattr(agent, "__dict__", {}).get("games")
    if own is not None and not declares(own, game or DEFAULT_GAME):
        raise AgentSpecError(spec, f"this agent plays {', '.join(own)}, not {game or DEFAULT_GAME}")
    agent.spec = canonical_spec(name, kwargs, params)
    agent.name = name
    return agent


def canonical(spec: str, game: str | None = None) -> str:
    """The canonical text of ``spec`` for ``game`` (default Mulle) without building the agent (:func:`canonical_spec`).

    The name, that it has an agent for ``game``, and the parameter types are checked (an
    :class:`AgentSpecError` otherwise); checks an agent makes when it is built
    (``samples >= 1``...) are left to :func:`make`. ``canonical(s, g) == make(s, g).spec``.
    """
    name, _, params, kwargs = _resolve(spec, game)
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
