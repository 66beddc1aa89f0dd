"""Old home of :mod:`mulle_env.util.threads`, kept so that ``import mulle_env.threads`` keeps working.

This name is the very same module object as :mod:`mulle_env.util.threads` (``sys.modules`` maps
both to it), so the one process-wide "already limited" flag stays one. New code imports
:mod:`mulle_env.util.threads`.
"""

from __future__ import annotations

import sys

from .util import threads as _threads
from .util.threads import *  # noqa: F403  (the names, for type checkers; the line below makes them one module)
from .util.threads import __all__ as __all__

sys.modules[__name__] = _threads
