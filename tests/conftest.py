"""Shared fixtures: the engine tests run once per available backend (C core and Python reference)."""

from __future__ import annotations

import os

import pytest

import mulle_env
from mulle_env import engine

# Under .ci/sanitize the processes the tests start get their own sanitizer options (no leak check at exit,
# which could replace their exit status); see the comment there.
if "MULLE_ASAN_CHILD_OPTIONS" in os.environ:
    os.environ["ASAN_OPTIONS"] = os.environ["MULLE_ASAN_CHILD_OPTIONS"]

ENGINES = sorted(engine.backends())

#: Optional packages whose code the suite tests, and the extra that brings each. In CI (``CI`` set) every one
#: must be installed: their tests skip without them, and a test that skips in CI proves nothing.
CI_PACKAGES = {"torch": "train", "sb3_contrib": "train", "stable_baselines3": "train", "ray": "ray",
               "pettingzoo": "pettingzoo", "pyspiel": "openspiel", "aiohttp": "web", "playwright": "test",
               "tree": "test",
               # RLlib (tests/test_rllib.py): ray.rllib imports these, the test extra brings them.
               "pandas": "test", "pyarrow": "test", "tensorboardX": "test", "fsspec": "test", "lz4": "test",
               "ormsgpack": "test"}


def pytest_sessionstart(session: pytest.Session) -> None:
    """In CI, stop before any test when an optional package the suite tests is missing (nothing may skip for it)."""
    if not os.environ.get("CI"):
        return
    import importlib.util

    # find_spec looks without importing: no package's code runs here (the sanitizer run shares this file).
    missing = [f"{name} (the {extra!r} extra)" for name, extra in CI_PACKAGES.items()
               if importlib.util.find_spec(name) is None]
    if missing:
        pytest.exit(f"CI is set but these packages are missing, so their tests would skip: {', '.join(missing)}; "
                    'install the test extra (pip install -e ".[test]", after .ci/setup-torch)', returncode=4)


@pytest.fixture(params=ENGINES)
def engine_backend(request, monkeypatch):
    """Run the test with ``me.GameState``, ``me.new_game`` and ``me.replay`` from one backend.

    Modules opt in with ``pytestmark = pytest.mark.usefixtures("engine_backend")``; the
    suite then covers the C core and the Python reference in one pytest process.
    """
    mod = engine.backends()[request.param]
    for target in (mulle_env, engine):
        monkeypatch.setattr(target, "GameState", mod.GameState)
        monkeypatch.setattr(target, "new_game", mod.new_game)
        monkeypatch.setattr(target, "replay", mod.replay)
    return request.param


@pytest.fixture(scope="module")
def ray_without_telemetry():
    """For a module that starts Ray in this process: Ray's OpenTelemetry metric exporter is not started.

    Ray 2.60 leaves that exporter's thread running after ``ray.shutdown()``; at interpreter exit
    it logged through a ``std::string`` that exit had already destroyed (a heap-use-after-free
    inside ``_raylet.so``, caught by the whole-suite sanitizer run; a plain run can die of it
    at exit). Ray's metrics are not under test. The arena's Ray backend starts its local Ray the
    same way (``arena/ray_backend.py``).
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_enable_open_telemetry", "0")
        yield
