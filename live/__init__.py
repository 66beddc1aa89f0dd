"""Live mode: people play agents and each other at named tables in the browser.

``mulle-serve`` (:mod:`live.cli`) serves a static page and a WebSocket endpoint speaking the
JSON protocol of :mod:`live.protocol`; :mod:`live.hub` holds the tables, seats and sessions
and advances each game (a :class:`~mulle_env.engine.match.Match`) through the engine's one
game loop (:class:`~mulle_env.engine.loop.GameLoop`); :mod:`live.store` keeps every finished
game in SQLite. Agents are known only by spec (``agents.make``). Only :mod:`live.server` needs
aiohttp (the ``web`` extra); this package and the protocol import without it. The terminal
front end, ``mulle-play``, is the sibling package :mod:`terminal`.

>>> from live import LiveConfig, ErrorCode
>>> LiveConfig().opponent, int(ErrorCode.NOT_YOUR_TURN)
('heuristic', 3002)
"""

from .hub import Hub, LiveConfig
from .protocol import PROTOCOL_VERSION, ErrorCode, ProtocolError

__all__ = ["PROTOCOL_VERSION", "ErrorCode", "Hub", "LiveConfig", "ProtocolError"]
