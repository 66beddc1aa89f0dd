"""Build the optional compiled rules core (mulle_env/engine/_core.c) and extra-input blocks (mulle_env/_extras.c).

Everything else is configured in pyproject.toml. The extension is optional: without a
C compiler ``pip install`` still succeeds and the engine runs on its pure-Python
reference (``mulle_env.engine.BACKEND == "python"``); see docs/engine.md.
"""

import sys

from setuptools import Extension, setup

_ARGS = [] if sys.platform == "win32" else ["-O2", "-std=c99", "-Wall", "-Wno-unused-function"]

setup(
    ext_modules=[
        Extension(
            "mulle_env.engine._core",
            sources=["mulle_env/engine/_core.c"],
            extra_compile_args=_ARGS,
            optional=True,
        ),
        # The compiled extra-input blocks of afterstate nets (mulle_env/extras.py is the
        # reference and the fallback when this is not built).
        Extension(
            "mulle_env._extras",
            sources=["mulle_env/_extras.c"],
            extra_compile_args=_ARGS,
            optional=True,
        ),
    ]
)
