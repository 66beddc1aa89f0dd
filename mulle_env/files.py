"""Old home of :mod:`mulle_env.util.files`, kept so that ``import mulle_env.files`` keeps working.

This name is the very same module object as :mod:`mulle_env.util.files` (``sys.modules`` maps
both to it): a patch of ``mulle_env.files.X`` patches what the checks read, and classes keep
one identity. New code imports :mod:`mulle_env.util.files`.
"""

from __future__ import annotations

import sys

from .util import files as _files
from .util.files import *  # noqa: F403  (the names, for type checkers; the line below makes them one module)
from .util.files import __all__ as __all__

sys.modules[__name__] = _files
