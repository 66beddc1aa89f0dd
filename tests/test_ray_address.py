"""A ``--ray-address`` where no cluster answers is refused by name before any work (no traceback, no hang).

A newcomer's walk through the guide found ``mulle-train expert --backend ray --ray-address auto``
with no cluster ending in Ray's traceback (exit 1, a manifest left behind), and an address where
nothing listens retrying for minutes with Ray's own warnings only. Both commands now join the
cluster while they check their arguments.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

from arena.ray_backend import RayUnavailableError, _probe  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_address_where_nothing_listens_is_refused_at_once():
    port = _closed_port()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(RayUnavailableError, match=rf"no Ray cluster answers at '{address}' .*ray start --head"):
            _probe(address)
    _probe("auto")  # left to ray.init, which fails fast when it finds no cluster


def test_an_address_where_something_listens_passes_the_probe_brackets_and_all():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}", f"[127.0.0.1]:{port}"):
            _probe(address)  # an IPv6 host is written "[::1]:port": the brackets are not part of the host


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAY_ADDRESS="")
    code = "import sys; from {m} import {f}; sys.exit({f}(sys.argv[1:]))"
    module, func = ("arena.cli", "main") if argv[0] == "arena" else ("training.cli", "train_main")
    return subprocess.run([sys.executable, "-c", code.format(m=module, f=func), *argv[1:]], capture_output=True,
                          text=True, timeout=120, env=env, cwd=ROOT)


@pytest.mark.parametrize("command", ["expert", "arena"])
def test_the_commands_refuse_it_before_any_work(command, tmp_path):
    address = f"127.0.0.1:{_closed_port()}"
    if command == "expert":
        argv = ("train", "expert", "--recipe", "quick", "--out-dir", str(tmp_path / "run"), "--backend", "ray",
                "--ray-address", address)
    else:
        argv = ("arena", "random", "heuristic", "--games", "2", "--out", str(tmp_path / "r.jsonl"), "--backend",
                "ray", "--ray-address", address)
    done = _run(*argv)
    assert done.returncode == 2, done.stderr
    assert f"--ray-address: no Ray cluster answers at '{address}'" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no run directory, no results file
