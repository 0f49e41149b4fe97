"""Command-line parsing (SPEC 1) into a frozen `Options` value.

The common command lines — TASK words with `-y`, `-c`, `--session`, `--model`, `--think`,
`-C`, `--config`, `--max-turns`, `--timeout`, `--allow`, `--deny`, `--check`, `--output`
spelled out in full (`--model M` or `--model=M`) — are read by `_quick_fields` without
building the argparse parser: importing argparse, building the parser and its intermixed
parse cost ~20 M instructions of every start, on the path to the first request and the
first full-screen frame. Anything else — an abbreviation (`--mod`), grouped short flags
(`-yc`), a value that starts with `-`, `-h`, `--version`, the setup and session commands,
and every command line that is an error — goes to argparse, which prints the usage and
the error and raises SystemExit(2); `main()` turns that into the exit code. The two agree
on every command line the quick path accepts (`tests/cli/test_args_quick.py` compares them
over thousands). argparse itself is imported only when it is needed.
"""

from __future__ import annotations

from minicode import __version__
from minicode.cli.options import DEFAULT_MAX_TURNS, OUTPUT_FORMATS, THINK_LEVELS, Options

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, Callable, NoReturn, Sequence

__all__ = ["DEFAULT_MAX_TURNS", "OUTPUT_FORMATS", "THINK_LEVELS", "Options", "build_parser", "parse_args",
           "parse_with_argparse"]


def _type_error(message: str) -> Exception:
    import argparse

    return argparse.ArgumentTypeError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _type_error(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise _type_error(f"must be at least 1, got {value}")
    return value


def _positive_seconds(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise _type_error(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise _type_error(f"must be a positive number of seconds, got {text!r}")
    return value


_OTHER_AGENTS = {
    ("-p", "--print", "--prompt"): "a TASK given as words runs once and prints the answer: minicode \"fix the bug\"",
    ("-r", "--resume"): "--session ID resumes a session (any unique start of it), "
                                               "-c the latest; --sessions lists them",
    ("--dangerously-skip-permissions", "--full-auto", "--yolo", "--dangerously-bypass-approvals-and-sandbox",
     "--auto-approve"): "--yes approves every call (deny rules still deny); --allow RULE approves some",
    ("-m",): "--model NAME",
}
"""Options of other coding agents a new user types out of habit, and minicode's way to say it."""


def _other_agents_hint(message: str) -> str:
    """" (minicode: …)" when argparse refused an option another agent has, else ""."""
    if not message.startswith("unrecognized arguments: "):
        return ""
    for word in message.removeprefix("unrecognized arguments: ").split():
        for names, hint in _OTHER_AGENTS.items():
            if word.split("=", 1)[0] in names:
                return f" (in minicode: {hint})"
    return ""


def build_parser(columns: int | None = None) -> argparse.ArgumentParser:
    """The parser; ``columns`` is the terminal width to format for, when the caller knows it
    (``cli.quick.terminal_columns``): else argparse asks ``shutil``, which imports lzma and bz2
    (~10 ms of every start, as the usage line is formatted on every parse)."""
    import argparse
    from pathlib import Path

    formatter: type[argparse.HelpFormatter] | Callable[[str], argparse.HelpFormatter] = (
        argparse.RawDescriptionHelpFormatter if columns is None
        else lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=columns - 2))  # argparse's own - 2
    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            super().error(message + _other_agents_hint(message))

    p = Parser(
        prog="minicode",
        description="A terminal coding agent for any OpenAI-compatible endpoint.",
        formatter_class=formatter,  # type: ignore[arg-type]
        epilog=(
            "modes:\n"
            "  no TASK, in a terminal         interactive full-screen session\n"
            "  TASK                           one-shot: run TASK, print the answer, exit\n"
            "  no TASK, otherwise             pipe: every stdin line is one task\n"
            "  TASK, stdin a pipe             one-shot with the piped text attached\n"
            "                                 (git diff | minicode \"review this\")\n"
            "config: --config PATH, else <workspace>/config/config.toml, else\n"
            "  ~/.config/minicode/config.toml ($XDG_CONFIG_HOME); create one with --init [--user]\n"
            "exit codes: 0 ok, 1 runtime failure, 2 usage/config error, 130 interrupted"
        ),
    )
    p.add_argument("task", nargs="*", metavar="TASK", help="the task to run once (one-shot mode)")
    resume = p.add_mutually_exclusive_group()
    resume.add_argument(
        "--session", metavar="ID",
        help="resume session ID (or any unique start of it) of this workspace; alone it just opens the session",
    )
    resume.add_argument(
        "-c", "--continue", dest="continue_session", action="store_true",
        help="resume the most recently updated session of this workspace",
    )
    sessions = p.add_argument_group("sessions")
    sessions.add_argument(
        "--sessions", dest="list_sessions", action="store_true",
        help="list this workspace's sessions (newest first) and exit",
    )
    sessions.add_argument(
        "--export", metavar="ID", help="write session ID (or a unique start of it) as Markdown to stdout and exit",
    )
    p.add_argument("-y", "--yes", action="store_true",
                   help="approve every side-effect tool call (deny rules still deny)")
    p.add_argument(
        "--allow", action="append", default=[], metavar="RULE",
        help="allow calls matching RULE for this run without asking, e.g. 'bash(pytest *)', "
        "'edit(src/**)' (repeatable; rule syntax: docs/config.md)",
    )
    p.add_argument(
        "--deny", action="append", default=[], metavar="RULE",
        help="deny calls matching RULE for this run, e.g. 'bash(git push *)' (repeatable; wins over allow)",
    )
    p.add_argument(
        "--max-turns", type=_positive_int, default=DEFAULT_MAX_TURNS, metavar="N",
        help=f"model requests that may call tools, per task (default {DEFAULT_MAX_TURNS})",
    )
    p.add_argument(
        "--timeout", type=_positive_seconds, metavar="SECONDS",
        help="wall-clock limit per task, approvals included (default: none)",
    )
    p.add_argument(
        "--model", metavar="NAME", help="override model.name for this run; with --init: the model to write",
    )
    p.add_argument("--think", choices=THINK_LEVELS, metavar="LEVEL", help="|".join(THINK_LEVELS))
    p.add_argument(
        "--check", dest="checks", action="append", default=[], metavar="CMD",
        help="acceptance check (repeatable): a shell command run when the model says it is done; "
        "a failure goes back to the model (at most twice), then the task fails",
    )
    p.add_argument(
        "--output", choices=OUTPUT_FORMATS, default="text", metavar="FORMAT",
        help="pipe/one-shot output: text (default: the answer on stdout), json (JSON Lines events, "
        "docs/events.md; approvals need --yes or a rule), stream-json (json plus text deltas)",
    )
    p.add_argument("--config", type=Path, metavar="PATH", help="use this config file")
    p.add_argument("-C", dest="directory", type=Path, metavar="DIR", help="run as if started in DIR")
    p.add_argument("--version", action="version", version=f"minicode {__version__}")
    p.add_argument(
        "--doctor", action="store_true",
        help="check the configured endpoint (reachability, key, model, streaming, tool calls, "
        "parameters, context window) and exit; sends a few small requests",
    )
    p.add_argument("--json", action="store_true", help="with --doctor: print the report as one JSON object")
    setup = p.add_argument_group("first-time setup")
    setup.add_argument(
        "--init", action="store_true",
        help="write a starter config/config.toml in the workspace (asks for what is missing)",
    )
    setup.add_argument(
        "--user", action="store_true",
        help="with --init: write the per-user ~/.config/minicode/config.toml instead, found in every project",
    )
    setup.add_argument("--base-url", metavar="URL", help="with --init: the endpoint base URL")
    setup.add_argument(
        "--api-key-env", metavar="VAR",
        help="with --init: the environment variable holding the API key "
        "(a key itself is asked for, never taken on the command line)",
    )
    return p


def _split_at_double_dash(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the arguments before the first `--`, the words after it)."""
    if "--" not in argv:
        return argv, []
    at = argv.index("--")
    return argv[:at], argv[at + 1 :]


def parse_args(argv: Sequence[str], columns: int | None = None) -> Options:
    """Parse argv (without the program name). Raises SystemExit(2) on usage errors.
    ``columns``: the terminal width for usage and errors (see ``build_parser``)."""
    options, rest = _split_at_double_dash(list(argv))
    fields = _quick_fields(options)
    if fields is not None:
        try:
            return _finish(fields, rest, _not_quick)
        except _NotQuick:  # a combination argparse reports
            pass
    return parse_with_argparse(argv, columns)


def parse_with_argparse(argv: Sequence[str], columns: int | None = None) -> Options:
    """``parse_args`` with argparse alone (what the quick path must agree with)."""
    parser = build_parser(columns)
    options, rest = _split_at_double_dash(list(argv))
    # Intermixed, so `minicode fix the bug --yes` works like `minicode --yes fix the bug`.
    # Everything after `--` is TASK words, verbatim (argparse's intermixed parsing mishandles
    # `--`, so it never sees it): `minicode -- -x` runs the task "-x".
    return _finish(vars(parser.parse_intermixed_args(options)), rest, parser.error)


_FLAGS = {"-y": "yes", "--yes": "yes", "-c": "continue_session", "--continue": "continue_session"}
_VALUES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "--session": ("session", str), "--model": ("model", str), "--config": ("config", lambda text: _path(text)),
    "-C": ("directory", lambda text: _path(text)), "--max-turns": ("max_turns", _positive_int),
    "--timeout": ("timeout", _positive_seconds), "--think": ("think", lambda text: _choice(text, THINK_LEVELS)),
    "--output": ("output", lambda text: _choice(text, OUTPUT_FORMATS)),
}
_REPEATED = {"--allow": "allow", "--deny": "deny", "--check": "checks"}
_DEFAULTS: dict[str, Any] = {
    "task": [], "session": None, "continue_session": False, "list_sessions": False, "export": None, "yes": False,
    "allow": [], "deny": [], "max_turns": DEFAULT_MAX_TURNS, "timeout": None, "model": None, "think": None,
    "checks": [], "output": "text", "config": None, "directory": None, "doctor": False, "json": False,
    "init": False, "user": False, "base_url": None, "api_key_env": None,
}
"""argparse's namespace for an empty command line (``build_parser``'s defaults)."""


class _NotQuick(Exception):
    """The quick path does not decide this command line: argparse does."""


def _not_quick(message: str) -> NoReturn:
    raise _NotQuick(message)


def _quick_fields(argv: list[str]) -> dict[str, Any] | None:
    """argparse's namespace for a common command line (see the module doc), or None."""
    fields = {name: list(value) if isinstance(value, list) else value for name, value in _DEFAULTS.items()}
    at = 0
    while at < len(argv):
        arg = argv[at]
        at += 1
        if not arg.startswith("-"):
            fields["task"].append(arg)
            continue
        name, equals, value = arg.partition("=")
        if name in _FLAGS and not equals:
            fields[_FLAGS[name]] = True
            continue
        if name not in _VALUES and name not in _REPEATED or equals and not name.startswith("--"):
            return None
        if not equals:
            if at >= len(argv) or argv[at].startswith("-"):
                return None  # no value, or one argparse might take for an option: it decides
            value = argv[at]
            at += 1
        if name in _REPEATED:
            fields[_REPEATED[name]].append(value)
            continue
        dest, convert = _VALUES[name]
        try:
            fields[dest] = convert(value)
        except Exception:  # noqa: BLE001 - an invalid value: argparse says which and why
            return None
    if fields["session"] is not None and fields["continue_session"]:
        return None  # argparse: not allowed with each other
    return fields


def _path(text: str) -> object:
    from pathlib import Path

    return Path(text)


def _choice(text: str, choices: tuple[str, ...]) -> str:
    if text not in choices:
        raise ValueError(text)
    return text


def _session_command(task: str) -> str | None:
    """Why a one-shot TASK that is a session command (``minicode /undo``) is refused, or None:
    sent as a task, the model would act on "/undo" as it sees fit (with --yes, unasked)."""
    if not task.lstrip().startswith("/"):
        return None
    from minicode.cli.first_task import FULL_SCREEN_ONLY, KNOWN, is_command  # only for a TASK starting with "/"
    from minicode.cli.near_miss import nearest

    text = " ".join(task.split())
    word = text.split(" ", 1)[0]
    name = word if word in (*KNOWN, *FULL_SCREEN_ONLY) else nearest(word, (*KNOWN, *FULL_SCREEN_ONLY))
    if name is None or (name in KNOWN and not is_command(text) and word == name):
        return None
    where = "in the full screen (minicode -c continues the last session)" if name in FULL_SCREEN_ONLY else \
        f"in the full screen (minicode -c continues the last session) or in pipe mode (echo {name} | minicode -c)"
    looks = "is a session command" if word == name else f"looks like the session command {name}"
    return (f"the TASK {word} {looks}, not a task: one-shot mode would send it to the model as text. "
            f"Run it {where}; to send the text to the model, put it after --: minicode -- {word} …")


def _finish(ns: dict[str, Any], rest: list[str], error: Callable[[str], NoReturn]) -> Options:
    """The checks across options, then the value; ``error`` reports a bad combination."""
    task = [*ns["task"], *rest]
    if task and not " ".join(task).strip():
        # `minicode "$TASK"` with TASK unset: not "no TASK" (pipe mode would make every
        # piped line a task of its own)
        error("the TASK is empty: give it as words, or leave it out (full screen in a terminal,"
              " else every stdin line is a task)")
    if ns["task"] and (said := _session_command(" ".join(ns["task"]))):
        error(said)
    if ns["init"] and task:
        error("--init takes no TASK")
    if not ns["init"] and (ns["base_url"] is not None or ns["api_key_env"] is not None or ns["user"]):
        error("--base-url, --api-key-env and --user only go with --init")
    if (ns["list_sessions"] or ns["export"] is not None) and (
        task or ns["init"] or ns["session"] or ns["continue_session"] or ns["doctor"] or ns["checks"]
    ):
        error("--sessions and --export take no TASK, --init, --session, --continue, --doctor or --check")
    if ns["list_sessions"] and ns["export"] is not None:
        error("use either --sessions or --export")
    if ns["model"] is not None and not ns["model"].strip():
        error("argument --model: must not be empty")
    if any(not c.strip() for c in ns["checks"]):
        error("argument --check: must not be empty")
    if ns["json"] and not ns["doctor"]:
        error("--json only goes with --doctor")
    if ns["output"] != "text" and (ns["init"] or ns["doctor"] or ns["list_sessions"] or ns["export"] is not None):
        error("--output goes with tasks, not with --init, --doctor, --sessions or --export")
    if ns["doctor"] and (task or ns["init"] or ns["session"] or ns["continue_session"]):
        error("--doctor takes no TASK, --init, --session or --continue")
    return Options(
        task=tuple(task),
        session=ns["session"],
        continue_session=ns["continue_session"],
        yes=ns["yes"],
        allow=tuple(ns["allow"]),
        deny=tuple(ns["deny"]),
        max_turns=ns["max_turns"],
        timeout=ns["timeout"],
        model=ns["model"],
        think=ns["think"],
        config=ns["config"],
        directory=ns["directory"],
        init=ns["init"],
        user=ns["user"],
        base_url=ns["base_url"],
        api_key_env=ns["api_key_env"],
        checks=tuple(c.strip() for c in ns["checks"]),
        doctor=ns["doctor"],
        json=ns["json"],
        list_sessions=ns["list_sessions"],
        export=ns["export"],
        output=ns["output"],
    )
