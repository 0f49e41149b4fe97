"""What `minicode --acp` costs an editor: start-up to the first answer, a session, a turn, a load.

Run: .venv/bin/python bench/acp_turns.py [--runs 5] [--stream 2000]

The real `minicode --acp` driven by the ACP SDK's client side (tests/support/acp_editor.py)
against the fake server on 127.0.0.1, ``--runs`` times, each a fresh process and workspace:

- ``initialize``: process start to the initialize answer (the editor's wait before anything);
- ``session/new``: the session opened (config, session file, provider);
- ``turn``: one prompt with a write the editor approves and a final answer (two model calls);
- ``stream``: one prompt whose answer streams ``--stream`` chunks of 4 characters (instant):
  the updates that reached the editor and the time from the prompt to its answer;
- ``session/load``: a new process loading the session the runs above wrote (replayed updates).

Prints the median and the worst of each, in milliseconds, and the update counts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp import PROTOCOL_VERSION, text_block  # noqa: E402

from minicode.trust.project_config import confirm_written  # noqa: E402
from tests.support.acp_editor import Editor, running_agent  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, Reply  # noqa: E402

MINICODE = str(Path(sys.executable).parent / "minicode")
KEY_VAR = "FAKE_PROVIDER_KEY"


async def one_run(server: FakeOpenAI, root: Path, stream: int) -> dict[str, float]:
    workspace = root / "project"
    (workspace / "config").mkdir(parents=True)
    home = root / "home"
    home.mkdir()
    config = workspace / "config" / "config.toml"
    config.write_text(f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key_env = "{KEY_VAR}"\n')
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), KEY_VAR: "sk-bench", "LANG": "C.UTF-8"}
    confirm_written(config, workspace, env)
    server.script(Reply.tool("write", path="a.txt", content="hi\n"), Reply.text("Wrote a.txt."),
                  Reply.text("x" * (4 * stream), chunk_size=4))
    editor = Editor(answer="allow_once")
    out: dict[str, float] = {}
    started = time.perf_counter()
    async with running_agent([MINICODE, "--acp"], workspace, env, editor) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=editor.capabilities())
        out["initialize"] = time.perf_counter() - started
        t = time.perf_counter()
        session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        out["session/new"] = time.perf_counter() - t
        t = time.perf_counter()
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("make a.txt")])
        out["turn"] = time.perf_counter() - t
        before = len(editor.updates)
        t = time.perf_counter()
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("stream")])
        out["stream"] = time.perf_counter() - t
        out["stream updates"] = len(editor.updates) - before
    loader = Editor()
    async with running_agent([MINICODE, "--acp"], workspace, env, loader) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=loader.capabilities())
        t = time.perf_counter()
        await agent.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        out["session/load"] = time.perf_counter() - t
        out["replayed updates"] = len(loader.updates)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--stream", type=int, default=2000, help="chunks in the streamed answer")
    args = parser.parse_args()
    rows: dict[str, list[float]] = {}
    with FakeOpenAI() as server:
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                for name, value in asyncio.run(one_run(server, Path(tmp), args.stream)).items():
                    rows.setdefault(name, []).append(value)
    print(f"minicode --acp, {args.runs} runs (median / worst)")
    for name, values in rows.items():
        if name.endswith("updates"):
            print(f"  {name:<16} {statistics.median(values):8.0f}   {max(values):8.0f}")
        else:
            print(f"  {name:<16} {statistics.median(values) * 1000:6.0f} ms {max(values) * 1000:6.0f} ms")


if __name__ == "__main__":
    main()
