"""Small-model assists: what the loop adds for a model that does not act on its own yet.

A 1.5B local model asked to fix a file often explains the fix instead of making it, answers a
question about the workspace without reading anything, invents file names, or calls a tool
that does not exist. Measured on the live bench (bench/live.py), each of these ends a task
``done`` with nothing done. Three things help, and each is bounded and visible:

- **a brief of the workspace** with the task: the file list (capped), so paths are not
  guessed. Attached to the task's user message, so the request prefix stays stable after it.
- **a second chance** when a final answer looks like one of those failures: one short user
  message saying what is missing (at most ``MAX_NUDGES`` per task, shown in the transcript
  like any message). Never for a plain question that names nothing in the workspace.
- ``write`` refuses to replace an existing file this session has not read (the model's
  "edit" of a file it never saw would otherwise wipe it).

The loop applies them only while ``AssistState.on`` — set from ``[model].assists`` (``on``,
``off``, ``auto``); ``auto`` turns on when the model shows it needs them (a tool call written
as text was recovered) or when the server reports a small model. A model that calls tools
natively and acts never sees any of it: the requests stay byte for byte what they were.
Pure functions apart from the file listing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Callable, Mapping, Sequence

__all__ = [
    "CHANGERS",
    "ASSIST_MAX_TOKENS",
    "ASSIST_RETRY_TEMPERATURE",
    "ASSIST_TEMPERATURE",
    "AssistState",
    "FORCED_LOOKS",
    "MAX_FORCED",
    "LOOPING_PROMPT",
    "MAX_SAME_CALLS",
    "MAX_SAME_FAILURES",
    "change_paths",
    "check_command",
    "check_hint",
    "done_report",
    "edit_files",
    "wants_rename",
    "must_call",
    "SMALL_MODEL_BILLIONS",
    "small_model_reason",
    "MAX_NUDGES",
    "TurnFacts",
    "second_chance",
    "files_to_show",
    "target_file",
    "placeholder_write",
    "python_name",
    "test_command",
    "test_guard",
    "test_not_written",
    "workspace_brief",
]

MAX_NUDGES = 2
"""Second chances one task may get (each costs a model request)."""
MAX_FORCED = 6
"""Requests of one task whose answer must be a tool call (``must_call``); after these the
model may answer freely whatever is left undone (the second chances still apply)."""
FORCED_LOOKS = 2
"""Forced requests that may look (read, run) before a change task's must be a change."""
MAX_SAME_FAILURES = 3
"""A call failing the same way this often ends the task: the model is stuck (a small model at
temperature 0.8 resent one refused call ten times, until the task's time ran out)."""
MAX_SAME_CALLS = 3
"""A successful call giving the same result this often ends the calling: one more request,
whose calls do not run, asks for the answer (``LOOPING_PROMPT``)."""
LOOPING_PROMPT = ("You made the same {tool} call {count} times and it gave the same result each time, so no more "
                  "tools will run for this task. Answer now, from what the tools showed.")
PLACEHOLDER = "<the complete new content>"
"""What the example call of a second chance has for a file's content; a write of exactly this
is refused (``batch`` through ``test_guard``'s sibling ``placeholder_write``): the model copied
the example instead of filling it in."""
ASSIST_MAX_TOKENS = 2048
"""The output limit of a request with the assists on: a small model's answer past this is a
loop (often invisible until it ends: the server holds text it parses as a tool call), and at
the ~12 tokens/s of a CPU it would run for minutes. A file longer than this is written in parts."""
ASSIST_TEMPERATURE = 0.2
"""The sampling temperature of a request with the assists on (other requests send none: the
server's default, 0.8 on llama.cpp). A 1.5B model sampled at 0.8 writes a different, often
broken, call each time (measured on the live bench: docs/small-models.md); low, it writes the
likeliest — as code-editing agents run models for edits (Aider's default is 0)."""
ASSIST_RETRY_TEMPERATURE = 0.9
"""The temperature of the request after a repeated call: at 0.2 the model, told its edit was
made before, sent it again word for word; sampled wider, the next try differs."""
BRIEF_MAX_FILES = 80
"""Files listed in the brief; a larger workspace is listed up to this and says how many more."""
BRIEF_MAX_SHOWN = 4
"""Files whose content comes with the task (each as ``read`` shows it, at most ``BRIEF_MAX_LINES``)."""
BRIEF_MAX_LINES = 200
TINY_WORKSPACE = 4
"""A workspace of at most this many files has them all shown when the task names none."""
CHANGERS = frozenset({"write", "edit"})
"""The tools that change files."""
SMALL_MODEL_BILLIONS = 10.0
"""Below this many parameters a model gets the assists from its first request (``auto``)."""
# "qwen2.5-coder-1.5b", "qwen2.5-coder:7b-instruct", "llama3.2:3b", "phi-3-mini-3.8B", "gemma-2-2b-it"
_SIZE_IN_NAME = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,2})?)\s?[bB](?![a-zA-Z0-9])")

# Words that ask for a change of the workspace ("Fix the bug", "In x.json set …"); a task
# that reads as a question ("What does add return?", "explain how …") is not one.
_CHANGE = re.compile(
    r"\b(?:add|append|change|convert|correct|create|delete|edit|extend|fix|implement|insert|make|modify|move|"
    r"refactor|remove|rename|repair|replace|rewrite|set|update|write)\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^\s*(?:what|which|where|when|who|why|how|does|do|is|are|can|could|should|will|would|list|tell|explain|"
    r"describe|show|find|count|run)\b",
    re.IGNORECASE,
)
# Words that tie a question to this workspace rather than to general knowledge.
_WORKSPACE_WORDS = re.compile(
    r"\b(?:this|the|my|our)\s+(?:project|repo|repository|code|codebase|workspace|script|program|module|package|"
    r"file|files|function|class|test|tests|server|app|config)\b|\brun\b|\boutput\b|\bprints?\b|"
    r"[\w./-]+\.(?:py|js|ts|json|toml|yaml|yml|md|txt|cfg|ini|sh|go|rs|c|h|java|rb|html|css)\b",
    re.IGNORECASE,
)
# A question about what a program does when run, what code computes or how many of something
# there are: running it (or a count) answers that; a small model reading code miscomputes it.
_RUN = re.compile(r"\b(?:run|execute|output|outputs|prints?|printed|returns?|how\s+many)\b", re.IGNORECASE)
_CALL_NAME = re.compile(r'"(?:name|tool|function)"\s*:\s*"([A-Za-z_][\w.-]{0,63})"')
_CALL_ARGS = re.compile(r'"(?:arguments|parameters|args|input)"\s*:')


@dataclass(slots=True)
class AssistState:
    """Whether the assists apply, for one session; ``auto`` may turn them on as it learns.
    ``remember`` (blocking, small) keeps what was learned for the endpoint and model, so the
    next run starts with the assists on."""

    mode: str = "auto"  # on | off | auto
    learned: bool = False
    reason: str = ""
    remember: Callable[[str], None] | None = field(default=None, repr=False, compare=False)

    @property
    def on(self) -> bool:
        return self.mode == "on" or (self.mode == "auto" and self.learned)

    def learn(self, reason: str) -> bool:
        """Turn on (auto mode) because of ``reason``; True when that changed anything."""
        if self.mode != "auto" or self.learned:
            return False
        self.learned, self.reason = True, reason
        return True


@dataclass(slots=True)
class TurnFacts:
    """What the tools did in this task so far: (tool name, succeeded) per executed call."""

    ran: list[tuple[str, bool]]
    task: str = ""
    """The task's own words (without the brief)."""
    nudged: list[str] = field(default_factory=list)
    """The kinds of second chance given so far (each kind once, ``MAX_NUDGES`` in all)."""
    shown: list[str] = field(default_factory=list)
    """Files whose content came with the task (the brief): the model has seen them."""
    failed: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """The failed calls of this task, (tool, arguments, result): how often each came — the same
    again is said so, and ``MAX_SAME_FAILURES`` of one end the task (``stuck``)."""
    repeated: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """The successful calls of this task, (tool, arguments, result): how often each came —
    ``MAX_SAME_CALLS`` of one end the calling (``looping``)."""
    forced: int = 0
    """Requests of this task whose answer had to be a tool call (``must_call``)."""
    files: list[str] = field(default_factory=list)
    """The workspace's files as the brief listed them."""
    repeating: bool = False
    """A call of the last batch repeated an earlier one (said so, or refused as made before):
    the next request samples at ``ASSIST_RETRY_TEMPERATURE``."""
    renaming: bool = False
    """The last change's result said the name it renamed is still used elsewhere."""
    output: str = ""
    """What the last successful bash call of this task printed (its result)."""
    seen_all: bool = False
    """Every file of the workspace came with the task (its content, or that it is empty)."""
    python: str = "python"
    """The Python the commands the assists name run (``python_name``)."""
    written: list[str] = field(default_factory=list)
    """The paths this task's successful writes and edits changed, in order."""
    defined_in: dict[str, set[str]] = field(default_factory=dict)
    """Per Python file this task changed: the functions and classes it defines now (``task_names.defined_names``)."""
    used: dict[str, set[str]] = field(default_factory=dict)
    """Per Python file this task changed: the names its code reads and the attributes it uses."""
    failure: str = ""
    """What the last failed bash call of this task printed (its result): a red test run."""
    checked: tuple[str, str] | None = None
    """The last batch's change checked at once and green: the command and what it printed."""
    cut: bool = False
    """The last answer was cut as a runaway (``agent.runaway``)."""
    repairs: int = 0
    """Requests of this task that asked for a fix as code (``agent.fix_request``)."""
    repairing: list[str] = field(default_factory=list)
    """The files whose code the last request showed, asking for their fix: its answer's Python
    blocks are the change (``assisted_turn.advice_as_call``)."""
    denied: bool = False
    """A call of this task was denied (by the user or a rule): no second chance then — the
    model must not be pushed to try again what the user refused."""

    def changed(self) -> bool:
        return any(ok and name in CHANGERS for name, ok in self.ran)

    @property
    def defined(self) -> set[str]:
        """What the Python files this task changed define now."""
        return set().union(*self.defined_in.values())

    def stuck(self) -> str | None:
        """The tool of a call that failed the same way ``MAX_SAME_FAILURES`` times, or None."""
        return next((key[0] for key, count in self.failed.items() if count >= MAX_SAME_FAILURES), None)

    def looping(self) -> str | None:
        """The tool of a call that gave the same result ``MAX_SAME_CALLS`` times, or None."""
        return next((key[0] for key, count in self.repeated.items() if count >= MAX_SAME_CALLS), None)

    def check_failed(self) -> bool:
        """The last bash call after the last successful change failed (a red test, a traceback)."""
        last_change = max((i for i, (name, ok) in enumerate(self.ran) if ok and name in CHANGERS), default=-1)
        runs = [ok for name, ok in self.ran[last_change + 1 :] if name == "bash"]
        return last_change >= 0 and bool(runs) and not runs[-1]

    def red_unchanged(self) -> bool:
        """The last bash call failed and nothing was changed since: the code is still as it failed."""
        runs = [i for i, (name, _) in enumerate(self.ran) if name == "bash"]
        if not runs or self.ran[runs[-1]][1]:
            return False
        return not any(ok and name in CHANGERS for name, ok in self.ran[runs[-1] + 1 :])

    def verified_after_change(self) -> bool:
        """A successful bash call after the last successful write/edit (or no change at all)."""
        last_change = max((i for i, (name, ok) in enumerate(self.ran) if ok and name in CHANGERS), default=-1)
        return last_change < 0 or any(name == "bash" for name, _ in self.ran[last_change + 1 :])


def small_model_reason(model: str) -> str | None:
    """Why ``auto`` turns the assists on for ``model`` from the start: its name says it has
    fewer than ``SMALL_MODEL_BILLIONS`` parameters (local model names carry their size). A
    name that says nothing leaves it to what the model shows (a call written as text)."""
    sizes = [float(m.group(1)) for m in _SIZE_IN_NAME.finditer(model.replace("_", "-"))]
    if sizes and 0 < min(sizes) < SMALL_MODEL_BILLIONS:
        return f"a small model ({min(sizes):g}B parameters by its name)"
    return None


def wants_change(task: str) -> bool:
    """Whether ``task`` asks for a change of the workspace (not a question about it)."""
    return _CHANGE.search(task) is not None and not _is_question(task)


_POLITE = re.compile(r"^\s*(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?", re.IGNORECASE)


def _is_question(task: str) -> bool:
    text = task.strip()
    polite = _POLITE.match(text)
    if polite is not None:  # "Can you update the README?" asks for a change
        return _CHANGE.match(text, polite.end()) is None
    return text.endswith("?") or (_QUESTION_START.match(text) is not None and _CHANGE.match(text) is None)


def about_workspace(task: str, files: Sequence[str] = ()) -> bool:
    """Whether a question needs the workspace to be answered (names a file of it, or its code)."""
    if _WORKSPACE_WORDS.search(task):
        return True
    return any(_names(task, path) for path in files)


def _names(task: str, path: str) -> bool:
    """Whether ``task`` names ``path``: the whole path, or its file name standing alone."""
    if re.search(r"(?<![\w/.-])" + re.escape(path) + r"(?![\w-])", task) is not None:
        return True
    base = os.path.basename(path)
    return len(base) > 2 and re.search(r"(?<![\w/.-])" + re.escape(base) + r"(?![\w-])", task) is not None


def second_chance(task: str, answer: str, facts: TurnFacts, tools: Sequence[str]) -> str | None:
    """The message that gives a final ``answer`` to ``task`` one more go, or None to accept it.
    Each kind of second chance is given once: the same words twice do not help a model."""
    if len(facts.nudged) >= MAX_NUDGES or not tools or facts.denied:
        return None
    kind, text = _missing(task, answer, facts, tools)
    if kind is None and not answer.strip() and facts.ran and not wants_change(task):
        kind, text = "empty answer", "Your answer was empty. Answer the question now, from what the tools showed."
    if kind is None or kind in facts.nudged:
        return None
    facts.nudged.append(kind)
    return text


def must_call(task: str, facts: TurnFacts, tools: Sequence[str]) -> tuple[str, ...] | None:
    """The tools the next answer must call one of, or None for a free answer. While the task
    still lacks what a second chance would ask for, a small model's answer is constrained to
    a call (``call_schema``) instead of being let through and asked again — and to the tools
    that supply what is missing: a run or a check after a change is a ``bash`` call, a change
    after ``FORCED_LOOKS`` looks is a ``write`` or ``edit`` (a small model re-reads and re-runs
    what it has seen). Never after a denial (the model may say the user refused), at most
    ``MAX_FORCED`` requests a task."""
    if not tools or facts.denied or facts.forced >= MAX_FORCED:
        return None
    kind, _ = _missing(task, "", facts, tools)
    if kind is None:
        return None
    wanted: Sequence[str] = tools
    fix = change_paths(task, facts) is not None
    # a fix for red tests is a change of lines (``edit_choices``): a small model's whole-file
    # writes of it broke the file's quoting, or rewrote its docstring
    changers = ("edit",) if fix else tuple(CHANGERS)
    if kind == "not verified" and facts.renaming:
        wanted = ("edit",)  # the rename is not done: its other uses first (a run now fails on them)
    elif kind in ("not run", "not verified"):
        wanted = ("bash",)
    elif kind == "no change" and fix and not any(name == "bash" for name, _ in facts.ran):
        wanted = ("bash",)  # the tests' run first: what fails is what the fix is asked for (``fix_request``)
    elif kind == "no change" and facts.forced >= FORCED_LOOKS:
        wanted = changers
    elif kind == "no change" and facts.seen_all:  # nothing left to look at; a run may still show what fails
        wanted = (*changers, "bash")
    elif kind == "check failed" and fix:
        wanted = changers  # the tests are still red: the code must change, not be re-run
    elif kind in ("test not written", "not added", "not removed"):
        wanted = tuple(CHANGERS)
    elif kind == "not looked":
        wanted = [name for name in tools if name not in CHANGERS]
    chosen = tuple(name for name in tools if name in wanted)
    # a tool whose call failed the same way twice is left out while another can do the job: a
    # small model resends its refused write word for word, under the schema too
    repeated = {key[0] for key, count in facts.failed.items() if count >= 2 or _rewrote(key, facts.files)}
    return tuple(name for name in chosen if name not in repeated) or chosen or None


_PATH_WORD = re.compile(r"(?<![\w/.-])([\w.-]+(?:/[\w.-]+)*\.(?:py|js|ts|json|toml|yaml|yml|md|txt|cfg|ini|sh|html|css))\b")


def done_report(task: str, facts: TurnFacts, tools: Sequence[str]) -> str | None:
    """The report of a change task that is done — its change checked at once and green, nothing
    missing, every file the task names changed (the tests of a fix aside) — or None to let the
    model report. With the 1.5B model that last request (≈ 4–20 s on 2 cores) only restated
    the check, looped, or answered with a broken call; this says what happened, from the
    records: the files changed and the check with its last line."""
    if facts.checked is None or not wants_change(task) or facts.denied or _missing(task, "", facts, tools)[0]:
        return None
    fix = change_paths(task, facts) is not None
    named = [path for path in dict.fromkeys([*_PATH_WORD.findall(task), *(p for p in facts.files if _names(task, p))])
             if not (fix and _is_test(path))]
    if any(path not in facts.written for path in named) or not facts.written:
        return None
    changed = list(dict.fromkeys(facts.written))
    created = [path for path in changed if path not in facts.files]
    edited = [path for path in changed if path in facts.files]
    parts = ([f"Created {_listed(created)}"] if created else []) + ([f"edited {_listed(edited)}"] if edited else [])
    command, output = facts.checked
    lines = [line for line in _printed_lines(output) if line != "(no output)"]
    # one short line, or a test run's summary, says what the check showed; a parsed data file
    # printed back whole ("}" as its last line) says only that it passed
    shown = lines[-1] if lines and len(lines[-1]) <= 120 and (len(lines) == 1 or _TESTS_PASSED.search(lines[-1])) else ""
    said = f"; `{command}` printed: {shown}" if shown else f"; `{command}` passed"
    what = " and ".join(parts)
    report = what[0].upper() + what[1:] + said
    return report if report.endswith((".", "!", "?")) else report + "."


_TESTS_PASSED = re.compile(r"\b\d+ passed\b|^OK\b")


def _listed(paths: Sequence[str]) -> str:
    return paths[0] if len(paths) == 1 else ", ".join(paths[:-1]) + " and " + paths[-1]


def _rewrote(key: tuple[str, str, str], files: Sequence[str]) -> bool:
    """Whether a failed call was a ``write`` over a file of the workspace: the forced choice is
    then an edit of its lines (the model re-sent the refused fragment of ``package.json`` as
    its whole content; an edit, held to the file's own lines, cannot break it that way)."""
    from minicode.tools.arguments import parse_arguments

    args = parse_arguments(key[0], key[1]) if key[0] == "write" else None
    path = args.get("path") if isinstance(args, dict) else None
    return isinstance(path, str) and path in files


def change_paths(task: str, facts: TurnFacts) -> list[str] | None:
    """The files a forced change may name, or None for any: for a task to make failing tests
    pass, the workspace's files that are not tests (``test_guard`` refuses the rest, and a
    small model resends its refused test edit until the task stops)."""
    if not (_MENTIONS_TESTS.search(task) and _FIX_WORDS.search(task)) or _CHANGES_TESTS.search(task):
        return None
    code = [path for path in facts.files if not _is_test(path) and not path.endswith(("__init__.py", ".md", ".txt"))]
    return code or None


_RENAME = re.compile(r"\brenam\w*\b", re.IGNORECASE)


def wants_rename(task: str) -> bool:
    """Whether ``task`` renames something: then a forced edit may also take a bare name (with
    ``replace_all``); otherwise a small model picks a short name over the line it means."""
    return _RENAME.search(task) is not None


EDIT_FILES_MAX = 8


def edit_files(task: str, facts: TurnFacts) -> list[str]:
    """The files a forced edit may change: those a fix may name (``change_paths``), else the
    ones shown with the task, else the workspace's (at most ``EDIT_FILES_MAX``)."""
    return (change_paths(task, facts) or facts.shown or facts.files)[:EDIT_FILES_MAX]


def _missing(task: str, answer: str, facts: TurnFacts, tools: Sequence[str]) -> tuple[str | None, str]:
    from minicode.agent.task_names import not_added, not_removed

    if facts.cut and answer:
        facts.cut = False
        return "cut off", ("Your last answer was cut off: it went on and on, line after line of the same kind, so "
                           "nothing ran. Send it again, short — a few lines are enough (three or four test cases, "
                           "not every one).")  # fmt: skip
    unknown = _unknown_call(answer, tools)
    if unknown is not None:
        return "unknown tool", (f"There is no tool named {unknown!r}, and a call written as text does nothing. "
                                f"The tools are: {', '.join(tools)}. Call one of them to do the task.")  # fmt: skip
    if _declared_call(answer, tools):
        return "unrun call", ("That answer is a tool call written as text with other text around it, so nothing ran. "
                              "Send the call alone — or, if what the tools showed already answers the task, answer "
                              "it now in plain words.")  # fmt: skip
    if wants_change(task):
        if not facts.changed():
            return "no change", _make_it_now(task, answer, facts.shown)
        if not facts.verified_after_change() and "bash" in tools:
            return "not verified", ("You changed files but ran nothing since. Check the change now with bash (run the "
                                    "tests or the program), fix what fails, then report.")  # fmt: skip
        if facts.check_failed():
            return "check failed", ("The last check after your change failed. Read its output, fix what it shows "
                                    "(in the code, not the check), then run the check again.")  # fmt: skip
        if (name := not_removed(task, facts.defined)) is not None:
            return "not removed", (f"The task asks to delete {name}, and a file you changed still defines it. "
                                   "Delete it now: an edit of its whole definition with an empty new_text.")  # fmt: skip
        if (name := not_added(task, facts.written, facts.defined)) is not None:
            return "not added", (f"The task asks to add {name}(), and no file you changed defines it yet. Add it "
                                 "now, with the rest of the file kept.")  # fmt: skip
        if (test := test_not_written(task, facts)) is not None:
            return "test not written", (f"The task also asks for a test in {test}, and it is not written yet. Write "
                                        "it now (import what it tests, keep the tests already there), then run "
                                        "it.")  # fmt: skip
        return None, ""
    if (_RUN.search(task) and "bash" in tools and not any(name == "bash" for name, _ in facts.ran)
            and about_workspace(task, facts.shown)):
        return "not run", ("You answered without running anything: the question is about what the program does "
                           "when it runs. Run it now with bash, then answer from its output.")  # fmt: skip
    if _RUN.search(task) and not wants_change(task) and answer.strip():
        printed = _printed_values(facts.output)
        if printed and not any(value in answer for value in printed):
            output = "\n".join(_printed_lines(facts.output))
            return "not answered", (f"Your answer does not give what the run showed. It printed:\n{output}\n"
                                    "Answer the question with that.")  # fmt: skip
    if not facts.ran and not facts.shown and about_workspace(task):
        return "not looked", ("You answered without reading or running anything. Look first: read the file(s) the "
                              "question is about, or run the program with bash, then answer from what you saw.")  # fmt: skip
    return None, ""


_VALUE = re.compile(r"(?<![\w.])[\w.-]*\d[\w.-]*(?![\w.])")
_NOTE_LINE = re.compile(r"^\[(?:exit code|You sent|You made|No test ran|[\w.-]+ is in the workspace)")


def test_not_written(task: str, facts: TurnFacts) -> str | None:
    """The test file a task that asks for tests names that is not written yet, or does not use
    the function the task adds (``task_names.test_missing``): asked to add a method "and a test
    for it in inventory/test_store.py", the 1.5B model added the method, saw the old tests pass
    and reported done — or rewrote the test file with only its old test."""
    from minicode.agent.task_names import test_missing

    if not _CHANGES_TESTS.search(task):
        return None
    return test_missing(task, facts.written, facts.defined, facts.used)


def _printed_lines(result: str) -> list[str]:
    """A bash result's output lines, without the exit line and the notes the tools add."""
    return [line for line in result.splitlines() if line.strip() and not _NOTE_LINE.match(line)][:20]


def _printed_values(result: str) -> list[str]:
    """The numbers and other values with a digit (a checksum, a version) in a short output,
    or none: "what does it print" is answered with one of them (a small model ran count.py,
    got 2487 and answered "Files changed, verified"). A long output is not a value to repeat."""
    lines = _printed_lines(result)
    if not lines or len(lines) > 5 or sum(len(line) for line in lines) > 300:
        return []
    return [value.strip(".-") for line in lines for value in _VALUE.findall(line) if value.strip(".-")]


def _make_it_now(task: str, answer: str, shown: Sequence[str]) -> str:
    """The "no change" second chance, with the call to make spelled out for the file meant: a
    small model that was just told "make the change" repeats its advice word for word, but one
    shown the call's shape writes the call (measured on the live bench)."""
    target = target_file(task, answer, shown)
    head = "Nothing in the workspace has changed yet: showing or describing a change does not make it. "
    if target is None:
        return head + ("Make the change now with one tool call: write with a file's complete new content, or edit "
                       "with old_text copied exactly from the file.")  # fmt: skip
    example = json.dumps({"name": "write", "arguments": {"path": target, "content": PLACEHOLDER}})
    return head + (f"Make it now with one tool call — for {target}, the whole file with your change:\n{example}\n"
                   "(or edit with old_text copied exactly from the file).")  # fmt: skip


def target_file(task: str, answer: str, shown: Sequence[str]) -> str | None:
    """The file a change is most likely meant for: one the answer names, else one the task
    names, else the only one shown; code before its tests unless the task is about tests."""
    named = [path for path in shown if _names(answer, path)] or [path for path in shown if _names(task, path)]
    named = named or (list(shown) if len(shown) == 1 else [])
    if not named:
        return None
    if not re.search(r"\b(?:add|write|edit|change|update)\s+(?:a\s+|the\s+)?tests?\b", task, re.IGNORECASE):
        # the code before its tests: a test named alone means the module it tests (test_slug.py: slug.py)
        code = [path for path in named if not _is_test(path)]
        tested = [path for path in shown if not _is_test(path) and any(_tests(test, path) for test in named)]
        named = code or tested or named
    return named[0]


_MENTIONS_TESTS = re.compile(r"\btests?\b|\btest_\w+\.py\b|\w_test\.py\b|\bpytest\b", re.IGNORECASE)
_FIX_WORDS = re.compile(r"\b(?:fix|bug|fail|failing|fails|failed|pass|passes|red|broken)\b", re.IGNORECASE)
_CHANGES_TESTS = re.compile(r"\b(?:add|write|edit|change|update|fix|rename|create|extend|remove|delete)\s+"
                            r"(?:a\s+|an\s+|the\s+|new\s+|more\s+)*(?:unit\s+)?tests?\b|\btest\s+for\b"
                            r"|\bin\s+(?:the\s+)?tests?\b", re.IGNORECASE)


def check_hint(command: str) -> str:
    """The line a change's result ends with, naming the command that checks it (``check_command``).
    The bracket holds the command alone: the model copies all of it ("(or run what the task asks
    for)" became part of its command)."""
    return f"\n[Check it now with bash: {command}]"


def check_command(path: str, files: Sequence[str], python: str = "python") -> str:
    """A command that checks a change of ``path``: a test written or changed run, the workspace's
    tests when it has some, else the changed program or module run, or the data file parsed;
    "" for other files. Left to itself a small model echoed the change's own result back through
    bash, or ran ``npm install`` for a ``package.json`` edit."""
    if _is_test(path) and path.endswith(".py"):  # the brief may list no test: this one is new
        return f"{python} -m pytest -q {shlex.quote(path)}"
    if (command := test_command(files, python)) and path.endswith(".py"):
        return command
    quoted = shlex.quote(path)
    if path.endswith(".py"):
        package = os.path.dirname(path)
        if package and f"{package}/__init__.py" in files:
            return f'{python} -c "import {path.removesuffix(".py").replace("/", ".")}"'
        return f"{python} {quoted}"
    if path.endswith(".json"):
        return f"{python} -m json.tool {quoted}"
    if path.endswith(".toml"):
        return f"{python} -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], \"rb\")))' {quoted}"
    return ""


def python_name(env: Mapping[str, str]) -> str:
    """The Python the commands the assists name should run: ``python`` where the tools' PATH has
    it, else ``python3`` (Debian and macOS have only that), else ``python``. Blocking (a PATH walk)."""
    import shutil

    return next((name for name in ("python", "python3") if shutil.which(name, path=env.get("PATH"))), "python")


def test_command(files: Sequence[str], python: str = "python") -> str:
    """The command that runs the workspace's tests (pytest on the folder holding them all), or ""."""
    tests = sorted({os.path.dirname(test) for test in files if _is_test(test)})
    if not tests:
        return ""
    top = os.path.commonpath(tests) if all(tests) else ""
    return f"{python} -m pytest -q{' ' + shlex.quote(top) if top else ''}"


def placeholder_write(tool: str, args: Mapping[str, object]) -> str | None:
    """A refusal for a write whose content is the second chance's placeholder, copied as is."""
    content = args.get("content")
    if tool == "write" and isinstance(content, str) and content.strip() == PLACEHOLDER:
        return (f"{PLACEHOLDER} was the example's placeholder: write the file's real new content (all of it, "
                "with your change made).")
    return None


def test_guard(task: str, tool: str, path: str) -> str | None:
    """A refusal for ``write``/``edit`` of a test file when ``task`` is to fix what the tests
    show (it names tests and a fix, a bug or a failure, and does not ask for tests to be
    changed): a small model "fixes" a red test by changing what it asserts. None: go on."""
    if tool not in CHANGERS or not path or not _is_test(path):
        return None
    if not (_MENTIONS_TESTS.search(task) and _FIX_WORDS.search(task)) or _CHANGES_TESTS.search(task):
        return None
    return (f"{path} is a test: the task is to make the tests pass by fixing the code they test, so the tests "
            "stay as they are. Change the code under test instead (the file the test imports).")


def _is_test(path: str) -> bool:
    base = os.path.basename(path)
    return base.startswith("test_") or base.endswith(("_test.py", ".test.js", ".spec.js", ".test.ts")) or (
        "/tests/" in f"/{path}")


def _declared_call(answer: str, tools: Sequence[str]) -> bool:
    """Whether ``answer`` (a final one: no call was recovered from it) holds a call-shaped JSON
    object naming a declared tool — a call the model meant, broken by what surrounds it."""
    return _CALL_ARGS.search(answer) is not None and any(m.group(1) in tools for m in _CALL_NAME.finditer(answer))


def _unknown_call(answer: str, tools: Sequence[str]) -> str | None:
    """The tool name of a call-shaped JSON object in ``answer`` that names no declared tool."""
    if not _CALL_ARGS.search(answer):
        return None
    for match in _CALL_NAME.finditer(answer):
        if match.group(1) not in tools:
            return match.group(1)
    return None


def workspace_brief(workspace: Path, limit: int = BRIEF_MAX_FILES, files: Sequence[str] | None = None) -> str:
    """The workspace's file list as a block for the task message (skips VCS, caches, envs)."""
    files = list_files(workspace, limit + 1) if files is None else files
    if not files:
        return "<workspace>\nThe workspace is empty.\n</workspace>"
    shown = files[:limit]
    more = "" if len(files) <= limit else "\n… and more (use ls or glob)"
    return "<workspace>\nFiles in the workspace (paths relative to it):\n" + "\n".join(shown) + more + "\n</workspace>"


def files_to_show(task: str, files: Sequence[str]) -> list[str]:
    """The files whose content comes with the task (read for the model, as ``read`` would):
    those the task names, else — in a workspace of at most ``TINY_WORKSPACE`` files — all of
    them; at most ``BRIEF_MAX_SHOWN``. A small model that sees the code changes the right
    lines; one that has to go and read often invents the file instead."""
    named = [path for path in files if _names(task, path) or path in task]
    if len(files) <= TINY_WORKSPACE:
        named += [path for path in files if path not in named]
    else:  # a test the task names comes with the code it tests: "fix the bug test_slug.py shows"
        named += [path for path in files if path not in named and any(_is_test(t) and _tests(t, path) for t in named)]
    return named[:BRIEF_MAX_SHOWN]


def _tests(test: str, path: str) -> bool:
    """Whether ``path`` is the module a test file is named for (test_slug.py, slug_test.py: slug.py)."""
    base = os.path.basename(test)
    stem = base[5:] if base.startswith("test_") else base.removesuffix("_test.py") + ".py"
    return os.path.basename(path) == stem and not _is_test(path)


def list_files(workspace: Path, limit: int) -> list[str]:
    """Up to ``limit`` of the workspace's own files (``tools.fswalk.project_files``). Blocking;
    an unreadable workspace gives an empty list (the brief then says nothing is there)."""
    from minicode.errors import MinicodeError
    from minicode.tools.fswalk import project_files

    try:
        return list(islice(project_files(workspace), limit))
    except (OSError, MinicodeError):
        return []
