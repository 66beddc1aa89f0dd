"""The terminal front end: ``mulle-play`` (:mod:`terminal.cli`), a game against any agent or a replay.

Mulle has a screen of its own; any other game of the arena's protocol (``--game casino``,
named as :data:`arena.game.GAMES` names it) is played on the plain screen of
:mod:`terminal.textplay`, the position as the game renders it.

It sits beside the browser front end (:mod:`live`): both drive agents through the engine's one
game loop (:class:`mulle_env.engine.GameLoop`) and read and write the engine's game records
(:class:`mulle_env.engine.GameRecord`). Agents are known only by spec (``agents.make``).
"""
