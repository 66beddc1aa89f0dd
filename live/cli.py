"""``mulle-serve``: the live mode's server (the page, the WebSocket endpoint, agents in empty seats).

Examples::

    mulle-serve                                   # http://127.0.0.1:8000/, heuristic opponents
    mulle-serve --opponent pimc:samples=20 --grace 30
    mulle-serve --host 0.0.0.0 --port 8080 --max-tables 200

Needs the ``web`` extra: ``pip install -e ".[web]"``. See docs/live.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import math
import signal
import sys

import agents

from .hub import LiveConfig
from .limits import DEFAULT_AGENT_LIMITS, AgentLimits


def _positive(kind):
    def read(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a {'whole ' if kind is int else ''}number, not {text!r}")
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
        if value < (1 if kind is int else 0):
            raise argparse.ArgumentTypeError(f"must be at least {1 if kind is int else 0}, not {text!r}")
        return value
    return read


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (its flags are a public interface)."""
    p = argparse.ArgumentParser(
        prog="mulle-serve",
        description="Serve the live mode: people play agents and each other at named tables in the browser, "
        "watch two agents, and replay recorded games. Open the printed address.",
        epilog="Agent specs: 'name' or 'name:key=value,...', e.g. 'pimc:samples=20'. See docs/live.md.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--opponent", default="heuristic", metavar="SPEC",
                   help="agent spec for empty seats (default heuristic; each table's host may choose another)")
    p.add_argument("--grace", type=_positive(float), default=20.0, metavar="SECONDS",
                   help="seconds a dropped person keeps the seat before an agent takes it (default 20)")
    p.add_argument("--close-after", type=_positive(float), default=30.0, metavar="SECONDS",
                   help="seconds a table without people stays open before it closes (default 30)")
    p.add_argument("--move-time", type=_positive(float), default=10.0, metavar="SECONDS",
                   help="time limit of an agent's move; a slower or crashing agent is replaced (default 10)")
    p.add_argument("--agent-delay", type=_positive(float), default=0.0, metavar="SECONDS",
                   help="default pause before an agent moves (default 0; the page asks for its own)")
    p.add_argument("--max-tables", type=_positive(int), default=1000, metavar="N",
                   help="tables the server holds at once (default 1000)")
    p.add_argument("--max-watchers", type=_positive(int), default=8, metavar="N",
                   help="spectator connections per table (default 8)")
    p.add_argument("--max-message", type=_positive(int), default=4096, metavar="BYTES",
                   help="largest client message accepted (default 4096)")
    p.add_argument("--workers", type=_positive(int), default=4, metavar="N",
                   help="threads agents think in (default 4)")
    p.add_argument("--allow-agent", action="append", metavar="SPEC",
                   help="an agent spec people may choose, numbers as upper bounds and a|b as choices, e.g. "
                   "'pimc:samples=100,rollout=heuristic|random' (repeat the flag; given once, it replaces the "
                   "default list; see docs/live.md); --opponent is always allowed")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="logging level (default WARNING)")
    return p


def parse_config(argv: list[str] | None = None) -> tuple[argparse.Namespace, LiveConfig]:
    """Parse the flags into the namespace and a :class:`LiveConfig`; bad values exit 2 naming the flag."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"argument --port: must be 0 to 65535, not {args.port}")
    try:
        opponent = agents.canonical(args.opponent)
        agents.make(opponent)
    except ValueError as exc:
        parser.error(f"argument --opponent: {exc}")
    limits = tuple(args.allow_agent) if args.allow_agent else DEFAULT_AGENT_LIMITS
    try:
        AgentLimits(limits)
    except ValueError as exc:
        parser.error(f"argument --allow-agent: {exc}")
    config = LiveConfig(agent_limits=limits, opponent=opponent, grace=args.grace,
                        close_after=args.close_after, move_time=args.move_time,
                        agent_delay=args.agent_delay, max_tables=args.max_tables, max_watchers=args.max_watchers,
                        max_message=args.max_message, workers=args.workers)
    return args, config


async def _serve(config: LiveConfig, host: str, port: int, out) -> None:
    from .server import start

    runner, url = await start(config, host, port)
    # Everything loaded so far (aiohttp, the agents, numpy) lives as long as the server: keep it out of
    # the collector's full passes, which otherwise pause every table for tens of milliseconds.
    gc.collect()
    gc.freeze()
    print(f"mulle-serve: open {url}/ in a browser (Ctrl-C stops)", file=out, flush=True)
    stop = asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on Windows or off the main thread
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None, out=None) -> int:
    """Entry point of ``mulle-serve``; returns the exit code (0 stopped by Ctrl-C or SIGTERM, 1 could not serve,
    2 bad flags)."""
    args, config = parse_config(argv)
    out = out or sys.stdout
    logging.basicConfig(level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        print("mulle-serve needs aiohttp: pip install -e \".[web]\"", file=sys.stderr)
        return 1
    try:
        asyncio.run(_serve(config, args.host, args.port, out))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(f"mulle-serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
