"""A griffe extension for the API reference: the docstrings are written for ``help()`` and Sphinx
(:func:`agents.make`, ``>>>`` examples), which Markdown would garble; this shows each role as the code it
names and each doctest as a code block."""

from __future__ import annotations

import re
from typing import Any

import griffe

# :func:`x`, :class:`~a.b.C` (the tilde: Sphinx's "show the last part only"), :mod:, :data:, :attr:, :meth:, ...
ROLE = re.compile(r":(?:py:)?[a-z]+:`~?([^`]+)`")


def markdown(text: str) -> str:
    """The docstring ``text`` as Markdown: roles as code spans, doctest paragraphs fenced as ``pycon``."""
    paragraphs = re.split(r"\n[ \t]*\n", ROLE.sub(r"`\1`", text))
    out = []
    for para in paragraphs:
        if para.lstrip().startswith(">>>"):
            para = "```pycon\n" + para.strip("\n") + "\n```"
        out.append(para)
    return "\n\n".join(out)


class SphinxRoles(griffe.Extension):
    """Rewrite each docstring before mkdocstrings renders it (see :func:`markdown`)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
