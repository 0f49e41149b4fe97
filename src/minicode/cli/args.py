"""Command-line parsing (SPEC 1) into a frozen `Options` value.

argparse only; imports nothing beyond the standard library and `minicode.__version__`,
because `minicode --version` and `--help` must start instantly. Bad flags make argparse
print a usage line and raise SystemExit(2); `main()` turns that into the exit code.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from minicode import __version__

__all__ = ["DEFAULT_MAX_TURNS", "OUTPUT_FORMATS", "THINK_LEVELS", "Options", "build_parser", "parse_args"]

DEFAULT_MAX_TURNS = 500
# Duplicated from config.THINKING_LEVELS on purpose: importing config here would cost
# start-up time for --help; tests/cli/test_args.py pins that the two stay equal.
THINK_LEVELS = ("off", "low", "medium", "high", "max")
OUTPUT_FORMATS = ("text", "json", "stream-json")


@dataclass(frozen=True, slots=True)
class Options:
    """Everything the command line said, validated for shape (not yet for the filesystem)."""

    task: tuple[str, ...] = ()
    """The TASK words as given; `task_text` joins them."""
    session: str | None = None
    continue_session: bool = False
    """`-c/--continue`: resume the most recently updated session of the workspace."""
    yes: bool = False
    """`-y/--yes`: approve every side-effect tool call automatically (deny rules still deny)."""
    allow: tuple[str, ...] = ()
    """`--allow RULE` (repeatable): permission rules added for this run."""
    deny: tuple[str, ...] = ()
    """`--deny RULE` (repeatable): deny rules added for this run."""
    max_turns: int = DEFAULT_MAX_TURNS
    timeout: float | None = None
    """Wall-clock seconds per task, approvals included; None = no limit."""
    model: str | None = None
    think: str | None = None
    config: Path | None = None
    directory: Path | None = None
    """`-C DIR` as given; the CLI checks that it is an existing directory."""
    init: bool = False
    user: bool = False
    """`--init --user`: write the per-user config instead of the workspace's."""
    base_url: str | None = None
    """Only with --init."""
    api_key_env: str | None = None
    """Only with --init."""
    checks: tuple[str, ...] = ()
    """`--check CMD` (repeatable): acceptance checks run when the model says it is done."""
    doctor: bool = False
    """`--doctor`: probe the configured endpoint and print a report instead of running a task."""
    json: bool = False
    """Only with --doctor: the report as one JSON object on stdout."""
    list_sessions: bool = False
    """`--sessions`: list this workspace's sessions and exit."""
    export: str | None = None
    """`--export ID`: write session ID (or a unique prefix) as Markdown to stdout and exit."""
    output: str = "text"
    """`--output`: "text" (the answer on stdout), "json" or "stream-json" (JSON Lines events)."""

    @property
    def task_text(self) -> str:
        """The TASK words joined; argv bytes that aren't UTF-8 (surrogate-escaped by
        Python) become U+FFFD, so the text can be stored and sent."""
        text = " ".join(self.task).strip()
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:  # a lone surrogate that was never a byte
            return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


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


def build_parser(columns: int | None = None) -> argparse.ArgumentParser:
    """The parser; ``columns`` is the terminal width to format for, when the caller knows it
    (``cli.quick.terminal_columns``): else argparse asks ``shutil``, which imports lzma and bz2
    (~10 ms of every start, as the usage line is formatted on every parse)."""
    formatter: type[argparse.HelpFormatter] | Callable[[str], argparse.HelpFormatter] = (
        argparse.RawDescriptionHelpFormatter if columns is None
        else lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=columns - 2))  # argparse's own - 2
    p = argparse.ArgumentParser(
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
    parser = build_parser(columns)
    options, rest = _split_at_double_dash(list(argv))
    # Intermixed, so `minicode fix the bug --yes` works like `minicode --yes fix the bug`.
    ns = parser.parse_intermixed_args(options)
    # Everything after `--` is TASK words, verbatim (argparse's intermixed parsing mishandles
    # `--`, so it never sees it): `minicode -- -x` runs the task "-x".
    ns.task = [*ns.task, *rest]
    if ns.init and ns.task:
        parser.error("--init takes no TASK")
    if not ns.init and (ns.base_url is not None or ns.api_key_env is not None or ns.user):
        parser.error("--base-url, --api-key-env and --user only go with --init")
    if (ns.list_sessions or ns.export is not None) and (
        ns.task or ns.init or ns.session or ns.continue_session or ns.doctor or ns.checks
    ):
        parser.error("--sessions and --export take no TASK, --init, --session, --continue, --doctor or --check")
    if ns.list_sessions and ns.export is not None:
        parser.error("use either --sessions or --export")
    if ns.model is not None and not ns.model.strip():
        parser.error("argument --model: must not be empty")
    if any(not c.strip() for c in ns.checks):
        parser.error("argument --check: must not be empty")
    if ns.json and not ns.doctor:
        parser.error("--json only goes with --doctor")
    if ns.output != "text" and (ns.init or ns.doctor or ns.list_sessions or ns.export is not None):
        parser.error("--output goes with tasks, not with --init, --doctor, --sessions or --export")
    if ns.doctor and (ns.task or ns.init or ns.session or ns.continue_session):
        parser.error("--doctor takes no TASK, --init, --session or --continue")
    return Options(
        task=tuple(ns.task),
        session=ns.session,
        continue_session=ns.continue_session,
        yes=ns.yes,
        allow=tuple(ns.allow),
        deny=tuple(ns.deny),
        max_turns=ns.max_turns,
        timeout=ns.timeout,
        model=ns.model,
        think=ns.think,
        config=ns.config,
        directory=ns.directory,
        init=ns.init,
        user=ns.user,
        base_url=ns.base_url,
        api_key_env=ns.api_key_env,
        checks=tuple(c.strip() for c in ns.checks),
        doctor=ns.doctor,
        json=ns.json,
        list_sessions=ns.list_sessions,
        export=ns.export,
        output=ns.output,
    )
