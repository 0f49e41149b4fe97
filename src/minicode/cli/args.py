"""Command-line parsing (SPEC 1) into a frozen `Options` value.

argparse parses every command line, `--help` and `--version` included; on a usage error it
prints the usage and the error and raises SystemExit(2), which `main()` turns into the exit
code. The checks across options (`_finish`) come after it.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, NoReturn

from minicode import __version__
from minicode.cli.options import DEFAULT_MAX_TURNS, OUTPUT_FORMATS, THINK_LEVELS, Options

__all__ = ["DEFAULT_MAX_TURNS", "OUTPUT_FORMATS", "THINK_LEVELS", "Options", "build_parser", "parse_args"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
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


def build_parser() -> argparse.ArgumentParser:
    """The parser (argparse formats for the terminal's width, ``$COLUMNS`` first)."""

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            super().error(message + _other_agents_hint(message))

    p = Parser(
        prog="minicode",
        description="A terminal coding agent for any OpenAI-compatible endpoint.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        "--plan", action="store_true",
        help="plan first: read-only tools, the model proposes a task list; one-shot mode prints it and "
        "exits without acting (with --yes: accepts it and acts on it)",
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
    mcp = p.add_argument_group("MCP servers (docs/mcp.md)")
    mcp.add_argument("--mcp-config", type=Path, metavar="PATH",
                     help="a TOML file of [mcp.servers.NAME] tables for this run (same name: this file's)")
    mcp.add_argument("--mcp", action="store_true", help="connect to the MCP servers, list them and their tools, exit")
    mcp.add_argument("--mcp-login", metavar="NAME",
                     help="sign in to the remote MCP server NAME (OAuth, in a browser), list its tools, exit")
    p.add_argument("--acp", action="store_true",
                   help="run as an Agent Client Protocol agent for an editor (JSON-RPC on stdin/stdout; docs/acp.md)")
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


def parse_args(argv: Sequence[str]) -> Options:
    """Parse argv (without the program name). Raises SystemExit(2) on usage errors, SystemExit(0)
    after ``--help`` and ``--version``."""
    parser = build_parser()
    options, rest = _split_at_double_dash(list(argv))
    # Intermixed, so `minicode fix the bug --yes` works like `minicode --yes fix the bug`.
    # Everything after `--` is TASK words, verbatim (argparse's intermixed parsing mishandles
    # `--`, so it never sees it): `minicode -- -x` runs the task "-x".
    return _finish(vars(parser.parse_intermixed_args(options)), rest, parser.error)


def _session_command(task: str) -> str | None:
    """Why a one-shot TASK that is a session command (``minicode /undo``) is refused, or None:
    sent as a task, the model would act on "/undo" as it sees fit (with --yes, unasked)."""
    if not task.lstrip().startswith("/"):
        return None
    from minicode.cli.frontends.plain.first_task import FULL_SCREEN_ONLY, KNOWN, is_command  # only for a TASK starting with "/"
    from minicode.cli.frontends.shared.near_miss import nearest

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
    for flag, given in (("--mcp", ns["mcp"]), ("--mcp-login", ns["mcp_login"] is not None)):
        if given and (task or ns["init"] or ns["doctor"] or ns["output"] != "text" or ns["session"]
                      or ns["continue_session"] or ns["list_sessions"] or ns["export"] is not None):
            error(f"{flag} takes no TASK, --init, --doctor, --output, --session, --continue, --sessions or --export")
    if ns["mcp"] and ns["mcp_login"] is not None:
        error("--mcp and --mcp-login go one at a time")
    if ns["acp"] and (task or ns["init"] or ns["doctor"] or ns["output"] != "text" or ns["session"]
                      or ns["continue_session"] or ns["list_sessions"] or ns["export"] is not None or ns["mcp"]
                      or ns["mcp_login"] is not None):
        error("--acp takes no TASK, --init, --doctor, --output, --session, --continue, --sessions, --export, "
              "--mcp or --mcp-login (the editor opens and loads the sessions)")
    if ns["plan"] and (ns["init"] or ns["doctor"] or ns["list_sessions"] or ns["export"] is not None or ns["mcp"]
                       or ns["mcp_login"] is not None or ns["acp"]):
        error("--plan goes with tasks, not with --init, --doctor, --sessions, --export, --mcp, --mcp-login "
              "or --acp (there the editor sets the mode)")
    given = {f.name: ns[f.name] for f in fields(Options) if f.name not in ("task", "allow", "deny", "checks")}
    return Options(task=tuple(task), allow=tuple(ns["allow"]), deny=tuple(ns["deny"]),
                   checks=tuple(c.strip() for c in ns["checks"]), **given)
