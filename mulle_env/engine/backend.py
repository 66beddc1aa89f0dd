"""The one backend switch: which engine (compiled core or pure-Python reference) a game's package runs on.

``MULLE_ENGINE`` decides for every game at once: unset (or ``auto``) takes the compiled core when
it was built, ``python`` forces the reference, ``c`` insists on the core (an ImportError saying
why when it cannot load). Each game's package (:mod:`mulle_env.engine`, :mod:`mulle_env.casino`)
asks :func:`choose` once, at import, with the import of its compiled backend module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType

#: The values MULLE_ENGINE may take.
CHOICES = ("", "auto", "c", "python")


def requested() -> str:
    """MULLE_ENGINE as given (lower case, stripped); an ImportError for a value it cannot take."""
    choice = os.environ.get("MULLE_ENGINE", "").strip().lower()
    if choice not in CHOICES:
        raise ImportError(f"MULLE_ENGINE must be 'c', 'python' or unset (auto), not {choice!r}")
    return choice


def choose(extension: str, load: Callable[[], ModuleType],
           also: tuple[type[BaseException], ...] = ()) -> tuple[ModuleType | None, str | None, str]:
    """``(compiled module or None, why the compiled backend is unavailable or None, BACKEND)`` for one game.

    ``extension`` names the compiled core (``"mulle_env.engine._core"``) for the messages; ``load`` imports
    the module that wraps it (importing it configures the core). An ImportError from ``load`` (no compiler at
    install time, a stale build), or one of ``also``, leaves the reference running and says why.
    """
    choice = requested()
    module: ModuleType | None = None
    error: str | None = None
    try:
        module = load()
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == extension:
            error = f"the extension {extension} is not built (no C compiler at install time?)"
        else:
            error = f"the extension {extension} cannot be used: {exc}"
    except also as exc:
        error = f"the extension {extension} cannot be used: {exc}"
    if error is not None and choice == "c":
        raise ImportError(f"MULLE_ENGINE=c, but {error}")
    return module, error, "c" if module is not None and choice != "python" else "python"
