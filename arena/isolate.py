"""Untrusted agents: each agent in a process of its own that receives only its view and returns only a move.

``mulle-arena --isolate`` (and ``mulle-serve --isolate`` for its agent seats) seats an
:class:`IsolatedAgent` in place of each agent: a proxy with the agent interface
(``reset``, ``act``, ``observe``, ``needs_view``, ``version``, ``spec``) whose agent lives in a
child Python process started fresh (never forked: a forked child would hold a copy of the
game, the opponent's hand included). The child gets, per call, what the game loop would
have handed the agent (its seat's view, the legal moves, a move played) and answers with
text only: the move's notation, or the text of what went wrong. It never unpickles into
the game's process anything the agent made.

Every way out of a turn is the agent's forfeit, with a short reason in the arena's words
(:class:`AgentFailed`): an exception of any kind (``BaseException``, ``SystemExit``,
``KeyboardInterrupt``), a turn longer than the time limit however it is spent (a hang, a
spin with SIGALRM blocked), a process that dies (``os._exit``, a segfault, the memory
limit), an answer over :data:`MAX_REPLY_BYTES`, or one that is no answer at all. The
child runs under ``RLIMIT_AS`` (the memory limit) and without core files, in a session of
its own, and is killed (its whole process group) as soon as it fails or the proxy is
closed; a failed agent starts afresh at its next call.

What it costs and what it does not protect against: docs/arena.md ("Untrusted agents").

Wire format, both ways: a 4-byte big-endian length and a payload. The parent sends
pickles (the parent is trusted, the child only reads them); the child answers in JSON,
which the parent reads with a size cap and a deadline, so no answer can make the parent
allocate, block or run anything.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import random
import signal
import socket
import struct
import subprocess
import sys
import time
import weakref
from typing import Any

from mulle_env.util.threads import worker_env

__all__ = ["DEFAULT_MEMORY_MB", "MAX_REPLY_BYTES", "START_SECONDS", "AgentFailed", "IsolatedAgent"]

#: The address-space limit of an agent's process by default, in MiB: the shipped agents peak at 115 MiB of address
#: space there, learned and netsearch at 370 MiB (benchmarks/bench_isolate.py, docs/arena.md).
DEFAULT_MEMORY_MB = 2048
#: The largest answer the game's process reads from an agent's: a move's text and a capped error fit in far less.
MAX_REPLY_BYTES = 65_536
#: How long an agent's process may take to start and build its agent (imports, policy files).
START_SECONDS = 60.0
#: How much of an agent's error text its answer keeps (the results line caps it again).
_ERROR_CHARS = 2000

_HEADER = struct.Struct(">I")


class AgentFailed(Exception):
    """An isolated agent left its turn other than by answering: :attr:`what` says how, in the arena's words.

    ``what`` reads after the agent's name: ``"exceeded the move time limit of 1 s"``,
    ``"raised SystemExit: 3"``, ``"died of signal SIGSEGV during act()"``.
    """

    def __init__(self, what: str, stage: str) -> None:
        super().__init__(what)
        self.what = what
        self.stage = stage


def _kill(proc: subprocess.Popen[bytes], sock: socket.socket) -> None:
    """Kill the agent's process group (the agent may have started processes of its own) and reap it."""
    for sig in (signal.SIGKILL, signal.SIGCONT):  # SIGKILL ends stopped processes too; SIGCONT lets them go
        try:
            os.killpg(proc.pid, sig)  # its own session: the group id is its pid
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process stuck in the kernel; nothing more to do
        pass
    sock.close()


class IsolatedAgent:
    """The agent ``spec`` (at the game with short name ``game``) played in a process of its own.

    Args:
        spec: The agent's spec, as :func:`agents.make` reads it.
        game: The game's short name (``None``: Mulle).
        seconds: The time limit of each call (``reset``, ``act``, ``observe``), from the moment
            the request is sent to the moment the whole answer is read.
        memory_mb: The agent process's address-space limit (``RLIMIT_AS``) in MiB.
        worker_init: An import path ``module:function`` run in the agent's process before the
            agent is built (the arena's ``--worker-init``: test agents register there).

    Raises:
        AgentFailed: The agent's process could not start or build the agent (``what`` says why).

    The agent's random generator lives in its process: :meth:`seed` fixes it for the next
    game (the arena passes the seed it would have given the agent in-process, so a game plays
    the same isolated or not); without one, the first ``act`` of a game seeds it from the
    ``rng`` the caller passes.
    """

    def __init__(self, spec: str, game: str | None = None, *, seconds: float = 10.0,
                 memory_mb: int = DEFAULT_MEMORY_MB, worker_init: str | None = None) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < math.inf:
            raise ValueError(f"an isolated agent needs a time limit in positive seconds, not {seconds!r}")
        if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or memory_mb < 64:
            raise ValueError(f"an isolated agent's memory limit is a whole number of MiB of at least 64, "
                             f"not {memory_mb!r}")
        self.spec = spec
        self.name = spec.partition(":")[0]
        self.game = game
        self.seconds = float(seconds)
        self.memory_mb = memory_mb
        self.worker_init = worker_init
        self.needs_view = True
        self.version = "1"
        self.games: tuple[str, ...] = ()
        self._observes = True
        self._seed: int | None = None
        self._seeded = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._start()

    # ----- the agent interface -------------------------------------------------------------
    @property
    def observe(self) -> Any:
        """The agent's ``observe``, or ``None`` when the agent keeps the base class's no-op (no call is made then)."""
        return self._observe if self._observes else None

    def seed(self, value: int) -> None:
        """The seed of the agent's random generator for the next game (taken at its first ``act``)."""
        self._seed = value

    def reset(self) -> None:
        """A new game begins: the agent's ``reset()`` in its process."""
        self._seeded = False
        self._call("reset", ("reset",))

    def act(self, view: Any, legal_moves: Any, rng: random.Random | None) -> str | None:
        """The agent's answer as text (a move's notation) or ``None``: the game loop checks it as any answer."""
        seed = None
        if not self._seeded:
            seed = self._seed if self._seed is not None else (rng.getrandbits(64) if rng is not None else 0)
            self._seed, self._seeded = None, True
        reply = self._call("act", ("act", view, list(legal_moves), seed))
        move = reply.get("move")
        if move is not None and not isinstance(move, str):
            self.close()
            raise AgentFailed(f"answered {type(move).__name__} where a move's text belongs", "act")
        return move

    def _observe(self, event: tuple[int, Any]) -> None:
        self._call("observe", ("observe", event))

    def close(self) -> None:
        """Kill the agent's process (a later call starts a new one)."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = self._sock = self._finalizer = None

    @property
    def alive(self) -> bool:
        """True while the agent's process runs (it is killed at its first failure, and restarted at the next call)."""
        return self._proc is not None and self._proc.poll() is None

    def __repr__(self) -> str:
        return f"<IsolatedAgent {self.spec!r} pid {self._proc.pid if self._proc else None}>"

    # ----- the process ---------------------------------------------------------------------
    def _start(self) -> None:
        parent, child = socket.socketpair()
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # where `arena` is importable from
        env = {**os.environ, **worker_env(),
               "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "arena.isolate", str(child.fileno()), str(self.memory_mb), str(os.getpid())],
                pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True, env=env)
        finally:
            child.close()
        self._proc, self._sock = proc, parent
        self._finalizer = weakref.finalize(self, _kill, proc, parent)
        hello = {"spec": self.spec, "game": self.game, "worker_init": self.worker_init, "path": list(sys.path)}
        try:
            info = self._exchange("start", ("hello", hello), max(START_SECONDS, self.seconds))
        except AgentFailed as exc:
            raise AgentFailed(f"could not be started: {exc.what}", "start") from None
        if "error" in info:
            self.close()
            raise AgentFailed(f"could not be built: {_short(info['error'])}", "start")
        self.needs_view = info.get("needs_view") is not False
        self.version = _short(info.get("version", "1"), 200)
        games = info.get("games")
        self.games = tuple(_short(g, 100) for g in games) if isinstance(games, list) else ()
        self._observes = info.get("observes") is not False

    def _call(self, stage: str, message: tuple[Any, ...]) -> dict[str, Any]:
        if self._proc is None:
            try:
                self._start()
            except AgentFailed as exc:
                raise AgentFailed(exc.what, stage) from None
        reply = self._exchange(stage, message, self.seconds)
        if "error" in reply:
            self.close()  # what it left behind is no state to go on from
            what = {"act": "raised", "reset": "raised in reset():", "observe": "raised in observe():"}[stage]
            raise AgentFailed(f"{what} {_short(reply['error'])}", stage)
        return reply

    def _signal(self, sig: int) -> None:
        proc = self._proc
        if proc is not None:
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass  # gone: the read below says how

    def _exchange(self, stage: str, message: tuple[Any, ...], seconds: float) -> dict[str, Any]:
        """Send ``message`` and read the answer within ``seconds``; any failure kills the process.

        Between calls the agent's processes are stopped (SIGSTOP, SIGCONT for the next call):
        an agent thinks in its own turn only, not on the opponent's time in a thread it left
        running.
        """
        deadline = time.monotonic() + seconds
        self._signal(signal.SIGCONT)
        try:
            payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            self._send(_HEADER.pack(len(payload)) + payload, deadline, stage, seconds)
            (size,) = _HEADER.unpack(self._read(_HEADER.size, deadline, stage, seconds))
            if size > MAX_REPLY_BYTES:
                raise AgentFailed(f"sent an answer of {size:,} bytes in {stage}() (at most {MAX_REPLY_BYTES:,})",
                                  stage)
            data = self._read(size, deadline, stage, seconds)
            try:
                reply = json.loads(data)
            except ValueError:  # UnicodeDecodeError included
                reply = None
            if not isinstance(reply, dict):
                raise AgentFailed(f"sent what is no answer in {stage}() ({len(data):,} bytes that are no JSON "
                                  "object)", stage)
            self._signal(signal.SIGSTOP)
            return reply
        except BaseException:
            self.close()  # never leave a process running on that might still answer a later call
            raise

    def _send(self, data: bytes, deadline: float, stage: str, seconds: float) -> None:
        sock = self._sock
        assert sock is not None
        try:
            sock.settimeout(max(deadline - time.monotonic(), 1e-3))
            sock.sendall(data)
        except TimeoutError:
            raise AgentFailed(_timeout(seconds, stage), stage) from None
        except OSError:
            raise AgentFailed(self._death(stage), stage) from None

    def _read(self, n: int, deadline: float, stage: str, seconds: float) -> bytes:
        sock = self._sock
        assert sock is not None
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AgentFailed(_timeout(seconds, stage), stage)
            sock.settimeout(left)
            try:
                chunk = sock.recv(min(n - len(buf), 1 << 16))
            except TimeoutError:
                raise AgentFailed(_timeout(seconds, stage), stage) from None
            except OSError:
                chunk = b""
            if not chunk:
                raise AgentFailed(self._death(stage), stage)
            buf += chunk
        return bytes(buf)

    def _death(self, stage: str) -> str:
        """How the agent's process ended, once its connection closed."""
        proc = self._proc
        assert proc is not None
        try:
            code = proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return f"closed its connection during {stage}()"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return f"died of signal {name} during {stage}()"
        return f"exited with code {code} during {stage}()"


def _timeout(seconds: float, stage: str) -> str:
    from .worker import timeout_text

    return timeout_text(seconds, "act" if stage == "act" else stage)


def _short(value: object, limit: int = _ERROR_CHARS) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... (cut: {len(text):,} characters in all)"


# ----- the agent's process ------------------------------------------------------------------
def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - an exception whose text cannot be read is still an answer
        text = "(its text could not be read)"
    keep = _ERROR_CHARS - 200  # room for the words around it, so the game's process has nothing more to cut
    if len(text) > keep:
        text = f"{text[:keep]}... (cut: {len(text):,} characters in all)"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _receive(sock: socket.socket) -> Any:
    header = _exactly(sock, _HEADER.size)
    if header is None:
        return None
    data = _exactly(sock, _HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)  # from the parent, which is trusted


def _exactly(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _answer(sock: socket.socket, reply: dict[str, Any]) -> None:
    data = json.dumps(reply).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _die_with(parent: int) -> None:
    """Be killed when the game's process dies, even stopped between calls (Linux: PR_SET_PDEATHSIG).

    A stopped process never reads the end of its connection, and its own session's group is
    never sent SIGHUP: without this, a game's process killed by kill -9 would leave its agents'
    processes stopped for good.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the connection's end is the only way to learn of it
        pass
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)


def _child(fd: int, memory_mb: int, parent: int) -> None:
    """The agent's process: limits first, then the agent, then one answer per request until the parent goes."""
    import resource

    _die_with(parent)

    limit = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sock = socket.socket(fileno=fd)
    sock.setblocking(True)
    hello = _receive(sock)
    if hello is None:
        return
    sys.path[:] = hello[1]["path"]
    try:
        import agents

        from .worker import run_init

        run_init(hello[1]["worker_init"])
        agent = agents.make(hello[1]["spec"], game=hello[1]["game"])
        base = agents.Agent
        info = {"needs_view": bool(getattr(agent, "needs_view", True)), "version": str(getattr(agent, "version", "1")),
                "games": [str(g) for g in getattr(agent, "games", ())],
                "observes": callable(getattr(agent, "observe", None))
                and getattr(type(agent), "observe", None) is not base.observe}
    except BaseException as exc:  # noqa: BLE001 - whatever stops the agent being built is said, not raised
        _answer(sock, {"error": _describe(exc)})
        return
    _answer(sock, info)
    rng = random.Random(0)
    while True:
        message = _receive(sock)
        if message is None:
            return
        reply: dict[str, Any]
        try:
            if message[0] == "act":
                _, view, legal, seed = message
                if seed is not None:
                    rng = random.Random(seed)
                move = agent.act(view, legal, rng)
                reply = {"move": None if move is None else str(move)}
            elif message[0] == "observe":
                agent.observe(message[1])
                reply = {}
            else:
                reset = getattr(agent, "reset", None)
                if reset is not None:
                    reset()
                reply = {}
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt...: all the agent's answer
            reply = {"error": _describe(exc)}
        _answer(sock, reply)


if __name__ == "__main__":
    _child(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
