"""Build the optional compiled parts: the engine's rules core, the env layer's stepper and the agents' rollouts.

Everything else is configured in pyproject.toml. The extensions are optional: without a
C compiler ``pip install`` still succeeds and everything runs on the pure-Python
reference (``mulle_env.engine.BACKEND == "python"``, and commands say so); see
docs/engine.md and docs/architecture.md.

* ``mulle_env.engine._core`` (mulle_env/engine/csrc/): rules only (legal moves, moves,
  scoring, deals), the state type, the observation and mask writers; it exports its C API
  as a capsule.
* ``mulle_env.casino._core`` (mulle_env/casino/csrc/): Casino's rules core on the same
  pattern (legal moves under every ruleset flag, moves, deals, round ends, the observation and
  mask writers), exporting its game table (``GAME_OPS``) for the env layer's stepper; it shares
  the Mulle core's allocation-failure hook through that core's capsule.
* ``mulle_env._native`` (mulle_env/csrc/): what the environments run in C, on that
  capsule: the batched stepper and its thread pool, the extra-input blocks, the random
  playout.
* ``agents._native`` (agents/csrc/): what agents decide in C (pimc's rollouts and their
  playout policies), built on that capsule.

``MULLE_SANITIZE=1`` builds all four with AddressSanitizer and UndefinedBehaviorSanitizer
(.ci/sanitize uses it); ``MULLE_FAILPOINTS`` is always compiled in (the allocation-failure
test hook costs one compare per allocation).
"""

import os
import sys
from glob import glob

from setuptools import Extension, setup

if sys.platform == "win32":
    _ARGS: list[str] = []
    _LINK: list[str] = []
    _THREADS: list[str] = []  # the stepper's pool runs on the calling thread there (mulle_env/csrc/pool.c)
else:
    _THREADS = ["-pthread"]
    _ARGS = ["-O2", "-std=gnu99", "-Wall", "-Wno-unused-function"]
    _LINK = []
    if os.environ.get("MULLE_SANITIZE"):
        _ARGS = ["-O1", "-g", "-std=gnu99", "-Wall", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                 "-fno-sanitize-recover=undefined"]
        _LINK = ["-fsanitize=address,undefined"]

setup(
    ext_modules=[
        Extension(
            "mulle_env.engine._core",
            sources=sorted(glob("mulle_env/engine/csrc/*.c")),
            depends=["mulle_env/engine/csrc/core.h", "mulle_env/engine/csrc/engine.h"],
            extra_compile_args=_ARGS,
            extra_link_args=_LINK,
            optional=True,
        ),
        Extension(
            "mulle_env.casino._core",
            sources=sorted(glob("mulle_env/casino/csrc/*.c")),
            include_dirs=["mulle_env/engine/csrc"],
            depends=["mulle_env/casino/csrc/casino.h", "mulle_env/engine/csrc/core.h",
                     "mulle_env/engine/csrc/game_ops.h"],
            extra_compile_args=_ARGS,
            extra_link_args=_LINK,
            optional=True,
        ),
        Extension(
            "mulle_env._native",
            sources=sorted(glob("mulle_env/csrc/*.c")),
            include_dirs=["mulle_env/engine/csrc"],
            depends=["mulle_env/engine/csrc/core.h", "mulle_env/csrc/native.h"],
            extra_compile_args=_ARGS + _THREADS,
            extra_link_args=_LINK + _THREADS,
            optional=True,
        ),
        Extension(
            "agents._native",
            sources=sorted(glob("agents/csrc/*.c")),
            include_dirs=["mulle_env/engine/csrc"],
            depends=["mulle_env/engine/csrc/core.h", "agents/csrc/native.h"],
            extra_compile_args=_ARGS,
            extra_link_args=_LINK,
            optional=True,
        ),
    ]
)
