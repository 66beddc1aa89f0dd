"""``mulle-serve``: the live mode's server (the page, the WebSocket endpoint, agents in empty seats).

Examples::

    mulle-serve                                   # http://127.0.0.1:8000/, heuristic opponents
    mulle-serve --opponent pimc:samples=20 --grace 30
    mulle-serve --host 0.0.0.0 --port 8080 --max-tables 200
    mulle-serve --db games.db                     # keep the game history there (default: see --db)
    mulle-serve --db games.db --export games.jsonl --player Anna   # game records for replay and training

Needs the ``web`` extra: ``pip install -e ".[web]"``. See docs/live.md.

Exit status: 0 stopped by Ctrl-C (or after ``--export``), 143 stopped by SIGTERM (after the same
clean shutdown: every finished game written), 1 could not serve, 2 bad flags or an unusable path.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import math
import signal
import sys
from pathlib import Path

import agents
from mulle_env.engine import fallback_notice
from mulle_env.engine.loop import ruleset_refusal
from mulle_env.engine.ruleset import Ruleset
from mulle_env.util.files import PathError, check_input_path, check_output_path, replacing

from .config import MAX_MOVE_CLOCK, MIN_MOVE_CLOCK
from .hub import LiveConfig
from .limits import DEFAULT_AGENT_LIMITS, AgentLimits
from .store import GameStore, StoreError, default_db_path

#: Exit status after SIGTERM (128 + 15, as shells report a process ended by it).
EXIT_TERMINATED = 143


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
    p.add_argument("--grace", type=_positive(float), default=300.0, metavar="SECONDS",
                   help="seconds a dropped person keeps the seat; one who has not come back by then loses the game "
                   "by forfeit (default 300)")
    p.add_argument("--move-clock", type=_positive(float), default=300.0, metavar="SECONDS",
                   help="seconds a person has for each move before losing by forfeit; 0 for none (default 300; a "
                   "table's opener may choose 10 to 3600)")
    p.add_argument("--cookie-secure", choices=["auto", "always", "never"], default="auto",
                   help="mark the login cookie Secure: auto (when the request came over https), always (behind a "
                   "proxy that ends TLS), never (default auto)")
    p.add_argument("--close-after", type=_positive(float), default=2.0, metavar="SECONDS",
                   help="seconds a table without people or watchers stays open before it closes (default 2)")
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
    p.add_argument("--max-tables-per-address", type=_positive(int), default=4, metavar="N",
                   help="tables one client address may have open at once (default 4)")
    p.add_argument("--max-connections-per-address", type=_positive(int), default=16, metavar="N",
                   help="connections one client address may hold at once (default 16)")
    p.add_argument("--isolate", action="store_true",
                   help="run each agent seat's agent in a process of its own that sees only its view (untrusted "
                   "agents; see docs/arena.md, 'Untrusted agents')")
    p.add_argument("--trust-loopback", action="store_true",
                   help="exempt loopback addresses (127.0.0.0/8, ::1) from the per-address limits, e.g. behind a "
                   "reverse proxy on this machine (by default a local client is limited like any other)")
    store = p.add_argument_group("the game history")
    store.add_argument("--db", metavar="PATH", default=None,
                       help=f"SQLite file every finished game is stored in (default {default_db_path()}, "
                       "$XDG_DATA_HOME/mulle/live.db when XDG_DATA_HOME is set)")
    store.add_argument("--no-db", action="store_true", help="keep no game history")
    store.add_argument("--analysis-time", type=_positive(float), default=0.25, metavar="SECONDS",
                       help="the post-game analyser's time per decision (default 0.25; a game of 2 sets is about "
                       "50 of a person's decisions)")
    store.add_argument("--export", metavar="FILE", default=None,
                       help="write the stored games to FILE as game records, one JSON line each (what mulle-play "
                       "--replay and the training readers take), and exit")
    store.add_argument("--table", metavar="NAME", default=None, help="with --export: only the games of this table")
    store.add_argument("--player", metavar="NAME", default=None,
                       help="with --export: only the games this person or agent played (any case)")
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
        # A live table plays the default rules (only its number of sets varies).
        if (why := ruleset_refusal(agents.make(opponent), Ruleset())) is not None:
            raise ValueError(f"agent {opponent!r} cannot play with the live tables' rules: {why}")
    except ValueError as exc:
        parser.error(f"argument --opponent: {exc}")
    limits = tuple(args.allow_agent) if args.allow_agent else DEFAULT_AGENT_LIMITS
    try:
        AgentLimits(limits)
    except ValueError as exc:
        parser.error(f"argument --allow-agent: {exc}")
    if args.no_db and (args.db is not None or args.export is not None):
        parser.error("--no-db keeps no history: it cannot go with --db or --export")
    if args.export is None and (args.table is not None or args.player is not None):
        parser.error("--table and --player choose the games of --export; give --export FILE")
    if args.move_clock and not MIN_MOVE_CLOCK <= args.move_clock <= MAX_MOVE_CLOCK:
        parser.error(f"argument --move-clock: must be 0 (no clock) or {MIN_MOVE_CLOCK} to {MAX_MOVE_CLOCK} seconds, "
                     f"not {args.move_clock:g}")
    db = None if args.no_db else _db_path(parser, args)
    config = LiveConfig(agent_limits=limits, opponent=opponent, grace=args.grace,
                        close_after=args.close_after, move_time=args.move_time,
                        agent_delay=args.agent_delay, max_tables=args.max_tables, max_watchers=args.max_watchers,
                        max_message=args.max_message, workers=args.workers, db=db,
                        max_tables_per_address=args.max_tables_per_address,
                        max_connections_per_address=args.max_connections_per_address,
                        trust_loopback=args.trust_loopback, analysis_time=args.analysis_time,
                        move_clock=args.move_clock, cookie_secure=args.cookie_secure, isolate=args.isolate)
    return args, config


def _db_path(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The database path, checked up front: an existing regular file, or a new one in an existing directory."""
    if args.db is None:
        path = default_db_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)  # the default's own directory; a --db one is never made
        except OSError as exc:
            parser.error(f"cannot create the default database directory {str(path.parent)!r} ({exc.strerror}); "
                         "give --db PATH or --no-db")
    else:
        path = Path(args.db)
    try:
        if args.export is not None:
            check_input_path(path, "--db", limit=None)  # an export reads a store; it never makes an empty one
        else:
            check_output_path(path, "--db")
    except PathError as exc:
        parser.error(str(exc))
    return str(path)


def export(db: str, out: str, table: str | None = None, player: str | None = None) -> int:
    """Write the games of the store ``db`` to ``out`` (JSON lines of game records); return how many.

    The file appears whole or not at all (written beside it, then renamed).
    """
    target = check_output_path(out, "--export")
    store = GameStore(db)
    n = 0
    try:
        with replacing(target) as tmp, open(tmp, "w", encoding="utf-8") as f:  # the project's one atomic write
            for record in store.export(table, player):
                f.write(json.dumps(record, separators=(",", ":")) + "\n")
                n += 1
    finally:
        store.close()
    return n


#: Blocks of this many bytes or more are always their own mapping, handed back to the system when freed.
MMAP_THRESHOLD = 4 << 20


def cap_malloc_retention() -> bool:
    """Make glibc's malloc hand large freed blocks back to the system (``mallopt(M_MMAP_THRESHOLD, 4 MiB)``); return
    whether it could (``False`` off glibc).

    Each password hash (scrypt, :mod:`live.accounts`) takes a 16 MiB block. glibc raises its mapping threshold
    after the first such block is freed, so the next ones come from the worker threads' heaps and stay there: ten
    logins grew the server by 48 MB (76 to 124 MB), past the 80 MB docs/live.md promises. A fixed threshold keeps
    every block of 4 MiB or more a mapping of its own, returned when freed (measured: 20 hashes, +0 MB).
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        return bool(libc.mallopt(-3, MMAP_THRESHOLD))  # M_MMAP_THRESHOLD is -3 in glibc's malloc.h
    except (OSError, AttributeError):
        return False


async def _serve(config: LiveConfig, host: str, port: int, out) -> int:
    from .server import start

    cap_malloc_retention()
    runner, url = await start(config, host, port)
    # Everything loaded so far (aiohttp, the agents, numpy) lives as long as the server: keep it out of
    # the collector's full passes, which otherwise pause every table for tens of milliseconds.
    gc.collect()
    gc.freeze()
    stopped_by: list[int] = []
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        # Both stop the same way: the tables close, the agents' threads stop, every finished game is written.
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no handlers on Windows or off the main thread
            loop.add_signal_handler(sig, lambda s=sig: (stopped_by.append(s), stop.set()))
    # Only now: whoever starts the server waits for this line, then may stop it at once. Printed before the
    # handlers, a Ctrl-C in between was lost where SIGINT starts out ignored (nohup, background jobs).
    try:
        where = f"; games are stored in {config.db}" if config.db else "; no game history is kept (--no-db)"
        print(f"mulle-serve: open {url}/ in a browser (Ctrl-C stops){where}", file=out, flush=True)
        await stop.wait()
    finally:
        await runner.cleanup()
    return EXIT_TERMINATED if stopped_by and stopped_by[0] == signal.SIGTERM else 0


def main(argv: list[str] | None = None, out=None) -> int:
    """Entry point of ``mulle-serve``; returns the exit code (0 stopped by Ctrl-C or after ``--export``, 143 stopped
    by SIGTERM, 141 the reader of its output went away, 1 could not serve, 2 bad flags or an unusable path)."""
    args, config = parse_config(argv)
    out = out or sys.stdout
    notice = fallback_notice()
    if notice is not None:
        print(notice, file=sys.stderr)
    if args.export is not None:
        try:
            n = export(config.db, args.export, args.table, args.player)
        except (PathError, StoreError) as exc:
            print(f"mulle-serve: error: {exc}", file=sys.stderr)
            return 2
        print(f"mulle-serve: exported {n} game{'s' if n != 1 else ''} to {args.export}", file=out)
        return 0
    logging.basicConfig(level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        print("mulle-serve needs aiohttp: pip install -e \".[web]\"", file=sys.stderr)
        return 1
    try:
        return asyncio.run(_serve(config, args.host, args.port, out))
    except KeyboardInterrupt:
        return 0
    except StoreError as exc:
        print(f"mulle-serve: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # an OSError too, but not one of listening: the reader of its output went away
        from mulle_env.util.pipes import reader_gone

        return reader_gone("mulle-serve", "every finished game is in the game store")
    except OSError as exc:
        print(f"mulle-serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
