"""End-to-end: `minicode --acp` driven by the ACP SDK's client side over the real executable's pipes.

A turn with a tool call and a permission request, every stdout line a JSON-RPC message,
"always allow" saving the rule, cancel (Esc's path: saved), a terminal-started session loaded
in the editor and an editor session continued in the terminal, reads through the editor's
buffers, and bad input: malformed lines, an unknown method, a client that vanishes mid-turn.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, text_block

from tests.e2e.conftest import Env
from tests.support.acp_editor import Editor, RunningAgent, running_agent, text_of
from tests.support.fake_openai import Reply

TIMEOUT = 60


def _background(coroutine: Any) -> asyncio.Future[Any]:
    """A prompt left running when the agent goes away: its ConnectionError is expected."""
    future = asyncio.ensure_future(coroutine)
    future.add_done_callback(lambda f: f.cancelled() or f.exception())
    return future


def _run(e2e: Env, editor: Editor, *args: str) -> running_agent:  # type: ignore[valid-type]
    return running_agent(e2e.argv("--acp", *args), e2e.workspace, e2e.environ(), editor)


async def _start(agent: RunningAgent, editor: Editor) -> str:
    answer = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=editor.capabilities())
    assert answer.protocol_version == 1 and answer.agent_capabilities.load_session
    return ""


async def _new(agent: RunningAgent, e2e: Env) -> str:
    created = await agent.conn.new_session(cwd=str(e2e.workspace), mcp_servers=[])
    return created.session_id


def test_a_turn_streams_the_answer_and_asks_the_editor_before_a_write(e2e: Env) -> None:
    e2e.server.script(Reply(kind="tools", reasoning="I should write it", calls=[("write", json.dumps({"path": "a.txt", "content": "hi\n"}))]),
                      Reply.text("Wrote a.txt."))
    editor = Editor(answer="allow_once")

    async def scenario() -> None:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            answer = await agent.conn.prompt(session_id=session_id, prompt=[text_block("make a.txt")])
            assert answer.stop_reason == "end_turn"
            agent.process.stdin.close()  # type: ignore[union-attr]
            assert await asyncio.wait_for(agent.process.wait(), TIMEOUT) == 0
            messages = agent.stdout_messages()  # every stdout line is JSON-RPC, nothing else
            assert any(m.get("method") == "session/request_permission" for m in messages)

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert (e2e.workspace / "a.txt").read_text() == "hi\n"
    assert text_of(editor.of_kind("agent_message_chunk")) == "Wrote a.txt."
    assert text_of(editor.of_kind("agent_thought_chunk")) == "I should write it"
    [started] = editor.of_kind("tool_call")
    assert started.kind == "edit" and started.title.startswith("write a.txt")
    assert started.locations[0].path == str(e2e.workspace / "a.txt")
    assert started.content[0].type == "diff" and started.content[0].new_text == "hi\n"
    [(asked, options)] = editor.permissions
    assert asked.tool_call_id == started.tool_call_id and asked.content[0].new_text == "hi\n"
    assert [o.option_id for o in options][0] == "allow_once" and options[-1].kind == "reject_once"
    statuses = [u.status for u in editor.of_kind("tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    assert [c["name"] for c in editor.of_kind("available_commands_update")[0].model_dump()["available_commands"]]


def test_a_rejected_call_is_denied_and_the_model_is_told(e2e: Env) -> None:
    e2e.server.script(Reply.tool("bash", command="touch made.txt"), Reply.text("could not"))
    editor = Editor(answer="reject")

    async def scenario() -> None:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            answer = await agent.conn.prompt(session_id=session_id, prompt=[text_block("make it")])
            assert answer.stop_reason == "end_turn"

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert not (e2e.workspace / "made.txt").exists()
    assert "denied" in e2e.server.requests[1].messages[-1]["content"]
    assert [u.status for u in editor.of_kind("tool_call_update")] == ["failed"]
    assert editor.of_kind("tool_call")[0].kind == "execute"


def test_always_allow_saves_the_suggested_rule_and_the_next_call_is_not_asked(e2e: Env) -> None:
    e2e.server.script(Reply.tool("bash", command="touch one.txt"), Reply.text("one"),
                      Reply.tool("bash", command="touch two.txt"), Reply.text("two"))
    editor = Editor(answer="allow_always")

    async def scenario() -> None:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("one")])
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("two")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert (e2e.workspace / "one.txt").exists() and (e2e.workspace / "two.txt").exists()
    assert len(editor.permissions) == 1  # the saved rule allowed the second one
    assert "bash(touch *)" in (e2e.workspace / ".minicode" / "local" / "permissions.toml").read_text()


def test_cancel_stops_the_turn_like_esc_and_the_session_is_saved(e2e: Env) -> None:
    e2e.server.script(Reply.hang("Working on"))
    editor = Editor()

    async def scenario() -> str:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            prompt = asyncio.ensure_future(agent.conn.prompt(session_id=session_id, prompt=[text_block("long task")]))
            assert await asyncio.to_thread(e2e.server.wait_for_requests, 1)
            while not editor.of_kind("agent_message_chunk"):
                await asyncio.sleep(0.02)
            try:
                await agent.conn.prompt(session_id=session_id, prompt=[text_block("meanwhile")])
            except RequestError as e:
                assert "already running" in str(e)
            else:
                raise AssertionError("a second prompt ran alongside the first")
            await agent.conn.cancel(session_id=session_id)
            assert (await prompt).stop_reason == "cancelled"
            return session_id

    session_id = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    records = [json.loads(line) for line in e2e.session_file(session_id).read_text().splitlines()]
    assert any(r.get("type") == "turn_end" and r.get("status") == "interrupted" for r in records), records


def test_a_terminal_session_loads_in_the_editor_and_continues_in_the_terminal(e2e: Env) -> None:
    e2e.server.script(Reply.tool("read", path="notes.txt"), Reply.text("first answer"))
    (e2e.workspace / "notes.txt").write_text("a note\n")
    first = e2e.run("remember the notes")
    assert first.code == 0, first.stderr
    session_id = first.session_id
    e2e.server.script(Reply.text("second answer"))
    editor = Editor()

    async def scenario() -> None:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            await agent.conn.load_session(cwd=str(e2e.workspace), session_id=session_id, mcp_servers=[])
            replayed = list(editor.updates)
            assert text_of([u for u in replayed if u.session_update == "user_message_chunk"]) == "remember the notes"
            assert [u.title for u in replayed if u.session_update == "tool_call"] == ["read notes.txt"]
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("and now?")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    sent = e2e.server.requests[-1].messages
    assert [m["content"] for m in sent if m["role"] == "assistant" and m.get("content")] == ["first answer"]
    assert sent[-1]["content"].endswith("and now?")
    e2e.server.script(Reply.text("third answer"))
    back = e2e.run("--session", session_id, "and in the terminal?")  # the editor's turn is in the file
    assert back.code == 0 and back.stdout == "third answer\n", back.stderr
    contents = [m.get("content") for m in e2e.server.requests[-1].messages]
    assert "second answer" in contents


def test_reads_go_through_the_editor_buffer_when_it_offers_them(e2e: Env) -> None:
    (e2e.workspace / "main.py").write_text("on disk\n")
    e2e.server.script(Reply.tool("read", path="main.py"), Reply.tool("read", path="../outside.txt"), Reply.text("ok"))
    (e2e.workspace.parent / "outside.txt").write_text("secret\n")
    buffers = {str(e2e.workspace / "main.py"): "unsaved in the editor\n",
               str(e2e.workspace.parent / "outside.txt"): "never asked for\n"}
    editor = Editor(buffers=buffers)

    async def scenario() -> None:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("read it")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert "unsaved in the editor" in e2e.server.requests[1].messages[-1]["content"]
    assert "outside" in e2e.server.requests[2].messages[-1]["content"]  # refused by minicode's own check
    assert editor.reads == [str(e2e.workspace / "main.py")]


def test_without_the_editor_offering_reads_the_disk_is_read(e2e: Env) -> None:
    (e2e.workspace / "main.py").write_text("on disk\n")
    e2e.server.script(Reply.tool("read", path="main.py"), Reply.text("ok"))
    editor = Editor(buffers=None)

    async def scenario() -> None:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("read it")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert "on disk" in e2e.server.requests[1].messages[-1]["content"] and editor.reads == []


def test_malformed_lines_and_unknown_methods_get_errors_and_the_connection_goes_on(e2e: Env) -> None:
    e2e.server.script(Reply.text("still here"))
    editor = Editor()

    async def scenario() -> RunningAgent:
        async with _run(e2e, editor) as agent:
            agent.write_raw(b"this is not json\n[1, 2]\n{\"jsonrpc\": \"2.0\", \"id\": [1], \"method\": \"x\"}\n"
                            + b"[" * 100000 + b"\n"
                            + b'{"jsonrpc": "2.0", "id": "u1", "method": "session/teleport", "params": {}}\n')
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            answer = await agent.conn.prompt(session_id=session_id, prompt=[text_block("hello")])
            assert answer.stop_reason == "end_turn"
            return agent

    agent = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    errors = [(m["id"], m["error"]["code"]) for m in agent.stdout_messages() if "error" in m]
    assert errors == [(None, -32700), (None, -32600), (None, -32600), (None, -32700), ("u1", -32601)]
    assert text_of(editor.of_kind("agent_message_chunk")) == "still here"
    assert b"Traceback" not in agent.stderr


def test_a_client_that_vanishes_mid_turn_leaves_a_saved_session_and_a_clean_exit(e2e: Env) -> None:
    e2e.server.script(Reply.hang("Half an answer"))
    editor = Editor()

    async def scenario() -> tuple[str, int, bytes]:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            _background(agent.conn.prompt(session_id=session_id, prompt=[text_block("long task")]))
            assert await asyncio.to_thread(e2e.server.wait_for_requests, 1)
            agent.process.stdin.close()  # type: ignore[union-attr]  # the editor is gone
            code = await asyncio.wait_for(agent.process.wait(), TIMEOUT)
            await asyncio.sleep(0)
            return session_id, code, bytes(agent.stderr)

    session_id, code, stderr = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert code == 0, stderr
    assert b"Traceback" not in stderr
    records = [json.loads(line) for line in e2e.session_file(session_id).read_text().splitlines()]
    assert any(r.get("type") == "turn_end" for r in records), records
    assert f"minicode --session {session_id}".encode() in stderr


def test_an_acp_run_loads_the_sdk_and_no_ui_or_tracing(e2e: Env) -> None:
    """The control of the pipe run's import test (tests/e2e/test_tracing_e2e.py): --acp does
    load the SDK, and still no prompt_toolkit, rich, langfuse or OpenTelemetry SDK (the ACP SDK
    asks for the OpenTelemetry API when it is installed, acp/telemetry.py: no-op spans)."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "minicode", "--acp"], cwd=e2e.workspace, env=e2e.environ(),
        input=json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}) + "\n",
        capture_output=True, text=True, timeout=60, start_new_session=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()
               if line.startswith("import time:") and line.count("|") == 2}
    assert "acp" in modules
    assert not {m for m in modules if m.split(".")[0] in ("prompt_toolkit", "rich", "langfuse")}
    assert not {m for m in modules if m.startswith("opentelemetry.sdk")}
    [line] = proc.stdout.splitlines()
    assert json.loads(line)["result"]["protocolVersion"] == 1


def test_acp_refuses_a_task_and_a_broken_config_is_exit_2(e2e: Env) -> None:
    refused = e2e.run("--acp", "do something")
    assert refused.code == 2 and "--acp takes no TASK" in refused.stderr and refused.stdout == ""
    (e2e.workspace / "config" / "config.toml").write_text("[model\n")
    broken = e2e.run("--acp", "--config", "config/config.toml")
    assert broken.code == 2 and "minicode: error:" in broken.stderr and broken.stdout == ""


def test_act_mode_runs_without_asking_and_stdout_stays_the_protocols_when_a_command_prints(e2e: Env) -> None:
    e2e.server.script(Reply.tool("bash", command="echo printed-by-bash; echo to-stderr >&2"), Reply.text("ran"))
    editor = Editor(answer="reject")

    async def scenario() -> RunningAgent:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            created = await agent.conn.new_session(cwd=str(e2e.workspace), mcp_servers=[])
            assert created.modes.current_mode_id == "ask" and [m.id for m in created.modes.available_modes] == ["ask", "act",
                                                                                                              "plan"]
            await agent.conn.set_session_mode(session_id=created.session_id, mode_id="act")
            answer = await agent.conn.prompt(session_id=created.session_id, prompt=[text_block("run it")])
            assert answer.stop_reason == "end_turn"
            try:
                await agent.conn.set_session_mode(session_id=created.session_id, mode_id="yolo")
            except RequestError as e:
                assert "unknown mode" in str(e)
            else:
                raise AssertionError("an unknown mode was accepted")
            return agent

    agent = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert editor.permissions == []
    assert "printed-by-bash" in e2e.server.requests[1].messages[-1]["content"]
    agent.stdout_messages()  # every line JSON-RPC: the command's output went to the model, not stdout
    assert [u.current_mode_id for u in editor.of_kind("current_mode_update")] == ["act"]


def test_yes_starts_in_act_mode(e2e: Env) -> None:
    editor = Editor()

    async def scenario() -> str:
        async with _run(e2e, editor, "--yes") as agent:
            await _start(agent, editor)
            created = await agent.conn.new_session(cwd=str(e2e.workspace), mcp_servers=[])
            return created.modes.current_mode_id

    assert asyncio.run(asyncio.wait_for(scenario(), TIMEOUT)) == "act"


def test_model_and_thinking_are_config_options_and_slash_commands_run_without_the_model(e2e: Env) -> None:
    e2e.server.script(Reply.text("answer from the other model"))
    editor = Editor()

    async def scenario() -> str:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            created = await agent.conn.new_session(cwd=str(e2e.workspace), mcp_servers=[])
            options = {o.id: o for o in created.config_options}
            assert options["model"].current_value == "fake-model" and options["thinking"].current_value == "default"
            changed = await agent.conn.set_config_option(config_id="thinking", session_id=created.session_id, value="high")
            assert {o.id: o.current_value for o in changed.config_options}["thinking"] == "high"
            try:
                await agent.conn.set_config_option(config_id="thinking", session_id=created.session_id, value="extreme")
            except RequestError as e:
                assert "unknown thinking level" in str(e)
            else:
                raise AssertionError("an unknown level was accepted")
            await agent.conn.prompt(session_id=created.session_id, prompt=[text_block("/model other-model")])
            await agent.conn.prompt(session_id=created.session_id, prompt=[text_block("/check")])
            assert len(e2e.server.requests) == 0  # commands call no model
            await agent.conn.prompt(session_id=created.session_id, prompt=[text_block("hello")])
            return text_of(editor.of_kind("agent_message_chunk"))

    said = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert "model other-model" in said and "no acceptance checks" in said
    body = e2e.server.requests[0].body
    assert body["model"] == "other-model"
    names = [c.name for c in editor.of_kind("available_commands_update")[0].available_commands]
    assert {"compact", "undo", "model", "think", "check", "permissions"} <= set(names)


def test_undo_asks_in_the_editor_and_restores_on_yes(e2e: Env) -> None:
    (e2e.workspace / "a.txt").write_text("before\n")
    e2e.server.script(Reply.tool("write", path="a.txt", content="after\n"), Reply.text("changed"))
    editor = Editor(answer="allow_once")

    async def scenario() -> None:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("change it")])
            assert (e2e.workspace / "a.txt").read_text() == "after\n"
            editor.answer = "yes"
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("/undo")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert (e2e.workspace / "a.txt").read_text() == "before\n"
    assert editor.permissions[-1][0].title == "restore these files"


def test_a_client_that_vanishes_while_a_permission_is_asked_leaves_the_call_undone_and_saved(e2e: Env) -> None:
    e2e.server.script(Reply.tool("bash", command="touch never.txt"), Reply.text("unreachable"))
    editor = Editor(answer="hang")

    async def scenario() -> tuple[str, int, bytes]:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            _background(agent.conn.prompt(session_id=session_id, prompt=[text_block("touch it")]))
            await editor.asked.wait()
            agent.process.stdin.close()  # type: ignore[union-attr]
            code = await asyncio.wait_for(agent.process.wait(), TIMEOUT)
            return session_id, code, bytes(agent.stderr)

    session_id, code, stderr = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert code == 0 and b"Traceback" not in stderr, stderr
    assert not (e2e.workspace / "never.txt").exists()
    records = [json.loads(line) for line in e2e.session_file(session_id).read_text().splitlines()]
    assert [r["role"] for r in records if r.get("type") == "message"][:3] == ["user", "assistant", "tool"]
    assert any(r.get("type") == "turn_end" for r in records)


def test_sigterm_mid_turn_saves_the_session_and_exits_130(e2e: Env) -> None:
    import signal

    e2e.server.script(Reply.hang("Half"))
    editor = Editor()

    async def scenario() -> tuple[str, int]:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            _background(agent.conn.prompt(session_id=session_id, prompt=[text_block("long")]))
            assert await asyncio.to_thread(e2e.server.wait_for_requests, 1)
            agent.process.send_signal(signal.SIGTERM)
            return session_id, await asyncio.wait_for(agent.process.wait(), TIMEOUT)

    session_id, code = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert code == 130
    records = [json.loads(line) for line in e2e.session_file(session_id).read_text().splitlines()]
    assert any(r.get("type") == "turn_end" and r.get("status") == "interrupted" for r in records), records


def test_a_prompt_for_an_unknown_session_and_a_bad_directory_are_errors(e2e: Env) -> None:
    editor = Editor()

    async def scenario() -> list[str]:
        said = []
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            for call in (agent.conn.prompt(session_id="nope", prompt=[text_block("hi")]),
                         agent.conn.new_session(cwd="relative/dir", mcp_servers=[]),
                         agent.conn.load_session(cwd=str(e2e.workspace), session_id="zzzz", mcp_servers=[])):
                try:
                    await call
                except RequestError as e:
                    said.append(str(e))
        return said

    said = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert len(said) == 3 and "no open session" in said[0] and "not an existing absolute directory" in said[1]
    assert said[2].startswith("minicode: ")


def test_rules_decide_before_the_editor_is_asked_and_deny_wins_over_act(e2e: Env) -> None:
    (e2e.workspace / "keep.txt").write_text("precious\n")
    e2e.server.script(Reply.tool("bash", command="touch allowed.txt"), Reply.tool("bash", command="rm -f keep.txt"),
                      Reply.text("done"))
    editor = Editor(answer="allow_once")

    async def scenario() -> None:
        async with _run(e2e, editor, "--yes", "--allow", "bash(touch *)", "--deny", "bash(rm *)") as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("go")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert (e2e.workspace / "allowed.txt").exists() and (e2e.workspace / "keep.txt").read_text() == "precious\n"
    assert editor.permissions == []
    assert e2e.server.requests[2].messages[-1]["content"] == "denied by rule bash(rm *)"


def test_the_editor_lists_the_directorys_sessions_newest_first(e2e: Env) -> None:
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    first = e2e.run("the first task")
    second = e2e.run("the second task")
    assert first.code == 0 and second.code == 0
    editor = Editor()

    async def scenario() -> tuple[Any, Any]:
        async with _run(e2e, editor) as agent:
            answer = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=editor.capabilities())
            assert answer.agent_capabilities.session_capabilities.list is not None
            listed = await agent.conn.list_sessions(cwd=str(e2e.workspace))
            empty = await agent.conn.list_sessions(cwd=str(e2e.workspace / "config"))
            return listed, empty

    listed, empty = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert [(s.session_id, s.title) for s in listed.sessions] == [(second.session_id, "the second task"),
                                                                   (first.session_id, "the first task")]
    assert listed.next_cursor is None and listed.sessions[0].updated_at.endswith("Z")
    assert empty.sessions == []


def _buffer_edit(e2e: Env, editor: Editor) -> None:
    """The model reads main.py (the editor holds an unsaved line) and edits that line."""
    e2e.server.script(Reply.tool("read", path="main.py"),
                      Reply.tool("edit", path="main.py", old_text="c = 3  # unsaved", new_text="c = 4"),
                      Reply.text("edited"))

    async def scenario() -> None:
        async with _run(e2e, editor, "--yes") as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("fix c")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))


def test_an_editor_that_takes_writes_has_its_buffer_edited_and_given_the_new_text(e2e: Env) -> None:
    path = e2e.workspace / "main.py"
    path.write_text("a = 1\nb = 2\n")
    editor = Editor(buffers={str(path): "a = 1\nb = 2\nc = 3  # unsaved\n"}, takes_writes=True)
    _buffer_edit(e2e, editor)
    assert path.read_text() == "a = 1\nb = 2\nc = 4\n"  # minicode's own write, of the text the model read
    assert editor.written == [(str(path), "a = 1\nb = 2\nc = 4\n")]
    assert e2e.server.requests[2].messages[-1]["content"].startswith("Edited main.py: 1 replacement")


def test_without_editor_writes_an_edit_changes_the_disk_and_a_buffer_only_span_is_a_miss(e2e: Env) -> None:
    path = e2e.workspace / "main.py"
    path.write_text("a = 1\nb = 2\n")
    editor = Editor(buffers={str(path): "a = 1\nb = 2\nc = 3  # unsaved\n"}, takes_writes=False)
    _buffer_edit(e2e, editor)
    assert path.read_text() == "a = 1\nb = 2\n" and editor.written == []
    assert "old_text" in e2e.server.requests[2].messages[-1]["content"]  # the miss, told to the model


def test_a_write_is_given_to_an_editor_that_takes_writes(e2e: Env) -> None:
    e2e.server.script(Reply.tool("write", path="new.txt", content="fresh\n"), Reply.text("made"))
    editor = Editor(buffers={}, takes_writes=True)

    async def scenario() -> None:
        async with _run(e2e, editor, "--yes") as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("make it")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert (e2e.workspace / "new.txt").read_text() == "fresh\n"
    assert editor.written == [(str(e2e.workspace / "new.txt"), "fresh\n")]


def test_the_editors_stdio_mcp_server_is_started_and_its_calls_are_asked(e2e: Env) -> None:
    import sys
    from pathlib import Path

    from acp.schema import HttpMcpServer, McpServerStdio

    server = Path(__file__).resolve().parents[1] / "mcp" / "server.py"
    e2e.server.script(Reply.tools(("my-tools__echo", {"text": "hello"})), Reply.text("echoed"))
    editor = Editor(answer="allow_once")

    async def scenario() -> RunningAgent:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            created = await agent.conn.new_session(cwd=str(e2e.workspace), mcp_servers=[
                McpServerStdio(name="my tools", command=sys.executable, args=[str(server)], env=[]),
                HttpMcpServer(type="http", name="remote", url="https://example.invalid/mcp", headers=[]),
            ])
            await agent.conn.prompt(session_id=created.session_id, prompt=[text_block("echo hello")])
        return agent

    agent = asyncio.run(asyncio.wait_for(scenario(), 90))
    assert b"'remote' is not stdio: skipped" in agent.stderr
    assert e2e.server.requests[1].messages[-1]["content"] == "echo: hello"
    assert [asked.title for asked, _ in editor.permissions][0].startswith("my-tools__echo")


def test_a_failed_task_is_an_error_answer_saying_why_and_the_session_goes_on(e2e: Env) -> None:
    e2e.server.script(Reply.error(400, {"error": {"message": "the model is on fire", "type": "invalid_request_error"}}),
                      Reply.text("better now"))
    editor = Editor()

    async def scenario() -> tuple[str, str]:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            try:
                await agent.conn.prompt(session_id=session_id, prompt=[text_block("first")])
            except RequestError as e:
                said = str(e)
            else:
                raise AssertionError("a failed task answered as done")
            answer = await agent.conn.prompt(session_id=session_id, prompt=[text_block("again")])
            return said, answer.stop_reason

    said, stop = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert said.startswith("minicode: ") and "on fire" in said and stop == "end_turn"
    assert text_of(editor.of_kind("agent_message_chunk")).endswith("better now")


def test_a_task_that_times_out_says_so_and_ends_the_turn(e2e: Env) -> None:
    e2e.server.script(Reply.hang("Slow"))
    editor = Editor()

    async def scenario() -> str:
        async with _run(e2e, editor, "--timeout", "1") as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            return (await agent.conn.prompt(session_id=session_id, prompt=[text_block("slow")])).stop_reason

    assert asyncio.run(asyncio.wait_for(scenario(), TIMEOUT)) == "end_turn"
    assert "the task ended: timed out" in text_of(editor.of_kind("agent_message_chunk"))


def test_cancel_also_stops_a_command_waiting_for_its_question(e2e: Env) -> None:
    (e2e.workspace / "a.txt").write_text("before\n")
    e2e.server.script(Reply.tool("write", path="a.txt", content="after\n"), Reply.text("changed"))
    editor = Editor(answer="allow_once")

    async def scenario() -> str:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("change it")])
            editor.answer, editor.asked = "hang", asyncio.Event()
            undo = asyncio.ensure_future(agent.conn.prompt(session_id=session_id, prompt=[text_block("/undo")]))
            await editor.asked.wait()
            await agent.conn.cancel(session_id=session_id)
            return (await undo).stop_reason

    assert asyncio.run(asyncio.wait_for(scenario(), TIMEOUT)) == "cancelled"
    assert (e2e.workspace / "a.txt").read_text() == "after\n"  # nothing restored without a yes


def test_plan_mode_writes_nothing_and_leaving_it_carries_out_the_proposed_list(e2e: Env) -> None:
    steps = [{"text": "read calc.py", "status": "done"}, {"text": "fix add", "status": "pending"}]
    e2e.server.script(
        Reply.tool("write", path="made.txt", content="x"),  # refused while planning, whatever the mode allows
        Reply.tool("todo", items=steps), Reply.text("The plan: fix add."),
        Reply.text("Carried out."),
    )
    editor = Editor(answer="allow_once")

    async def scenario() -> None:
        async with _run(e2e, editor) as agent:
            await _start(agent, editor)
            session_id = await _new(agent, e2e)
            await agent.conn.set_session_mode(session_id=session_id, mode_id="plan")
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("fix add")])
            await agent.conn.set_session_mode(session_id=session_id, mode_id="act")
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("go")])

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert not (e2e.workspace / "made.txt").exists() and editor.permissions == []
    planning_tools = [t["function"]["name"] for t in e2e.server.requests[0].body["tools"]]
    assert "write" not in planning_tools and "bash" not in planning_tools
    acting = e2e.server.requests[3]
    assert "write" in [t["function"]["name"] for t in acting.body["tools"]]
    assert acting.messages[-1]["content"].startswith("The user accepted your plan") and acting.messages[-1]["content"].endswith("go")
    assert [u.current_mode_id for u in editor.of_kind("current_mode_update")] == ["plan", "act"]
    assert editor.of_kind("plan")  # the proposed list reached the editor as its plan
