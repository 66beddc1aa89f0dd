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
