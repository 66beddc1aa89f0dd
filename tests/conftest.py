"""Shared fixtures: the engine tests run once per available backend (C core and Python reference)."""

from __future__ import annotations

import pytest

import mulle_env
from mulle_env import engine

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
