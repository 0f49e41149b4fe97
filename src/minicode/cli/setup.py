"""First-run questions and the `--init` flow (SPEC 2): gather base URL, model and key, write a config.

Plain `input()`/`getpass` only — no prompt_toolkit or rich — so it works in any terminal
and costs no start-up time. Questions go to stderr, never stdout (stdout carries only
answers in one-shot mode). The API key is read without echo and never accepted as a flag.
Local servers are detected with a plain socket connect: httpx stays in provider/openai.py.
"""

from __future__ import annotations

import getpass
import shlex
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence, TextIO

from minicode.config import (
    WORKSPACE_CONFIG,
    candidate_paths,
    is_loopback_url,
    write_starter_config,
)
from minicode.errors import ConfigError

__all__ = [
    "LOCAL_SERVERS",
    "Answers",
    "Prompter",
    "TerminalPrompter",
    "first_run",
    "gather",
    "no_config_help",
    "probe_local_servers",
    "run_init",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
PROBE_TIMEOUT = 0.2
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


def gather(
    *,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    prompter: Prompter | None,
    probe: Callable[[], list[tuple[str, str]]] | None = None,
) -> Answers:
    """Complete what the flags left open by asking; without a prompter, missing flags are an error."""
    if prompter is None:
        return _from_flags(base_url, model, api_key_env)
    if base_url is None:
        local = (probe or probe_local_servers)()
        for label, url in local:
            prompter.say(f"Found a local {label} answering at {url}")
        base_url = _ask_required(prompter, "Base URL of the OpenAI-compatible endpoint",
                                 local[0][1] if local else DEFAULT_BASE_URL)
    if model is None:
        model = _ask_required(prompter, "Model name (e.g. gpt-4.1, qwen3-coder)")
    if api_key_env is not None:
        return Answers(base_url, model, api_key_env=api_key_env)
    return _ask_key(prompter, base_url, model)


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
    loopback = is_loopback_url(base_url)
    secret = prompter.ask_secret("API key (input hidden; leave empty to name an environment variable)")
    if secret:
        return Answers(base_url, model, api_key=secret)
    default = "" if loopback else DEFAULT_KEY_ENV
    hint = " (leave empty for none: local server)" if loopback else ""
    while True:
        var = prompter.ask(f"Environment variable holding the API key{hint}", default)
        if var:
            return Answers(base_url, model, api_key_env=var)
        if loopback:
            return Answers(base_url, model, api_key="")
        prompter.say("  a key or a variable name is required for a non-local endpoint")


def _write(path: Path, answers: Answers) -> Path:
    return write_starter_config(
        path, base_url=answers.base_url, model=answers.model,
        api_key=answers.api_key, api_key_env=answers.api_key_env,
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
) -> Path:
    """`minicode --init`: write <workspace>/config/config.toml; raises ConfigError if it exists."""
    path = workspace / WORKSPACE_CONFIG
    if path.exists() or path.is_symlink():
        raise ConfigError(
            f"{path}: already exists; refusing to overwrite it (edit it, or move it away and run --init again)"
        )
    answers = gather(base_url=base_url, model=model, api_key_env=api_key_env,
                     prompter=prompter, probe=probe)
    _write(path, answers)
    print(f"minicode: wrote {path} (mode 0600)", file=out)
    if answers.api_key:
        print("minicode: it holds your API key: keep config/config.toml out of version control",
              file=out)
    return path


def first_run(
    workspace: Path, env: Mapping[str, str], *, prompter: Prompter, out: TextIO,
    probe: Callable[[], list[tuple[str, str]]] | None = None,
) -> Path:
    """No config anywhere, in a terminal: ask, then write the per-user config (not the project's).

    The user-level file is chosen so a key typed here never lands inside a project tree.
    """
    prompter.say("minicode: no configuration found; a few questions to create one.")
    paths = candidate_paths(workspace, env)
    path = paths[-1]
    answers = gather(base_url=None, model=None, api_key_env=None, prompter=prompter, probe=probe)
    _write(path, answers)
    print(f"minicode: wrote {path} (mode 0600); edit it or run `minicode --init` per project",
          file=out)
    return path


def no_config_help(workspace: Path, cwd: Path, searched: Sequence[Path]) -> str:
    """The text printed when there is no config and no terminal to ask in: exact commands,
    then a minimal file inline (an installed package has no example file to point at)."""
    where = "" if workspace == cwd else f"-C {shlex.quote(str(workspace))} "
    lines = [
        "no configuration file found; looked in:",
        *(f"  {p}" for p in searched),
        "create one with (the key is read from the named environment variable):",
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
