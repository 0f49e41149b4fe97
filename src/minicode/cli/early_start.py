"""The early first request of a one-shot or pipe run (issue 16: the first request ≤ 0.1 s).

Once the arguments and the configuration are known, the first request of a fresh session is
known too: the system prompt, the project message (AGENTS.md/CLAUDE.md, MiniCode.md), the
tool declarations and the first task — the one-shot TASK with its piped context, or in pipe
mode the first stdin line that is a task (not blank, not ``/compact`` or another command).
``start`` builds it with the code the session and the adapter use (``agent.prompt``,
``instructions``, ``memory``, ``tools.specs``, ``provider.chat_body``, the wire profile and
its cache) and sends it on a daemon thread (``provider.early``) before asyncio, httpx, the
agent loop or the session store are imported. The adapter adopts it only when the request
it builds is the same on the wire; else it is closed and the normal request goes out.

Not sent (the normal path alone runs) when anything could make the early request differ from
what httpx would send, or make the run send another first request, or none:
``--session``/``-c`` (a resumed history), ``--max-turns 0``, another ``model.provider``, a
proxy variable in the environment, an endpoint URL other than plain ``http(s)://host[:port]/path``
(user info, query, characters httpx would escape), an API key that is not printable ASCII, a
broken MiniCode.md (the turn stops before any request), a body large enough to need compaction
(over half the context window in bytes), brotli or zstandard installed (httpx would offer
them), stdin in pipe mode that is not a pipe or a file, ``MINICODE_EARLY_REQUEST=0``, or
``MINICODE_HTTP=httpx`` (the endpoint rules are ``provider/plain_http.py``'s: the same decide
whether the run's later requests go over minicode's own client too).

Pipe mode reads the first lines on a thread (``ReadAhead``) so a slow writer does not hold
the start-up (when stdin already holds data the main thread gives it a moment to send first);
``cli.plain.LineReader`` takes those lines first (``read_ahead_lines``).
Cheap to import: its work is imported inside ``start``.
"""

from __future__ import annotations

import os
import stat
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO, Callable, Mapping

    from minicode.cli.args import Options
    from minicode.config import Config
    from minicode.provider.early import Wire
    from minicode.provider.wire import WireProfile
    from minicode.provider.wire import WireProfile

__all__ = ["DISABLE_VARIABLE", "READ_AHEAD_HEAD_START_SECONDS", "ReadAhead", "read_ahead_lines", "start"]

DISABLE_VARIABLE = "MINICODE_EARLY_REQUEST"
"""Set to ``0`` to never send the early first request (benchmarks compare with and without)."""
READ_AHEAD_HEAD_START_SECONDS = 0.05
"""Pipe mode, stdin readable at once: how long the main thread waits for the first line to be
read and its request sent (building it on the reader thread while the main thread imports
would share the GIL with those imports). A slow writer is not waited for."""


def start(options: Options, config: Config, workspace: Path, mode: str, piped: str | None,
          env: Mapping[str, str], stdin: IO[str] | None) -> None:
    """Send the run's first request early when it is known and safe (see the module doc).
    Never raises: whatever goes wrong here, the normal path does it again and says it."""
    try:
        _start(options, config, workspace, mode, piped, env, stdin)
    except Exception:  # noqa: BLE001 - see above
        return


def _start(options: Options, config: Config, workspace: Path, mode: str, piped: str | None,
           env: Mapping[str, str], stdin: IO[str] | None) -> None:
    if mode not in ("oneshot", "pipe") or not _eligible(options, config, env):
        return
    if mode == "pipe" and not _is_pipe_or_file(stdin):
        return
    build = _builder(options, config, workspace, env)
    if build is None:
        return
    if mode == "oneshot":
        from minicode.cli.first_task import attach_piped

        _send(build, attach_piped(options.task_text, piped), env)
    else:
        assert stdin is not None
        ahead = ReadAhead(stdin, lambda text: _send(build, text, env))
        ahead.start()
        if _readable_now(stdin):  # the first line is (likely) there: let it go out before the imports
            ahead.wait(READ_AHEAD_HEAD_START_SECONDS)


def _readable_now(stream: IO[str]) -> bool:
    """Whether stdin holds data already (a file, or a pipe its writer has filled)."""
    import select

    try:
        return bool(select.select([stream.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def _eligible(options: Options, config: Config, env: Mapping[str, str]) -> bool:
    if env.get(DISABLE_VARIABLE, "").strip() == "0":
        return False
    if options.session is not None or options.continue_session or options.max_turns < 1:
        return False
    if config.mcp:  # the session declares mcp_tools too (mcp_client.tools): that first request would differ
        return False
    return config.model.provider in ("", "openai")


def _is_pipe_or_file(stream: IO[str] | None) -> bool:
    try:
        if stream is None or stream.isatty():
            return False
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)) and hasattr(stream, "buffer")


def _builder(options: Options, config: Config, workspace: Path, env: Mapping[str, str]
             ) -> Callable[[str], Wire | None] | None:
    """What turns the first task into the request on the wire, or None when not eligible."""
    from minicode.agent.prompt import system_message
    from minicode.errors import MemoryFileError
    from minicode.instructions import ProjectInstructions, project_message
    from minicode.memory import load_memory
    from minicode.provider.chat_body import chat_body, chat_headers
    from minicode.provider.types import ChatRequest, Message, ToolSpec
    from minicode.tools.specs import DECLARED

    from minicode.provider.plain_http import client_headers, httpx_user_agent, plain_endpoint

    point = plain_endpoint(config.model.base_url.rstrip("/") + "/chat/completions", config.model.api_key, env)
    user_agent = httpx_user_agent()
    if point is None or user_agent is None:
        return None  # not what minicode's own client sends as httpx would (provider/plain_http.py)

    root = workspace.resolve()
    specs = tuple(ToolSpec(d.name, d.description, d.parameters) for d in DECLARED)
    instructions = ProjectInstructions(root)
    instructions.refresh()
    try:
        memory = load_memory(root)
    except MemoryFileError:
        return None  # the turn stops before its first request
    context = [system_message(root, specs)]
    project = project_message(instructions.current, memory)
    if project is not None:
        context.append(project)
    model = options.model or config.model.name
    thinking = options.think or config.model.thinking
    profile = _profile(point.host_key, point.host, model, env)
    max_tokens = ChatRequest(messages=()).max_tokens
    headers = [(b"Host", point.netloc.encode("ascii"))]
    headers += [(k.encode("ascii"), v.encode("ascii")) for k, v in client_headers(
        chat_headers(config.model.api_key, stream=True), user_agent)]
    window = config.model.context_window

    def build(task: str) -> Wire | None:
        from minicode.provider.early import Wire

        messages = [*context, Message.user(task)]
        body = chat_body(model, messages, specs, profile, thinking, max_tokens, stream=True)
        data = _encode(body)
        if data is None or len(data) > window // 2:
            return None  # unencodable as is, or big enough that compaction may come first
        fields = [*headers, (b"Content-Length", str(len(data)).encode("ascii")),
                  (b"Content-Type", b"application/json")]
        return Wire(point.scheme, point.host, point.port, point.path, fields, data)

    return build


def _encode(body: object) -> bytes | None:
    """The body's bytes as httpx's ``json=`` encodes them; None for a lone surrogate (the
    adapter replaces those and encodes again: left to the normal path)."""
    import json

    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError):
        return None


def _profile(host_key: str, hostname: str, model: str, env: Mapping[str, str]) -> WireProfile:
    """The wire profile the adapter's first request uses: the learned one, else the heuristic."""
    from pathlib import Path

    from minicode.provider.wire import WireProfileCache, default_cache_path, heuristic_profile

    home = env.get("HOME")
    cached = WireProfileCache(default_cache_path(Path(home))).get(host_key, model) if home else None
    return cached or heuristic_profile(hostname, model)


def _send(build: Callable[[str], Wire | None], task: str, env: Mapping[str, str]) -> None:
    from minicode.provider import early

    try:
        wire = build(task)
    except Exception:  # noqa: BLE001 - the normal path builds it again and reports
        return
    if wire is None:
        return
    tls = None
    if wire.scheme == "https":
        from minicode.provider.tls import LazyTrustContext

        tls = LazyTrustContext(env)
    request = early.EarlyRequest(wire, tls)
    early.offer(request)
    request.start()
    _prestart_command_guard()


def _prestart_command_guard() -> None:
    """The request just sent offers ``bash`` (it declares every tool): start the command guard
    server now, while the model thinks and the agent loads, not ~50–100 ms later when the agent
    loop sends its first request — its start-up (~20 ms of a second Python, on the other core)
    is then over before a command in the first answer, or in the second, needs it."""
    from minicode.tools.specs import DECLARED

    if any(declared.name == "bash" for declared in DECLARED):
        from minicode.tools.guardlife import prestart

        prestart()


class ReadAhead:
    """Pipe mode: the first stdin lines, read on a thread up to the first non-blank one; when
    that is a task, ``on_task`` sends it. ``cli.plain.LineReader`` takes the lines first."""

    def __init__(self, stdin: IO[str], on_task: Callable[[str], None]) -> None:
        self.stream = stdin
        self._on_task = on_task
        self._lines: list[bytes] = []
        self._done = threading.Event()
        self.failure: OSError | ValueError | None = None

    def start(self) -> None:
        global _read_ahead
        _read_ahead = self
        threading.Thread(target=self._read, name="minicode-read-ahead", daemon=True).start()

    def _read(self) -> None:
        try:
            source = self.stream.buffer  # type: ignore[attr-defined]
            while line := source.readline():
                self._lines.append(line)
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                if text.strip():
                    self._first_task(text)
                    break
        except (OSError, ValueError) as e:
            self.failure = e
        finally:
            self._done.set()

    def _first_task(self, text: str) -> None:
        from minicode.cli.first_task import is_command

        if not is_command(text.strip()):
            try:
                self._on_task(text)
            except Exception:  # noqa: BLE001 - the line is still the first task, sent normally
                pass

    def wait(self, timeout: float) -> None:
        """Wait (at most ``timeout``) until the lines are read and the request, if any, sent."""
        self._done.wait(timeout)

    def lines(self) -> tuple[list[bytes], OSError | ValueError | None]:
        """Wait for the read-ahead; the raw lines it read and why reading failed, if it did."""
        self._done.wait()
        return self._lines, self.failure


_read_ahead: ReadAhead | None = None


def read_ahead_lines(stream: object) -> tuple[list[bytes], OSError | ValueError | None] | None:
    """The lines read ahead from ``stream`` (once), or None when none were."""
    global _read_ahead
    ahead = _read_ahead
    if ahead is None or ahead.stream is not stream:
        return None
    _read_ahead = None
    return ahead.lines()
