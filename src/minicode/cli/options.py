"""``Options``: everything the command line said, as a frozen value (SPEC 1).

Apart from the parsing (``cli/args.py``) so that what every run builds imports neither
argparse nor dataclasses (``minicode.value``): the path to the first request and the first
full-screen frame must stay short.
"""

from __future__ import annotations

from minicode.value import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["DEFAULT_MAX_TURNS", "OUTPUT_FORMATS", "THINK_LEVELS", "Options"]

DEFAULT_MAX_TURNS = 500
# Duplicated from config.THINKING_LEVELS on purpose: importing config here would cost
# start-up time for --help; tests/cli/test_args.py pins that the two stay equal.
THINK_LEVELS = ("off", "low", "medium", "high", "max")
OUTPUT_FORMATS = ("text", "json", "stream-json")


class Options(Value):
    """Everything the command line said, validated for shape (not yet for the filesystem)."""

    __slots__ = ("task", "session", "continue_session", "yes", "allow", "deny", "max_turns", "timeout", "model",
                 "think", "config", "directory", "init", "user", "base_url", "api_key_env", "checks", "doctor",
                 "json", "list_sessions", "export", "output")
    task: tuple[str, ...]
    """The TASK words as given; `task_text` joins them."""
    session: str | None
    continue_session: bool
    """`-c/--continue`: resume the most recently updated session of the workspace."""
    yes: bool
    """`-y/--yes`: approve every side-effect tool call automatically (deny rules still deny)."""
    allow: tuple[str, ...]
    """`--allow RULE` (repeatable): permission rules added for this run."""
    deny: tuple[str, ...]
    """`--deny RULE` (repeatable): deny rules added for this run."""
    max_turns: int
    timeout: float | None
    """Wall-clock seconds per task, approvals included; None = no limit."""
    model: str | None
    think: str | None
    config: Path | None
    directory: Path | None
    """`-C DIR` as given; the CLI checks that it is an existing directory."""
    init: bool
    user: bool
    """`--init --user`: write the per-user config instead of the workspace's."""
    base_url: str | None
    """Only with --init."""
    api_key_env: str | None
    """Only with --init."""
    checks: tuple[str, ...]
    """`--check CMD` (repeatable): acceptance checks run when the model says it is done."""
    doctor: bool
    """`--doctor`: probe the configured endpoint and print a report instead of running a task."""
    json: bool
    """Only with --doctor: the report as one JSON object on stdout."""
    list_sessions: bool
    """`--sessions`: list this workspace's sessions and exit."""
    export: str | None
    """`--export ID`: write session ID (or a unique prefix) as Markdown to stdout and exit."""
    output: str
    """`--output`: "text" (the answer on stdout), "json" or "stream-json" (JSON Lines events)."""

    def __init__(self, task: tuple[str, ...] = (), session: str | None = None, continue_session: bool = False,
                 yes: bool = False, allow: tuple[str, ...] = (), deny: tuple[str, ...] = (),
                 max_turns: int = DEFAULT_MAX_TURNS, timeout: float | None = None, model: str | None = None,
                 think: str | None = None, config: Path | None = None, directory: Path | None = None,
                 init: bool = False, user: bool = False, base_url: str | None = None,
                 api_key_env: str | None = None, checks: tuple[str, ...] = (), doctor: bool = False,
                 json: bool = False, list_sessions: bool = False, export: str | None = None,
                 output: str = "text") -> None:
        for name, value in (
            ("task", task), ("session", session), ("continue_session", continue_session), ("yes", yes),
            ("allow", allow), ("deny", deny), ("max_turns", max_turns), ("timeout", timeout), ("model", model),
            ("think", think), ("config", config), ("directory", directory), ("init", init), ("user", user),
            ("base_url", base_url), ("api_key_env", api_key_env), ("checks", checks), ("doctor", doctor),
            ("json", json), ("list_sessions", list_sessions), ("export", export), ("output", output),
        ):
            object.__setattr__(self, name, value)

    @property
    def task_text(self) -> str:
        """The TASK words joined; argv bytes that aren't UTF-8 (surrogate-escaped by
        Python) become U+FFFD, so the text can be stored and sent."""
        text = " ".join(self.task).strip()
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:  # a lone surrogate that was never a byte
            return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
