"""Expert iteration for Mulle: search labels positions, a network learns them, the search uses the network.

A tool above both ``agents`` (the teacher data, the fit, the ``netsearch`` agent) and
``arena`` (the measurements), so that neither of those imports the other:

* :mod:`expert.cli`: ``mulle-expert`` (``run`` generations, ``plot`` them, ``speed``
  plot of Elo against thinking time from one arena run);
* :mod:`expert.evaluate`: duplicate head-to-heads in the arena with 95% intervals;
* :mod:`expert.plots`: the PNGs.

docs/learning.md describes the pipeline and the commands.
"""
