"""What every layer of the project uses and no game owns: files, worker threads and closed pipes.

* :mod:`mulle_env.util.files`: the one check for the paths commands read and write
  (regular files only, bounded reads) and the one bounded reader of outside JSON.
* :mod:`mulle_env.util.threads`: one BLAS thread in every worker process the project starts.
* :mod:`mulle_env.util.pipes`: every command line stops quietly when its output's reader
  goes away (``| head``).

All are standard library only at import, so the engine's neighbours, the arena, training and
the front ends can all use them. They lived at ``mulle_env.files`` and ``mulle_env.threads``;
those paths remain as aliases of these very modules (the same module objects), so old imports,
pickles and test patches keep working.
"""
