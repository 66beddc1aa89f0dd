"""The terminal front end: ``mulle-play`` (:mod:`terminal.cli`), a game against any agent or a replay.

It sits beside the browser front end (:mod:`live`): both drive agents through the engine's one
game loop (:class:`mulle_env.engine.GameLoop`) and read and write the engine's game records
(:class:`mulle_env.engine.GameRecord`). Agents are known only by spec (``agents.make``).
"""
