"""First-run questions and the `--init` flow (SPEC 2): gather base URL, model and key, write a config.

Plain `input()`/`getpass` only — no prompt_toolkit or rich — so it works in any terminal
and costs no start-up time. Questions go to stderr, never stdout (stdout carries only
answers in one-shot mode). The API key is read without echo and never accepted as a flag.
Local servers are detected with a plain socket connect and their models listed with stdlib
``urllib``: httpx2 stays in provider/openai.py. In a git work tree `--init` keeps the new file
out of `git status` through `.git/info/exclude` (one short `git` subprocess).
"""

from __future__ import annotations

import getpass
import os
import re
import shlex
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence, TextIO

from minicode import jsonsafe
from minicode.config import (
    WORKSPACE_CONFIG,
    candidate_paths,
    check_base_url,
    is_loopback_url,
    user_config_path,
)
from minicode.config_writer import write_starter_config
from minicode.errors import ConfigError
from minicode.provider.catalog import parse_models

__all__ = [
    "LOCAL_SERVERS",
    "Answers",
    "Prompter",
    "TerminalPrompter",
    "first_run",
    "exclude_from_git",
    "gather",
    "list_models",
    "no_config_help",
    "probe_local_servers",
    "run_init",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
PROBE_TIMEOUT = 0.2
MODELS_TIMEOUT = 1.0
MODELS_SHOWN = 10
GIT_TIMEOUT = 5.0
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LOCAL_SERVERS: tuple[tuple[str, int, str], ...] = (
    ("Ollama", 11434, "http://127.0.0.1:11434/v1"),
    ("llama.cpp server", 8080, "http://127.0.0.1:8080/v1"),
)


class Prompter(Protocol):
    """Asks the user one question. Raises ConfigError when the user ends input (EOF)."""

    def say(self, text: str) -> None: ...
    def ask(self, question: str, default: str = "") -> str: ...
    def ask_secret(self, question: str) -> str: ...


class TerminalPrompter:
    """Questions on stderr, answers from stdin; the secret via getpass (no echo)."""

    def __init__(self, err: TextIO | None = None) -> None:
        self._err = err if err is not None else sys.stderr

    def say(self, text: str) -> None:
        print(text, file=self._err, flush=True)

    def ask(self, question: str, default: str = "") -> str:
        suffix = f" [{default}]" if default else ""
        self._err.write(f"{question}{suffix}: ")
        self._err.flush()
        try:
            answer = input()
        except EOFError:
            raise ConfigError("setup cancelled: input ended before every question was answered") from None
        return answer.strip() or default

    def ask_secret(self, question: str) -> str:
        try:
            return getpass.getpass(f"{question}: ", stream=self._err).strip()
        except EOFError:
            raise ConfigError("setup cancelled: input ended before every question was answered") from None


@dataclass(frozen=True, slots=True)
class Answers:
    base_url: str
    model: str
    api_key: str | None = None
    api_key_env: str | None = None


def probe_local_servers(
    servers: Sequence[tuple[str, int, str]] = LOCAL_SERVERS, timeout: float = PROBE_TIMEOUT
) -> list[tuple[str, str]]:
    """(label, base_url) of each local server that accepts a TCP connection on 127.0.0.1."""
    found = []
    for label, port, url in servers:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout):
                found.append((label, url))
        except OSError:
            continue
    return found


def list_models(base_url: str, timeout: float = MODELS_TIMEOUT) -> list[str]:
    """The model ids a server lists at ``GET {base_url}/models``, or [] when it doesn't answer
    with an OpenAI-style ``{"data": [{"id": …}]}``. Only asked of loopback servers, without
    proxies (a proxy would never reach 127.0.0.1)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(base_url.rstrip("/") + "/models", timeout=timeout) as response:
            data = jsonsafe.loads(response.read(1024 * 1024))
    except (OSError, ValueError):  # refused, timed out, HTTP error, not JSON
        return []
    return [model.id for model in parse_models(data) or () if model.id.strip()]  # the one /models reader


def gather(
    *,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    prompter: Prompter | None,
    probe: Callable[[], list[tuple[str, str]]] | None = None,
    models: Callable[[str], list[str]] | None = None,
) -> Answers:
    """Complete what the flags left open by asking; without a prompter, missing flags are an error.

    What was given is checked first, so a bad value is named before anything missing."""
    _check_given(base_url, model, api_key_env)
    if prompter is None:
        return _from_flags(base_url, model, api_key_env)
    if base_url is None:
        local = (probe or probe_local_servers)()
        for label, url in local:
            prompter.say(f"Found a local {label} answering at {url}")
        base_url = _ask_url(prompter, local[0][1] if local else DEFAULT_BASE_URL)
    loopback = is_loopback_url(base_url)
    if model is None:
        offered = (models or list_models)(base_url) if loopback else []
        if offered:
            more = f" (and {len(offered) - MODELS_SHOWN} more)" if len(offered) > MODELS_SHOWN else ""
            prompter.say(f"The server offers: {', '.join(offered[:MODELS_SHOWN])}{more}")
        model = _ask_required(prompter, "Model name (e.g. gpt-4.1, qwen3-coder)", offered[0] if offered else "")
    if api_key_env is not None:
        return Answers(base_url, model, api_key_env=api_key_env)
    if loopback:
        prompter.say("No API key needed: an empty key is allowed for a loopback server.")
        return Answers(base_url, model, api_key="")
    return _ask_key(prompter, base_url, model)


def _check_given(base_url: str | None, model: str | None, api_key_env: str | None) -> None:
    if base_url is not None:
        check_base_url(base_url)
    if model is not None and not model.strip():
        raise ConfigError("--model must not be empty")
    if api_key_env is not None and not _ENV_NAME.fullmatch(api_key_env):
        raise ConfigError("--api-key-env must be an environment variable name, e.g. OPENAI_API_KEY")


def _ask_url(prompter: Prompter, default: str) -> str:
    while True:
        answer = _ask_required(prompter, "Base URL of the OpenAI-compatible endpoint", default)
        try:
            check_base_url(answer, "the base URL")
        except ConfigError as e:
            prompter.say(f"  {e}")
            continue
        return answer


def _from_flags(base_url: str | None, model: str | None, api_key_env: str | None) -> Answers:
    missing = [flag for flag, v in (("--base-url URL", base_url), ("--model NAME", model)) if v is None]
    if base_url is not None and api_key_env is None and not is_loopback_url(base_url):
        missing.append("--api-key-env VAR")
    if missing:
        raise ConfigError(
            "not a terminal, so nothing can be asked; also give " + " ".join(missing)
            + " (an API key itself is only read interactively)"
        )
    assert base_url is not None and model is not None
    if api_key_env is None:
        return Answers(base_url, model, api_key="")  # loopback server without a key
    return Answers(base_url, model, api_key_env=api_key_env)


def _ask_required(prompter: Prompter, question: str, default: str = "") -> str:
    while True:
        answer = prompter.ask(question, default)
        if answer:
            return answer
        prompter.say("  an answer is required")


def _ask_key(prompter: Prompter, base_url: str, model: str) -> Answers:
    """A remote endpoint: the key itself (hidden), or the variable that will hold it."""
    secret = prompter.ask_secret("API key (input hidden; leave empty to name an environment variable)")
    if secret:
        return Answers(base_url, model, api_key=secret)
    while True:
        var = prompter.ask("Environment variable holding the API key", DEFAULT_KEY_ENV)
        if _ENV_NAME.fullmatch(var):
            return Answers(base_url, model, api_key_env=var)
        prompter.say("  a variable name is letters, digits and _ (e.g. OPENAI_API_KEY)")


def _write(path: Path, answers: Answers, origin: str) -> Path:
    return write_starter_config(
        path, base_url=answers.base_url, model=answers.model,
        api_key=answers.api_key, api_key_env=answers.api_key_env, origin=origin,
    )


def run_init(
    workspace: Path,
    *,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    prompter: Prompter | None,
    out: TextIO,
    probe: Callable[[], list[tuple[str, str]]] | None = None,
    models: Callable[[str], list[str]] | None = None,
    user: bool = False,
    env: Mapping[str, str] | None = None,
) -> Path:
    """`minicode --init`: write <workspace>/config/config.toml, or with ``user`` the per-user
    file that every project finds; raises ConfigError if it exists. ``env`` locates the
    per-user file and tells whether a named key variable is already set."""
    env = {} if env is None else env
    path = _init_path(workspace, env, user)
    if path.exists() or path.is_symlink():
        raise ConfigError(
            f"{path}: already exists; refusing to overwrite it (edit it, or move it away and run --init again)"
        )
    if prompter is not None and (base_url is None or model is None):
        _check_given(base_url, model, api_key_env)  # a bad flag before any question
        prompter.say(f"minicode: a few questions to create {path} (Ctrl+C aborts; nothing is written until the end)")
    answers = gather(base_url=base_url, model=model, api_key_env=api_key_env,
                     prompter=prompter, probe=probe, models=models)
    _write(path, answers, "`minicode --init" + (" --user`" if user else "`"))
    print(f"minicode: wrote {path} (mode 0600)", file=out)
    if not user:
        excluded = exclude_from_git(workspace, path)
        if excluded is not None:
            print(f"minicode: added /{_relative(workspace, path)} to {excluded} so git does not show it", file=out)
    _next_steps(answers, env, user, out)
    return path


def _init_path(workspace: Path, env: Mapping[str, str], user: bool) -> Path:
    if not user:
        return workspace / WORKSPACE_CONFIG
    path = user_config_path(env)
    if path is None:
        raise ConfigError("--init --user: neither HOME nor an absolute XDG_CONFIG_HOME is set")
    return path


def _next_steps(answers: Answers, env: Mapping[str, str], user: bool, out: TextIO) -> None:
    if answers.api_key_env is not None and not env.get(answers.api_key_env):
        print(f"minicode: next: export {answers.api_key_env}=… (your API key)", file=out)
    elif answers.api_key and not user:
        print("minicode: it holds your API key: keep config/config.toml out of version control", file=out)
    where = "cd your-project && minicode (or minicode -C DIR)" if user else "run `minicode` in this project"
    print(f"minicode: then: {where}", file=out)


def _relative(workspace: Path, path: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return path.as_posix()


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    """Run git quietly (own session, killed at the timeout); None if it cannot run at all."""
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT, start_new_session=True, check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git, or it hung
        return None


def exclude_from_git(workspace: Path, path: Path) -> Path | None:
    """When workspace is in a git work tree and ``path`` (inside it) is not ignored, add it to
    the repository's ``info/exclude``; returns that file when a line was added, else None.

    Keeps a config that may hold a key out of ``git status`` without touching a tracked
    .gitignore. Outside a repository, without git, or on any git error: nothing happens."""
    check = _git(["check-ignore", "-q", "--", str(path)], workspace)
    if check is None or check.returncode != 1:  # 0: already ignored; 128: no repository
        return None
    where = _git(["rev-parse", "--show-prefix", "--git-path", "info/exclude"], workspace)
    lines = where.stdout.splitlines() if where is not None and where.returncode == 0 else []
    if len(lines) != 2:
        return None
    prefix, exclude = lines
    pattern = "/" + re.sub(r"([*?\[\\])", r"\\\1", prefix + _relative(workspace, path))
    exclude_path = workspace / exclude
    if exclude_path.is_symlink() or exclude_path.parent.is_symlink():
        return None  # a shipped .git/info/exclude -> ~/.bashrc: never written through (git reads it, we don't write it)
    try:
        exclude_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(exclude_path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        with open(fd, "r+", encoding="utf-8") as f:
            existing = f.read()
            f.write(("" if not existing or existing.endswith("\n") else "\n") + pattern + "\n")
    except (OSError, UnicodeDecodeError):
        return None
    return exclude_path.resolve()


def first_run(
    workspace: Path, env: Mapping[str, str], *, prompter: Prompter, out: TextIO,
    probe: Callable[[], list[tuple[str, str]]] | None = None,
    models: Callable[[str], list[str]] | None = None,
) -> Path:
    """No config anywhere, in a terminal: ask, then write the per-user config (not the project's).

    The user-level file is chosen so a key typed here never lands inside a project tree.
    """
    path = candidate_paths(workspace, env)[-1]
    prompter.say(f"minicode: no configuration found; a few questions to create {path}")
    prompter.say("  (Ctrl+C aborts; nothing is written until the last answer)")
    answers = gather(base_url=None, model=None, api_key_env=None, prompter=prompter, probe=probe, models=models)
    _write(path, answers, "minicode's first-run questions")
    print(f"minicode: wrote {path} (mode 0600); edit it, or run `minicode --init` for a per-project file",
          file=out)
    return path


def no_config_help(workspace: Path, cwd: Path, searched: Sequence[Path]) -> str:
    """The text printed when there is no config and no terminal to ask in: exact commands,
    then a minimal file inline (an installed package has no example file to point at)."""
    where = "" if workspace == cwd else f"-C {shlex.quote(str(workspace))} "
    lines = [
        "no configuration file found; looked in:",
        *(f"  {p}" for p in searched),
        "create one for all your projects with (the key is read from the named environment variable):",
        f"  minicode --init --user --base-url {DEFAULT_BASE_URL} --model gpt-4.1 --api-key-env {DEFAULT_KEY_ENV}",
        "or for this project only:",
        f"  minicode {where}--init --base-url {DEFAULT_BASE_URL} --model gpt-4.1 --api-key-env {DEFAULT_KEY_ENV}",
        "or, for a local Ollama server (no key needed):",
        f"  minicode {where}--init --base-url {LOCAL_SERVERS[0][2]} --model qwen3-coder",
    ]
    lines += [
        f"or write {workspace / WORKSPACE_CONFIG} yourself, for example:",
        "  [model]",
        f'  base_url = "{DEFAULT_BASE_URL}"',
        '  name = "gpt-4.1"',
        f'  api_key_env = "{DEFAULT_KEY_ENV}"',
    ]
    return "\n".join(lines)
