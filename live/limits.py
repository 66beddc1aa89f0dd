"""Which agent specs the people at a live server may choose: an allow-list with parameter bounds.

A person picks the agent at a table (``join``'s ``opponent``, ``set_opponent``, ``watch``). Left
unchecked, ``pimc:samples=2000000`` would hold a worker thread for minutes and
``learned:path=/some/file`` would read a file of the server's choosing, so the server offers only
the specs its :class:`AgentLimits` allow. Each entry reads like an agent spec:

* ``random``: the agent, every parameter at its default;
* ``pimc:samples=200,width=64``: a number is the largest value the person may choose;
* ``pimc:rollout=heuristic|random``: texts (and ``true|false``) joined by ``|`` are the values allowed.

A parameter an entry does not name stays at its default. Several entries for one agent are
alternatives: a spec is allowed when one entry allows all of it. ``mulle-serve --allow-agent`` replaces
:data:`DEFAULT_AGENT_LIMITS`; the server's own ``--opponent`` is always allowed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import agents

__all__ = ["DEFAULT_AGENT_LIMITS", "AgentLimits"]

#: What people may choose unless ``--allow-agent`` says otherwise: every shipped agent, with the search
#: agents bounded to a fraction of a second a move (pimc at its default 200 samples takes ~12 ms a move on the
#: C core, so 1000 samples about 60 ms).
#: Policy files (learned's ``path``, netsearch's ``policy``) stay at the shipped one.
DEFAULT_AGENT_LIMITS: tuple[str, ...] = (
    "random",
    "heuristic",
    "greedy:risk=100",
    "pimc:samples=1000,width=64,rollout=heuristic|random,horizon=deal|1|2|3|4|5|6|7|8,history=true|false",
    # The shipped net is an afterstate net: leaf and prior do not apply to it (only their defaults are allowed).
    "netsearch:samples=96,width=8,depth=6,history=true|false",
    "learned:sample=true|false,temperature=100",
)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class AgentLimits:
    """An allow-list of agent specs with parameter bounds (see the module docstring).

    Args:
        entries: Entries such as ``"pimc:samples=1000,rollout=heuristic|random"``.

    Raises:
        ValueError: An entry names no registered agent or a parameter the agent does not have.
    """

    def __init__(self, entries: Iterable[str]) -> None:
        self.entries = tuple(entries)
        # Per agent name, one rule set per entry: a spec is allowed when one entry allows all of it
        # (merging entries parameter by parameter would allow combinations no entry lists).
        self._rules: dict[str, list[dict[str, float | frozenset[str]]]] = {}
        for entry in self.entries:
            name, raw = agents.parse_spec(entry)
            # canonical() checks the name and the parameter names; the bounds themselves need not build.
            agents.canonical(name + (":" + ",".join(f"{k}={v.split('|')[0]}" for k, v in raw.items()) if raw else ""))
            rules: dict[str, float | frozenset[str]] = {}
            for key, text in raw.items():
                bound = _number(text) if "|" not in text else None
                rules[key] = bound if bound is not None else frozenset(v.strip() for v in text.split("|"))
            self._rules.setdefault(name, []).append(rules)

    def describe(self) -> list[str]:
        """The entries, for error messages and ``/api/agents``."""
        return list(self.entries)

    def check(self, spec: str) -> None:
        """Raise :class:`ValueError` saying what is allowed unless the canonical ``spec`` is within the limits."""
        name, raw = agents.parse_spec(spec)
        entries = self._rules.get(name)
        if entries is None:
            raise ValueError(f"agent {name!r} is not offered by this server; it offers: {', '.join(self.entries)}")
        reasons = [self._violation(spec, name, raw, rules) for rules in entries]
        if None not in reasons:
            raise ValueError(reasons[0] if len(reasons) == 1 else "; ".join(dict.fromkeys(reasons)))

    def _violation(self, spec: str, name: str, raw: dict, rules: dict) -> str | None:
        """Why one entry's ``rules`` do not allow ``spec`` (``None``: they allow it)."""
        for key, text in raw.items():
            rule = rules.get(key)
            if rule is None:
                return (f"agent spec {spec!r}: this server keeps {name}'s parameter {key!r} at its default; "
                        f"it offers: {', '.join(e for e in self.entries if agents.parse_spec(e)[0] == name)}")
            if isinstance(rule, frozenset):
                if text not in rule:
                    return f"agent spec {spec!r}: {key} must be one of {', '.join(sorted(rule))} here"
            else:
                value = _number(text)
                if value is None or value > rule:
                    return (f"agent spec {spec!r}: {key} may be at most {rule:g} on this server "
                            "(it bounds the time an agent thinks)")
        return None
