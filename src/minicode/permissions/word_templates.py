"""A shell word as a pattern, for deny rules: what minicode can decode is text, what is
computed at run time is a wildcard.

A word's *template* is its value after quote removal (quotes, backslashes and ``$'…'`` are
already decoded by ``shell_words``) with every computed segment — a parameter, command,
arithmetic or process expansion, a tilde, an unquoted glob (``*``, ``?``, ``[…]``) or a
brace list — replaced by ``STAR``, which stands for any text. ``r${x}m`` is ``r\\0m``, which
could be ``rm``; ``/usr/bin/r[m]`` is ``/usr/bin/r\\0``. Deny rules are matched against
templates pattern-to-pattern (``patterns.globs_meet``), so an expansion *anywhere* in a word
counts, not only a whole computed word.

Templates are raw text — words joined by single spaces, no quoting — and so are the
patterns' ``globs``: a comparison that ignores quoting can only find more matches, which is
the safe direction for a deny rule. Pure; standard library only.
"""

from __future__ import annotations

import re
from typing import Sequence

from minicode.permissions.patterns import STAR
from minicode.permissions.shell_words import Expansion, Word

__all__ = ["name_templates", "word_template", "words_template"]

_SEGMENT = "\x01"
"""A wildcard that never holds a ``/`` (a glob matches within one directory); while a
template is built only — the result has ``STAR`` for it."""
_GLOB = re.compile(r"\[[^\]]*\]|[*?]")


def word_template(word: Word) -> str:
    """``word``'s value with each computed segment as ``STAR`` (the value itself when static)."""
    return _raw(word).replace(_SEGMENT, STAR)


def name_templates(word: Word) -> tuple[str, ...]:
    """The basenames a command word can have, as templates: the text after its last literal
    ``/``, and — since an expansion may itself hold a ``/`` (``r${x}m`` with ``x=/bin/r``
    runs ``r/bin/rm``) — ``STAR`` followed by what comes after each expansion there."""
    raw = _raw(word)
    tail = raw[raw.rfind("/") + 1 :] or raw  # "dir/": bash tries the directory itself
    names = [tail]
    names += [STAR + tail[k + 1 :] for k, c in enumerate(tail) if c == STAR]
    return tuple(dict.fromkeys(n.replace(_SEGMENT, STAR) for n in names))


def words_template(words: Sequence[Word], *, after_word: bool = False) -> str:
    """Words as one raw template (``after_word``: each with its blank, to follow a name); a
    word that is wholly computed takes its blank with it (an empty expansion vanishes:
    ``git push $x`` may be ``git push``)."""
    out: list[str] = []
    for k, word in enumerate(words):
        template = word_template(word)
        out.append(template if template == STAR or (k == 0 and not after_word) else " " + template)
    return "".join(out)


def _raw(word: Word) -> str:
    """The template with ``_SEGMENT`` for glob wildcards (``STAR`` for everything else)."""
    if word.static:
        return word.value
    text = "".join(STAR if isinstance(p, Expansion) else p for p in word.pieces)
    if word.brace:
        # Conservatively, from the first brace to the last one: {r,x}m, a{b,c}d{e,f}.
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            text = text[:start] + STAR + text[end + 1 :]
    # The literal parts do not say whether they were quoted: a quoted '*' is taken as a
    # glob too (more matches, never fewer).
    return _GLOB.sub(_SEGMENT, text)
