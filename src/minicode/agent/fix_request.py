"""A fix for red tests asked for as code (small-model assists, docs/small-models.md).

Asked to make a failing test pass, a 1.5B model that must answer with an ``edit`` call picks
the ``def`` line as ``old_text`` and inserts a second ``return`` under it, or sends the broken
line back unchanged; on the live bench it fixed almost none. Shown the failure and the
function in a short message and asked for the fixed function in a Python block — what a code
model does best — it wrote ``price * (100 - percent) / 100`` and ``range(len(seq) - n + 1)``
at once. So while a fix task's last test run is red and nothing changed since, the next
request is that message: the failure's own lines (``failure_excerpt``) and the code under
test as it is now (``code_shown``). The answer's blocks become the change (``agent.advice``:
each function replaces its namesake; a ``write`` recovered from text, approved with its
diff), and the model then runs the check as after any change. At most ``MAX_REPAIRS`` a
task. Pure.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from minicode.agent.advice import definitions

__all__ = ["MAX_REPAIRS", "code_shown", "failure_excerpt", "red_failure", "repair_message"]

MAX_REPAIRS = 3
EXCERPT_MAX_LINES = 40
EXCERPT_MAX_CHARS = 2400
WHOLE_FILE_LINES = 80
"""A file of at most this many lines is shown whole; a longer one by the functions the failure names."""
SHOWN_FILES_MAX = 2

_SEPARATOR = re.compile(r"^_{3,} (.+?) _{3,}$")
_SECTION = re.compile(r"^={3,} (.+?) ={3,}$")
_FAILED = re.compile(r"\b(?:AssertionError|Error|FAILED|FAIL:|Traceback|assert)\b")
# how the command was run, not what the code does: a test run by its path does not find the
# package (``tools.assisted_checks.run_hint`` says how to run it), a file or command missing
_NOT_THE_CODE = re.compile(r"ModuleNotFoundError: No module named|can't open file|command not found|"
                           r"No such file or directory|unrecognized arguments|file or directory not found")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def red_failure(output: str) -> bool:
    """Whether a failed run's output shows a failure a code change can answer (a test's
    assertion, an exception) rather than a command that did not run."""
    return _FAILED.search(output) is not None and _NOT_THE_CODE.search(output) is None


def failure_excerpt(output: str) -> str:
    """The lines of a red test run that say what failed: pytest's FAILURES section (the test's
    lines, ``>`` and ``E``), without its rulers and blank lines, the summary's ``FAILED`` lines
    after it — else the run's last lines (a traceback ends there). Capped."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if (section := _SECTION.match(line)) and section.group(1) in ("FAILURES", "ERRORS")), None)
    if start is None:
        kept = [line for line in lines if line.strip() and not line.startswith("[")][-EXCERPT_MAX_LINES:]
    else:
        kept = []
        for line in lines[start + 1 :]:
            section = _SECTION.match(line)
            if section and "short test summary" not in section.group(1):
                break
            if section or not line.strip() or line.startswith("["):
                continue
            separator = _SEPARATOR.match(line)
            kept.append(f"{separator.group(1)}:" if separator else line)
    text = "\n".join(kept[:EXCERPT_MAX_LINES])
    return text if len(text) <= EXCERPT_MAX_CHARS else text[:EXCERPT_MAX_CHARS] + "\n…"


def code_shown(excerpt: str, texts: Mapping[str, str]) -> list[tuple[str, str]]:
    """The code under test to show with a failure: of ``texts`` (the files a fix may change,
    path → text), those whose top-level functions or classes the failure names — whole when
    short, else just those definitions; when it names none, the only candidate. At most
    ``SHOWN_FILES_MAX``; Python files that do not parse are left out (a fix cannot be mapped
    back onto them)."""
    named = set(_IDENTIFIER.findall(excerpt))
    shown: list[tuple[str, str]] = []
    for path, text in texts.items():
        found = definitions(text)
        if found is None:
            continue
        hits = [source.rstrip("\n") for name, source in found if name in named]
        if not hits:
            continue
        whole = len(text.splitlines()) <= WHOLE_FILE_LINES
        shown.append((path, text if whole else "\n\n".join(hits)))
    if not shown and len(texts) == 1:
        path, text = next(iter(texts.items()))
        if definitions(text) and len(text.splitlines()) <= WHOLE_FILE_LINES:
            shown.append((path, text))
    return shown[:SHOWN_FILES_MAX]


def repair_message(excerpt: str, shown: Sequence[tuple[str, str]], unchanged: bool = False) -> str:
    """The user message asking for the fix as code: the failure, the code as it is now, and
    what to answer with. ``unchanged``: the last such answer changed nothing (said so first)."""
    parts = ["Your last answer changed nothing, and the tests still fail." if unchanged else "The tests fail:"]
    parts.append(f"```\n{excerpt}\n```")
    for path, code in shown:
        parts.append(f"{path} is now:\n```python\n{code.rstrip()}\n```")
    parts.append("Answer with the fixed code in one ```python block: each function you change, whole, with "
                 "only what the failure needs changed. The tests stay as they are.")
    return "\n".join(parts)
