"""Build the optional compiled parts: the engine's rules core and the agents' rollouts and afterstates.

Everything else is configured in pyproject.toml. Both extensions are optional: without a
C compiler ``pip install`` still succeeds and everything runs on the pure-Python
reference (``mulle_env.engine.BACKEND == "python"``, and commands say so); see
docs/engine.md and docs/architecture.md.

* ``mulle_env.engine._core`` (mulle_env/engine/csrc/): rules only (legal moves, moves,
  scoring, deals), the state type, the observation, mask and extra-input writers, the
  batched stepper; it exports its C API as a capsule.
* ``agents._native`` (agents/csrc/): what agents decide in C (pimc's rollouts and their
  playout policies, the afterstate encoder), built on that capsule.

``MULLE_SANITIZE=1`` builds both with AddressSanitizer and UndefinedBehaviorSanitizer
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
else:
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
