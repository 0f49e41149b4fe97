"""The command line (``minicode.entry`` calls ``main``): parse argv, resolve the workspace, load
config, pick the frontend.

The frontends (`cli/frontends/plain/frontend.py`, `cli/frontends/json/run.py`, the full
screen's `cli/frontends/tui/app.py`) are imported when chosen: only the full screen loads
prompt_toolkit/rich, and `--version` loads none of them. This module and `config.py` are the only readers of `os.environ`; everything
else gets `env`.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from minicode.cli.args import Options, parse_args
from minicode.cli.stdstreams import is_terminal, standard_streams
from minicode.errors import ConfigError
from minicode.exitcodes import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from minicode.cli.prepared import Prepared
    from minicode.config import Config
    from minicode.trust.project_config import Grants

__all__ = ["MODES", "main", "pick_mode", "resolve_workspace"]

MODES = ("interactive", "oneshot", "pipe")
EXIT_USAGE = 2
PIPED_TEXT_LIMIT = 8 * 1024 * 1024
"""Bytes of piped context accepted with a TASK; more is a usage error, not a silent cut."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run minicode with argv (default: sys.argv[1:]) and return the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    with standard_streams():  # closed or full standard streams: see cli.stdstreams
        try:
            return _main(args)
        except KeyboardInterrupt:  # SIGINT/SIGTERM outside a running task (see minicode.entry)
            print("minicode: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED


def pick_mode(has_task: bool, stdin_tty: bool, stdout_tty: bool, *, events: bool = False) -> str:
    """SPEC 1: TASK -> one-shot (piped stdin is attached); no TASK -> interactive only with two
    terminals, otherwise pipe (one task per stdin line; with stdout redirected this still reads
    the terminal line by line, so `minicode > answers.md` works). ``events`` (--output json):
    never interactive — without TASK the tasks are read line by line, also from a terminal."""
    if has_task:
        return "oneshot"
    if stdin_tty and stdout_tty and not events:
        return "interactive"
    return "pipe"


def resolve_workspace(directory: Path | None, cwd: Path) -> Path:
    """The start directory, or `-C DIR` (which must be an existing directory)."""
    if directory is None:
        return cwd
    target = cwd / directory
    if not target.is_dir():
        what = "does not exist" if not target.exists() else "is not a directory"
        raise ConfigError(f"-C {directory}: {what}")
    return target.resolve()


def _main(argv: list[str]) -> int:
    try:
        options = parse_args(argv)
    except SystemExit as e:  # argparse: --help/--version (0) or a usage error (2, usage printed)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_USAGE)

    env = dict(os.environ)
    if options.acp:
        return _acp(options, env)
    if options.output != "text":
        # From here on stdout carries JSON only, and every failure ends in a `result` line.
        import minicode.cli.frontends.json.run as jsonrun

        return jsonrun.main(options, lambda: _prepare(options, _cwd(), env))
    try:
        cwd = _cwd()
        if options.init:
            return _init(options, resolve_workspace(options.directory, cwd), env)
        if options.list_sessions or options.export is not None:
            return _sessions_command(options, resolve_workspace(options.directory, cwd))
        if options.mcp or options.mcp_login is not None:
            from minicode.cli.mcp_list import run as list_mcp

            workspace = resolve_workspace(options.directory, cwd)
            return list_mcp(_load(options, workspace, cwd, env), workspace, env, login=options.mcp_login)
        if options.doctor:
            from minicode.cli.doctor_command import run as doctor

            workspace = resolve_workspace(options.directory, cwd)
            return doctor(options, _load(options, workspace, cwd, env), env, workspace=workspace)
        prepared = _prepare(options, cwd, env)
    except ConfigError as e:
        return _fail(str(e))
    return _dispatch(options, prepared)


def _acp(options: Options, env: Mapping[str, str]) -> int:
    """``--acp``: an editor's agent (``cli/frontends/acp``, the only importer of the ACP SDK).
    The start directory's config is loaded first, so a config mistake is exit 2 before any
    message; each editor session then loads the config of its own directory the same way."""
    from minicode.cli.broad_workspace import confirm_workspace

    def load(workspace: Path) -> Config:
        # nobody can be asked (stdin is the protocol): a broad directory only when -C named it
        explicit = options.directory is not None and workspace == start
        confirm_workspace(workspace, explicit=explicit, env=env, ask=None,
                          warn=lambda line: print(line, file=sys.stderr))
        return _load(options, workspace, cwd, env)

    try:
        cwd = _cwd()
        start = resolve_workspace(options.directory, cwd).resolve()
        config = load(start)
    except ConfigError as e:
        return _fail(str(e))
    import minicode.cli.frontends.acp.run as acp

    return acp.main(options, config, start, load, env)


def _prepare(options: Options, cwd: Path, env: Mapping[str, str]) -> Prepared:
    """Workspace, mode, config and piped context; raises ConfigError (exit 2)."""
    from minicode.cli.prepared import Prepared

    workspace = resolve_workspace(options.directory, cwd)
    events = options.output != "text"
    mode = pick_mode(bool(options.task_text), is_terminal(sys.stdin), is_terminal(sys.stdout), events=events)
    _confirm_broad(options, workspace, env)
    config = _load(options, workspace, cwd, env)
    piped = _read_piped(sys.stdin) if mode == "oneshot" and not is_terminal(sys.stdin) else None
    return Prepared(config, workspace, mode, piped, env)


def _confirm_broad(options: Options, workspace: Path, env: Mapping[str, str]) -> None:
    """Ask before making ``/`` or a home directory the workspace (``cli/broad_workspace.py``)."""
    from minicode.cli.broad_workspace import confirm_workspace

    can_ask = is_terminal(sys.stdin) and is_terminal(sys.stderr) and options.output == "text"
    confirm_workspace(workspace, explicit=options.directory is not None, env=env,
                      ask=_ask_on_terminal if can_ask else None, warn=lambda line: print(line, file=sys.stderr))


def _ask_on_terminal(question: str) -> str | None:
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline()


def _ask_about(grants: Grants) -> str | None:
    """The project config's question (``cli.config_question``), asked on the terminal."""
    from minicode.cli.config_question import config_question

    return _ask_on_terminal(config_question(grants))


def _cwd() -> Path:
    try:
        return Path.cwd()
    except OSError as e:
        raise ConfigError("the current directory no longer exists; use -C DIR") from e


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"minicode: error: {message}", file=sys.stderr)
    return code


def _init(options: Options, workspace: Path, env: Mapping[str, str]) -> int:
    from minicode.cli.config_setup import TerminalPrompter, run_init

    can_ask = is_terminal(sys.stdin) and is_terminal(sys.stderr)
    written = run_init(
        workspace,
        base_url=options.base_url,
        model=options.model,
        api_key_env=options.api_key_env,
        prompter=TerminalPrompter(sys.stderr) if can_ask else None,
        out=sys.stderr,
        user=options.user,
        env=env,
    )
    from minicode.trust.project_config import confirm_written

    confirm_written(written, workspace, env)  # the user wrote it: its server and key variable are theirs
    return 0


def _sessions_command(options: Options, workspace: Path) -> int:
    """``--sessions`` and ``--export ID``: read the session files only (no config, no model)."""
    import shutil

    from minicode.errors import SessionError

    try:
        if options.list_sessions:
            from minicode.cli.session_list import run_list

            width = shutil.get_terminal_size().columns if is_terminal(sys.stdout) else None
            return run_list(workspace.resolve(), sys.stdout, sys.stderr, width)
        from minicode.cli.session_export import run_export
        from minicode.cli.frontends.shared.terminal_text import ShownStream

        assert options.export is not None
        # on a terminal, escape sequences from the session (model text, command output) are
        # shown, not obeyed; into a pipe or a file the Markdown is written verbatim
        out = cast("TextIO", ShownStream(sys.stdout, terminal=is_terminal(sys.stdout)))
        err = cast("TextIO", ShownStream(sys.stderr, terminal=is_terminal(sys.stderr)))
        return run_export(workspace.resolve(), options.export, out, err)
    except SessionError as e:
        return _fail(str(e), e.exit_code)
    except BrokenPipeError:  # `minicode --sessions | head`: the reader has all it wanted
        _quiet_stdout()
        return 0


def _quiet_stdout() -> None:
    """Point a closed stdout at /dev/null, so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _load(options: Options, workspace: Path, cwd: Path, env: Mapping[str, str]) -> Config:
    """Load the config; with none anywhere, ask in a terminal or explain how to create one."""
    from minicode.trust.project_config import check_project_config, confirm_written
    from minicode.config import NoConfigError, apply_overrides, load_config

    # `-C DIR` means "as if started in DIR", so a relative --config is relative to DIR.
    explicit = workspace / options.config if options.config is not None else None
    can_ask = is_terminal(sys.stdin) and is_terminal(sys.stderr) and options.output == "text"
    try:
        config = load_config(workspace, explicit, env)
    except NoConfigError as e:
        if not (is_terminal(sys.stdin) and is_terminal(sys.stderr)):
            from minicode.cli.config_setup import no_config_help

            raise NoConfigError(no_config_help(workspace, cwd, e.searched), searched=e.searched) from e
        from minicode.cli.config_setup import TerminalPrompter, first_run

        written = first_run(workspace, env, prompter=TerminalPrompter(sys.stderr), out=sys.stderr)
        confirm_written(written, workspace, env)
        config = load_config(workspace, explicit, env)
    # a project's file may not act for the user unasked: trust.project_config alone decides what needs the user's word
    check_project_config(config, workspace, env, explicit=explicit is not None, ask=_ask_about if can_ask else None)
    if config.mcp or options.mcp_config is not None:
        from minicode.cli.mcp_config import add_mcp_config

        config = add_mcp_config(config, workspace, env, options.mcp_config, explicit=explicit is not None)
    from minicode.cli.added_rules import add_rules

    config = add_rules(config, env, options.allow, options.deny)
    return apply_overrides(config, model=options.model, thinking=options.think, checks=options.checks)


def _read_piped(stdin: TextIO) -> str | None:
    """The text piped in with a TASK (`git diff | minicode "review this"`), or None.

    Only a pipe or a regular file is read: an inherited socket or /dev/null that never
    ends would otherwise hang a one-shot run.
    """
    try:
        mode = os.fstat(stdin.fileno()).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
            return None
        data = stdin.buffer.read(PIPED_TEXT_LIMIT + 1)
    except (AttributeError, ValueError, OSError):  # not a real file (tests, embedding): read text
        from minicode.tools.scrub import scrub

        data = scrub(stdin.read(PIPED_TEXT_LIMIT + 1)).encode("utf-8")
    if len(data) > PIPED_TEXT_LIMIT:
        raise ConfigError(f"piped input is larger than {PIPED_TEXT_LIMIT // (1024 * 1024)} MiB")
    text = data.decode("utf-8", "replace")
    return text if text.strip() else None


def _full_screen(options: Options, config: Config, workspace: Path, env: Mapping[str, str]) -> int:
    """The full screen (``cli/frontends/tui/app.py``: prompt_toolkit + rich, loaded only here)."""
    try:
        import minicode.cli.frontends.tui.app as app
    except ModuleNotFoundError as e:
        if e.name != "minicode.cli.frontends.tui.app":
            raise
        return _fail("this mode is not available yet")
    return app.run(options, config, workspace, env)


def _dispatch(options: Options, prepared: Prepared) -> int:
    from minicode.errors import MinicodeError, SessionError

    config, workspace, mode, piped, env = prepared.config, prepared.workspace, prepared.mode, prepared.piped, prepared.env

    try:
        if mode == "interactive":
            return _full_screen(options, config, workspace, env)
        try:
            import minicode.cli.frontends.plain.frontend as plain
        except ModuleNotFoundError as e:
            if e.name != "minicode.cli.frontends.plain.frontend":
                raise
            return _fail("this mode is not available yet")
        return plain.run(options, config, workspace, mode, piped, env)
    except ConfigError as e:
        return _fail(str(e), EXIT_USAGE)
    except SessionError as e:
        return _fail(str(e), e.exit_code)
    except MinicodeError as e:
        return _fail(str(e), 1)
