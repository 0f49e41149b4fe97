"""A shell word as a pattern, for deny rules: what minicode can decode is text, what is
computed at run time is a wildcard.

A word's *template* is its value after quote removal (quotes, backslashes and ``$'…'`` are
already decoded by ``shell_words``) with every computed segment — a parameter, command,
arithmetic or process expansion, a tilde, an unquoted glob (``*``, ``?``, ``[…]``) or a
brace list — replaced by ``STAR``, which stands for any text. ``r${x}m`` is ``r\\0m``, which
could be ``rm``; ``/usr/bin/r[m]`` is ``/usr/bin/r\\0``. In a command name, an expansion in
double quotes is ``NAME_STAR`` instead — any text without a blank, since it is not split into
words (``"$VENV/bin/pytest"`` cannot be ``rm x/bin/pytest``; an unquoted ``$VENV`` can). Deny rules are matched against
templates pattern-to-pattern (``patterns.globs_meet``), so an expansion *anywhere* in a word
counts, not only a whole computed word.

Templates are raw text — words joined by single spaces, no quoting — and so are the
patterns' ``globs``: a comparison that ignores quoting can only find more matches, which is
the safe direction for a deny rule. Pure; standard library only.
"""

from __future__ import annotations

import re
from typing import Sequence

from minicode.permissions.patterns import NAME_STAR, STAR
from minicode.permissions.shell_words import Expansion, Word

__all__ = ["command_template", "name_templates", "word_template"]

_SEGMENT = "\x01"
"""A wildcard that never holds a ``/`` (a glob matches within one directory); while a
template is built only — the result has ``STAR`` for it."""
_GLOB = re.compile(r"\[[^\]]*\]|[*?]")
_MAX_NAMES = 8


def word_template(word: Word, *, name: bool = False) -> str:
    """``word``'s value with each computed segment as ``STAR`` (the value itself when static);
    ``name``: the word is a command name (``NAME_STAR`` for a quoted expansion)."""
    return _raw(word, name).replace(_SEGMENT, STAR)


def name_templates(word: Word) -> tuple[str, ...]:
    """The basenames a command word can have, as templates: the text after its last literal
    ``/``, and — since an expansion may itself hold a ``/`` (``r${x}m`` with ``x=/bin/r``
    runs ``r/bin/rm``) — a wildcard followed by what comes after each expansion there."""
    raw = _raw(word, True)
    tail = raw[raw.rfind("/") + 1 :] or raw  # "dir/": bash tries the directory itself
    starts = [k for k, c in enumerate(tail) if c in (STAR, NAME_STAR)]
    if len(starts) > _MAX_NAMES:
        # Each is matched against every deny rule: past a few, one template that covers them
        # all — any text, then what follows the last expansion (every name ends so).
        last = max(k for k, c in enumerate(tail) if c in (STAR, NAME_STAR, _SEGMENT))
        return (STAR + tail[last + 1 :],)
    names = [tail, *(tail[k:] for k in starts)]
    return tuple(dict.fromkeys(n.replace(_SEGMENT, STAR) for n in names))


def command_template(assignments: Sequence[Word], words: Sequence[Word], name: str | None = None) -> str:
    """A simple command as one raw template: its assignments, then ``words`` — the first
    one as a command name, or ``name`` (a template from ``name_templates``) in its place. A
    word that is wholly computed takes its blank with it (an empty expansion vanishes:
    ``git push $x`` may be ``git push``)."""
    head = word_template(words[0], name=True) if name is None else name
    templates = [*(word_template(w) for w in assignments), head, *(word_template(w) for w in words[1:])]
    return "".join(t if t == STAR or k == 0 else " " + t for k, t in enumerate(templates))


def _raw(word: Word, name: bool = False) -> str:
    """The template with ``_SEGMENT`` for glob wildcards (``STAR`` for everything else)."""
    if word.static:
        return word.value
    text = "".join((NAME_STAR if name and p.quoted else STAR) if isinstance(p, Expansion) else p
                   for p in word.pieces)
    if word.brace:
        # Conservatively, from the first brace to the last one: {r,x}m, a{b,c}d{e,f}.
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            text = text[:start] + STAR + text[end + 1 :]
    # The literal parts do not say whether they were quoted: a quoted '*' is taken as a
    # glob too (more matches, never fewer).
    return _GLOB.sub(_SEGMENT, text)
