"""Pure text matching for ``edit``: line-ending adaptation and the "not found" diagnosis.

When ``old_text`` is missing, ``explain_miss`` finds the closest region of the file (bounded
work: a cheap whitespace-insensitive scan first, ``difflib`` only on a capped number of
candidate lines) and says why it differs. When the difference is whitespace, the lines show it
visibly (``→`` tab, ``·`` space, ``␍`` CR); otherwise they are shown as they are, for a model
to copy: a small one copies the markers too (``def·discount(price,·percent):``, seen live).
"""

from __future__ import annotations

import difflib

__all__ = ["adapt_line_endings", "explain_miss", "visible"]

# Bound the fuzzy search: files can be large, and a miss must stay cheap.
_MAX_SCAN_LINES = 20_000
_MAX_FUZZY_LINES = 5_000
_CONTEXT_LINES = 1
_MAX_SHOWN_LINES = 30


def visible(line: str) -> str:
    """Make whitespace visible: tab → ``→``, space → ``·``, CR → ``␍``."""
    return line.replace("\t", "→").replace(" ", "·").replace("\r", "␍")


def uses_crlf(data: bytes) -> bool:
    """Whether most line breaks in ``data`` are CRLF."""
    crlf = data.count(b"\r\n")
    return crlf > 0 and crlf * 2 >= data.count(b"\n")


def adapt_line_endings(old: bytes, new: bytes, data: bytes) -> tuple[bytes, bytes]:
    """Return (old, new) with bare LF turned into CRLF when the file uses CRLF.

    ``old`` is only adapted when it does not already occur as given; ``new`` is adapted
    whenever the file uses CRLF, so inserted lines get the file's line ending.
    """
    if not uses_crlf(data):
        return old, new
    if old not in data:
        old = _to_crlf(old)
    return old, _to_crlf(new)


def _to_crlf(text: bytes) -> bytes:
    return text.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _squash(line: str) -> str:
    return " ".join(line.split())


def _best_start(file_lines: list[str], old_lines: list[str]) -> int | None:
    """Index of the file line where the closest region starts, or None."""
    anchor_index = next((i for i, l in enumerate(old_lines) if l.strip()), None)
    if anchor_index is None:
        return None
    anchor = _squash(old_lines[anchor_index])
    for i, line in enumerate(file_lines[:_MAX_SCAN_LINES]):
        if _squash(line) == anchor:
            return max(i - anchor_index, 0)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(anchor)
    best, best_ratio = None, 0.6  # below this, "closest" would only mislead
    for i, line in enumerate(file_lines[:_MAX_FUZZY_LINES]):
        matcher.set_seq1(_squash(line))
        if matcher.real_quick_ratio() > best_ratio and matcher.quick_ratio() > best_ratio:
            ratio = matcher.ratio()
            if ratio > best_ratio:
                best, best_ratio = i, ratio
    return None if best is None else max(best - anchor_index, 0)


_CONTENT_REASONS = ("differs in content", "more lines than the matching region")
"""The endings of the reasons that are not about whitespace (``_reason``)."""


def _reason(region: list[str], old_lines: list[str], old_crlf: bool) -> str:
    """Why the region differs from old_text, in words the model can act on."""
    file_tabs = any(l.startswith("\t") for l in region)
    file_spaces = any(l.startswith(" ") for l in region)
    old_tabs = any(l.startswith("\t") for l in old_lines)
    old_spaces = any(l.startswith(" ") for l in old_lines)
    if file_tabs and not file_spaces and old_spaces and not old_tabs:
        return "the file indents with tabs; old_text uses spaces"
    if file_spaces and not file_tabs and old_tabs and not old_spaces:
        return "the file indents with spaces; old_text uses tabs"
    if old_crlf and not any(l.endswith("\r") for l in region):
        return "old_text has CRLF (\\r\\n) line endings; the file uses LF"
    stripped_region = [l.rstrip("\r") for l in region]
    for i, (f, o) in enumerate(zip(stripped_region, old_lines)):
        if f != o and f.rstrip() == o.rstrip():
            who = "the file has" if len(f) > len(o) else "old_text has"
            return f"{who} trailing whitespace on line {i + 1} of the region"
    if [_squash(l) for l in region] == [_squash(l) for l in old_lines]:
        return "the text matches except for whitespace (indentation or spacing)"
    for i, (f, o) in enumerate(zip(stripped_region, old_lines)):
        if f != o:
            return f"line {i + 1} of the region differs in content"
    return "old_text has more lines than the matching region"


def explain_miss(text: str, old_text: str) -> str:
    """The error text for an ``old_text`` that does not occur in ``text``."""
    file_lines = text.split("\n")
    old_crlf = "\r\n" in old_text
    old_lines = old_text.replace("\r\n", "\n").split("\n")
    if old_lines and old_lines[-1] == "" and len(old_lines) > 1:
        old_lines.pop()
    start = _best_start(file_lines, old_lines)
    head = "old_text was not found in the file."
    if start is None:
        return head + " No similar region was found; read the file again and copy the exact text."
    count = min(len(old_lines), _MAX_SHOWN_LINES)
    region = file_lines[start : start + len(old_lines)]
    reason = _reason(region, old_lines, old_crlf)
    whitespace = not reason.endswith(_CONTENT_REASONS)
    show = visible if whitespace else (lambda line: line.rstrip("\r"))
    lo = max(start - _CONTEXT_LINES, 0)
    hi = min(start + count + _CONTEXT_LINES, len(file_lines))
    shown = [f"{n + 1:>6}  {show(file_lines[n])}" for n in range(lo, hi)]
    wanted = [f"        {show(l)}" for l in old_lines[:_MAX_SHOWN_LINES]]
    return "\n".join(
        [
            f"{head} The closest region is at line {start + 1}; it differs because {reason}.",
            "File (→ tab, · space, ␍ CR):" if whitespace else "File:",
            *shown,
            "old_text:",
            *wanted,
            "Copy the exact text from the file (without the line numbers) and retry.",
        ]
    )
