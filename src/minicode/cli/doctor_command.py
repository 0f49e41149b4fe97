"""``minicode --doctor [--json]``: probe the configured endpoint, print the report, exit.

Owns the CLI side: the up-front notice of what it costs (stderr), building the provider the
way a session does (same wire-profile cache, so what it learns is saved for later runs), the
table or the JSON object (stdout), SIGINT/SIGTERM (exit 130) and the exit code: 0 when the
endpoint is usable, 1 when not. Errors in the configuration file never get here (exit 2
earlier); what the provider refuses to be built with (a CA bundle variable naming nothing
readable) is the report's finding, with exit 2 too.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence, TextIO

from minicode.cli.args import Options
from minicode.config import Config
from minicode.errors import ConfigError
from minicode.exitcodes import EXIT_INTERRUPTED
from minicode.stop_signal import signals_cancel

if TYPE_CHECKING:
    from minicode.doctor.report import Report
    from minicode.provider.types import ToolSpec

__all__ = ["DEFAULT_PROBE_TIMEOUT", "run"]

DEFAULT_PROBE_TIMEOUT = 60.0
"""Seconds each request of the doctor may take (``--timeout`` changes it): thinking models
can be slow to start, but a user waiting on a diagnosis should not wait forever."""


def run(options: Options, config: Config, env: Mapping[str, str], out: TextIO | None = None,
        err: TextIO | None = None, workspace: Path | None = None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    return asyncio.run(_main(options, config, env, out, err, workspace or Path.cwd()))


async def _main(options: Options, config: Config, env: Mapping[str, str], out: TextIO, err: TextIO,
                workspace: Path) -> int:
    from minicode.doctor.diagnose import diagnose, misconfigured
    from minicode.provider.factory import create_probeable_provider, tls_context
    from minicode.provider.wire import default_cache_path

    home = env.get("HOME")
    cache = default_cache_path(Path(home)) if home else None
    timeout = options.timeout or DEFAULT_PROBE_TIMEOUT
    try:
        provider = create_probeable_provider(config.model, wire_cache=cache, env=env)
    except ConfigError as e:
        return _write(misconfigured(config, e), options.json, out)
    print(f"minicode: checking {config.model.base_url} with model {config.model.name}; this sends"
          " 2 small model requests (a few hundred tokens)", file=err, flush=True)
    task = asyncio.current_task()
    assert task is not None
    servers: list[dict[str, object]] = []
    try:
        with signals_cancel(task):
            report, servers = await asyncio.gather(
                diagnose(config, env=env, provider=provider, tls_context=lambda: tls_context(env),
                         wire_cache=cache, timeout=timeout, text_calls=_calls_in_text),
                _mcp_servers(config, workspace, env))
    except asyncio.CancelledError:
        print("minicode: interrupted", file=err)
        return EXIT_INTERRUPTED
    finally:
        await provider.aclose()
    return _write(report, options.json, out, servers)


def _write(report: Report, as_json: bool, out: TextIO, servers: Sequence[dict[str, object]] = ()) -> int:
    out.write(_with_mcp(report.to_json(), servers) + "\n" if as_json else report.table() + _mcp_table(servers))
    out.flush()
    return report.exit_code


async def _mcp_servers(config: Config, workspace: Path, env: Mapping[str, str]) -> list[dict[str, object]]:
    """Each configured MCP server connected once (at most its start-up time-out, all at once):
    its state, tool count and last error. A failed server is reported, not the doctor's failure;
    one that asks for a sign-in is "needs sign-in" (the doctor never waits for a browser)."""
    if not config.mcp:
        return []
    from minicode.mcp_client.signin_settings import SignInSettings
    from minicode.mcp_client.manager import McpManager

    manager = McpManager(config.mcp, workspace, SignInSettings.from_env(env, attended=False))
    manager.start()
    try:
        await manager.settle(max(s.startup_timeout for s in config.mcp))
        return [{"name": link.name, "state": link.state.value, "tools": len(link.tools), "error": link.error or None}
                for link in manager.links.values()]
    finally:
        await manager.close()


def _with_mcp(report_json: str, servers: Sequence[dict[str, object]]) -> str:
    if not servers:
        return report_json
    import json

    from minicode import jsonsafe

    data = jsonsafe.loads(report_json)
    assert isinstance(data, dict)  # the report's own JSON: an object
    data["mcp_servers"] = list(servers)
    return json.dumps(data)


def _mcp_table(servers: Sequence[dict[str, object]]) -> str:
    from minicode.cli.frontends.shared.shown_call import reveal

    if not servers:
        return ""
    lines = ["", "MCP servers:"]
    for server in servers:
        state = f"{server['state']}, {server['tools']} tools" if server["state"] == "ready" else str(server["state"])
        error = f": {server['error']}" if server["error"] else ""
        lines.append(reveal(f"  {server['name']}  {state}{error}"))
    return "\n".join(lines) + "\n"


def _calls_in_text(text: str, tools: Sequence[ToolSpec]) -> list[tuple[str, str]] | None:
    """The calls a text answer is, by the run's own rule (``agent.text_calls``): the doctor
    calls an endpoint usable exactly when a task would get its calls."""
    from minicode.agent.text_calls import recover_calls

    found = recover_calls(text, tools)
    return None if found is None else [(call.name, call.arguments) for call in found.calls]
