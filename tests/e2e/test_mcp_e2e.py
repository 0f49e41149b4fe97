"""MCP servers end to end: the real executable, the fake model server, and the SDK test server
(tests/mcp/server.py) given with --mcp-config: catalog, a call, approvals and rules, JSON
events, a session that resumes without the server, and --mcp."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.events import check_stream, of_type
from tests.support.fake_openai import Reply

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "server.py"


def _mcp_file(e2e, trust: bool = False) -> str:
    path = e2e.home / "mcp.toml"
    path.write_text(f'[mcp.servers.t]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(SERVER))}]\n'
                    f"trust = {'true' if trust else 'false'}\nstartup_timeout = 30\n")
    return str(path)


def _tool_results(request) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "tool"]


def test_catalog_then_a_call_with_an_allow_rule(e2e):
    e2e.server.script(
        Reply.tools(("mcp_tools", {})),
        Reply.tools(("t__echo", {"text": "hello"})),
        Reply.text("Done."),
    )
    r = e2e.run("--output", "json", "--mcp-config", _mcp_file(e2e), "--allow", "mcp(t__echo)", "use the echo tool",
                timeout=90)
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    finished = of_type(events, "tool_result")
    assert [(e["name"], e["status"]) for e in finished] == [("mcp_tools", "done"), ("t__echo", "done")]
    catalog, echoed = _tool_results(e2e.server.requests[2])
    assert "t__echo - Echo the text back." in catalog and "A second line" not in catalog
    assert echoed == "echo: hello"
    # one tool declared for every server tool, the same in every request: the prefix never moves
    tools = [[t["function"]["name"] for t in req.body["tools"]] for req in e2e.server.requests]
    assert tools[0] == tools[1] == tools[2] and tools[0][-1] == "mcp_tools" and "t__echo" not in tools[0]
    # the session resumes without the server (nothing of MCP is needed to read it back)
    e2e.server.script(Reply.text("Still here."))
    again = e2e.run("--output", "json", "-c", "and now?", timeout=60)
    assert again.code == 0, again.stderr
    assert "echo: hello" in _tool_results(e2e.server.requests[-1])


def test_a_deny_rule_wins_over_trust(e2e):
    e2e.server.script(Reply.tools(("t__echo", {"text": "no"})), Reply.text("Denied."))
    r = e2e.run("--output", "json", "--mcp-config", _mcp_file(e2e, trust=True), "--deny", "mcp(t__*)", "echo",
                timeout=90)
    assert r.code == 0, r.stderr
    assert _tool_results(e2e.server.requests[1]) == ["denied by rule mcp(t__*)"]


def test_a_trusted_server_needs_no_approval_and_an_untrusted_one_does(e2e):
    e2e.server.script(Reply.tools(("t__add", {"a": 1, "b": 2})), Reply.text("3."))
    r = e2e.run("--output", "json", "--mcp-config", _mcp_file(e2e, trust=True), "add", timeout=90)
    assert r.code == 0, r.stderr
    assert _tool_results(e2e.server.requests[1]) == ["3.0"]
    e2e.server.script(Reply.tools(("t__add", {"a": 1, "b": 2})), Reply.text("Asked."))
    r = e2e.run("--output", "json", "--mcp-config", _mcp_file(e2e), "add", timeout=90)
    assert r.code == 0, r.stderr
    (result,) = _tool_results(e2e.server.requests[-1])
    assert result.startswith("denied") and "mcp(t__add)" in result  # nobody to ask: the rule that would allow it


def test_mcp_lists_the_servers_and_exits(e2e):
    broken = e2e.home / "broken.toml"
    broken.write_text(_mcp_path_text(e2e) + '[mcp.servers.gone]\ncommand = ["/nonexistent/mcp"]\nstartup_timeout = 5\n')
    r = e2e.run("--mcp", "--mcp-config", str(broken), timeout=90)
    assert r.code == 1, r.stderr  # a server failed
    assert "t  ready  7 tools" in r.stdout and "t__echo" in r.stdout
    assert "gone  failed" in r.stdout and "cannot start /nonexistent/mcp" in r.stdout


def test_mcp_with_working_servers_exits_0(e2e):
    r = e2e.run("--mcp", "--mcp-config", _mcp_file(e2e), timeout=90)
    assert r.code == 0, r.stderr
    assert r.stdout.startswith("t  ready  7 tools\n")


def _mcp_path_text(e2e) -> str:
    return Path(_mcp_file(e2e)).read_text()


def test_a_bad_mcp_config_is_a_config_error(e2e):
    bad = e2e.home / "bad.toml"
    bad.write_text('[mcp.servers.t]\ncommand = ["x"]\nshell = true\n')
    r = e2e.run("--output", "json", "--mcp-config", str(bad), "hi")
    assert r.code == 2
    assert "unknown key shell" in r.stdout + r.stderr


def test_doctor_includes_each_server(e2e):
    from tests.e2e.test_doctor_e2e import competent

    e2e.server.default = competent()
    e2e.server.models = [{"id": "fake-model", "object": "model"}]
    extra = e2e.home / "both.toml"
    extra.write_text(_mcp_path_text(e2e) + '[mcp.servers.gone]\ncommand = ["/nonexistent/mcp"]\n')
    r = e2e.run("--doctor", "--mcp-config", str(extra), timeout=90)
    assert "MCP servers:\n  t  ready, 7 tools\n  gone  failed: " in r.stdout, r.stdout + r.stderr
    r = e2e.run("--doctor", "--json", "--mcp-config", str(extra), timeout=90)
    servers = json.loads(r.stdout)["mcp_servers"]
    assert [(s["name"], s["state"], s["tools"]) for s in servers] == [("t", "ready", 7), ("gone", "failed", 0)]


def test_a_projects_server_does_not_start_unconfirmed(e2e):
    marker = e2e.home / "started"
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text() + f'[mcp.servers.evil]\ncommand = ["touch", {json.dumps(str(marker))}]\n')
    r = e2e.run("--output", "json", "hi")
    assert r.code == 2
    assert "would start or connect to 1 MCP server" in r.stdout + r.stderr
    r = e2e.run("--mcp")
    assert r.code == 2 and not marker.exists()
