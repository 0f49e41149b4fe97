"""A third-party ACP client against `minicode --acp`: the TypeScript SDK from npm
(``@agentclientprotocol/sdk``, its example client made non-interactive: bench/acp_client/client.mjs)
runs one turn with a read through the client and a write it approves, against the scripted
server. Skipped when node/npm are missing or the package cannot be installed (no registry)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Env, minicode_executable
from tests.support.fake_openai import Reply

CLIENT = Path(__file__).resolve().parents[2] / "bench" / "acp_client"


@pytest.fixture(scope="module")
def client_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    where = tmp_path_factory.mktemp("acp_client")
    for name in ("package.json", "client.mjs"):
        shutil.copy(CLIENT / name, where / name)
    try:
        installed = subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=where, capture_output=True,
                                   text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip("npm install timed out (no registry?)")
    if installed.returncode != 0:
        pytest.skip(f"npm install failed (no registry?): {installed.stderr[-500:]}")
    return where


def test_the_typescript_sdk_client_runs_a_turn_with_a_read_and_an_approved_write(e2e: Env, client_dir: Path) -> None:
    (e2e.workspace / "notes.txt").write_text("remember the milk\n")
    e2e.server.script(Reply.tool("read", path="notes.txt"), Reply.tool("write", path="todo.txt", content="milk\n"),
                      Reply.text("Noted in todo.txt."))
    proc = subprocess.run(
        ["node", str(client_dir / "client.mjs"), "--prompt", "note it", "--", minicode_executable(), "--acp"],
        cwd=e2e.workspace, env=e2e.environ(), capture_output=True, text=True, timeout=120, start_new_session=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["protocolVersion"] == 1 and seen["agent"]["name"] == "minicode"
    assert seen["stopReason"] == "end_turn" and seen["text"] == "Noted in todo.txt."
    assert seen["reads"] == [str(e2e.workspace / "notes.txt")]  # through the client's fs/read_text_file
    assert [p["title"].split(" · ")[0] for p in seen["permissions"]] == ["write todo.txt create"]
    assert (e2e.workspace / "todo.txt").read_text() == "milk\n"
    assert "remember the milk" in e2e.server.requests[1].messages[-1]["content"]


def test_a_client_that_asks_for_an_unknown_session_gets_an_error_not_a_crash(e2e: Env, client_dir: Path) -> None:
    script = client_dir / "bad_session.mjs"
    script.write_text(
        'import { spawn } from "node:child_process";\nimport { Writable, Readable } from "node:stream";\n'
        'import * as acp from "@agentclientprotocol/sdk";\n'
        'const p = spawn(process.argv[2], ["--acp"], { stdio: ["pipe", "pipe", "inherit"] });\n'
        "const c = new acp.ClientSideConnection(() => ({ sessionUpdate: async () => {}, requestPermission: async () => ({}) }),\n"
        "  acp.ndJsonStream(Writable.toWeb(p.stdin), Readable.toWeb(p.stdout)));\n"
        "await c.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });\n"
        'try { await c.prompt({ sessionId: "nope", prompt: [{ type: "text", text: "hi" }] }); console.log("answered"); }\n'
        "catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }\n"
        "p.stdin.end(); p.on(\"exit\", (code) => { console.log(JSON.stringify({ exit: code })); });\n"
    )
    proc = subprocess.run(["node", str(script), minicode_executable()], cwd=e2e.workspace, env=e2e.environ(),
                          capture_output=True, text=True, timeout=60, start_new_session=True)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["code"] == -32602 and "no open session" in lines[0]["message"], proc.stderr
    assert lines[1] == {"exit": 0}
