"""The small-model assists: the pure rules, and the loop with them on and off."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.assists import (
    MAX_NUDGES,
    AssistState,
    TurnFacts,
    about_workspace,
    list_files,
    small_model_reason,
    second_chance,
    wants_change,
    workspace_brief,
)
from minicode.agent.events import Notice, TaskStatus
from tests.agent.conftest import Events, make_config
from tests.agent.scripted import text, tools

TOOLS = ["read", "ls", "glob", "grep", "write", "edit", "bash"]


@pytest.mark.parametrize("task", [
    "Fix the bug in calc.py.", "Add a function reverse(s) to strings_util.py", "please rename area to rect_area",
    "The tests fail. Fix the code so they pass.", "In settings.json set debug to false.", "Create hello.py",
    "Can you update the README?", "tests/test_cart.py has a failing test. Find the bug and fix it.",
])  # fmt: skip
def test_change_requests_are_recognised(task: str) -> None:
    assert wants_change(task)


@pytest.mark.parametrize("task", [
    "Which port does server.py listen on?", "What does add return for 2 and 3?", "How do I make a list in Python?",
    "Run count.py and tell me the number it prints.", "explain what a closure is", "hello",
])  # fmt: skip
def test_questions_are_not_change_requests(task: str) -> None:
    assert not wants_change(task)


def test_a_question_about_the_workspace_is_told_from_general_knowledge() -> None:
    assert about_workspace("Which port does server.py listen on?")
    assert about_workspace("Run count.py and tell me the number")
    assert about_workspace("what does the function parse do in this project?")
    assert about_workspace("what does shout do?", ["pkg/strings_util.py"]) is False
    assert about_workspace("what is in strings_util?", ["strings_util"]) is True
    assert not about_workspace("What is a closure in Python?")
    assert not about_workspace("hello")


def test_a_change_request_answered_with_advice_gets_a_second_chance() -> None:
    nudge = second_chance("Fix the bug in calc.py", "Change `a - b` to `a + b`.", TurnFacts([]), TOOLS)
    assert nudge is not None and "Make the change now" in nudge


def test_the_second_chance_spells_out_the_call_for_the_file_meant() -> None:
    facts = TurnFacts([], shown=["calc.py", "test_calc.py"])
    nudge = second_chance("The tests in test_calc.py fail. Fix the code.", "In calc.py and test_calc.py ...", facts,
                          TOOLS)  # fmt: skip
    assert nudge is not None and '{"name": "write", "arguments": {"path": "calc.py"' in nudge  # the code, not its test
    facts = TurnFacts([], shown=["calc.py", "test_calc.py"])
    nudge = second_chance("Add a test for add to test_calc.py", "def test_add2(): ...", facts, TOOLS)
    assert nudge is not None and '"path": "test_calc.py"' in nudge
    only = TurnFacts([], shown=["settings.json"])
    assert '"path": "settings.json"' in (second_chance("set debug to false", "Use sed.", only, TOOLS) or "")


def test_a_change_made_but_never_run_is_asked_to_be_checked_once_it_is_made() -> None:
    facts = TurnFacts([("read", True), ("edit", True)])
    nudge = second_chance("Fix the bug in calc.py", "Fixed.", facts, TOOLS)
    assert nudge is not None and "bash" in nudge
    facts.ran.append(("bash", False))  # a failing check: fix what it shows (once)
    nudge = second_chance("Fix the bug in calc.py", "Fixed.", facts, TOOLS)
    assert nudge is not None and "failed" in nudge
    assert second_chance("Fix the bug in calc.py", "Still red.", facts, TOOLS) is None
    facts.ran.append(("bash", True))
    assert not facts.check_failed()


def test_after_a_denial_there_is_no_second_chance() -> None:
    assert second_chance("Fix calc.py", "I could not.", TurnFacts([("edit", False)], denied=True), TOOLS) is None


def test_a_failed_edit_is_not_a_change() -> None:
    assert second_chance("Fix calc.py", "Done.", TurnFacts([("edit", False)]), TOOLS) is not None


def test_a_workspace_question_answered_without_looking_gets_a_second_chance_and_a_looked_one_not() -> None:
    assert second_chance("Which port does server.py use?", "8080", TurnFacts([]), TOOLS) is not None
    assert second_chance("Which port does server.py use?", "8734", TurnFacts([("read", True)]), TOOLS) is None


def test_a_plain_question_never_gets_one() -> None:
    assert second_chance("What is a closure in Python?", "A function that ...", TurnFacts([]), TOOLS) is None
    assert second_chance("hello", "Hi! How can I help?", TurnFacts([]), TOOLS) is None


def test_a_call_to_a_tool_that_does_not_exist_is_named() -> None:
    answer = '```json\n{"name": "rename_function", "arguments": {"old": "area"}}\n```'
    nudge = second_chance("Rename area to rect_area", answer, TurnFacts([]), TOOLS)
    assert nudge is not None and "'rename_function'" in nudge and "read, ls" in nudge
    # JSON that is not call-shaped (a package.json) is not taken for a call
    assert second_chance("What is in package.json?", '{"name": "demo", "version": "1.0"}', TurnFacts([("read", True)]),
                         TOOLS) is None  # fmt: skip


def test_the_second_chances_are_bounded_and_each_kind_is_given_once() -> None:
    facts = TurnFacts([], nudged=["a"] * MAX_NUDGES)
    assert second_chance("Fix the bug in calc.py", "Change it.", facts, TOOLS) is None
    once = TurnFacts([])
    assert second_chance("Fix the bug in calc.py", "Change it.", once, TOOLS) is not None
    assert second_chance("Fix the bug in calc.py", "Change it.", once, TOOLS) is None
    once.ran.append(("edit", True))  # another kind is still given
    assert second_chance("Fix the bug in calc.py", "Done.", once, TOOLS) is not None
    assert second_chance("Fix the bug in calc.py", "Change it.", TurnFacts([]), []) is None  # no tools: no nudge


def test_auto_mode_turns_on_once_it_learns_and_off_and_on_are_fixed() -> None:
    auto = AssistState("auto")
    assert not auto.on
    assert auto.learn("tool calls written as text") and auto.on and auto.reason == "tool calls written as text"
    assert not auto.learn("again")
    off, on = AssistState("off"), AssistState("on")
    assert not off.learn("x") and not off.on
    assert on.on


def test_the_brief_lists_the_files_as_glob_sees_them(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    (tmp_path / "main.py").write_text("print(1)\n")
    (tmp_path / ".gitignore").write_text("secret.txt\n")
    (tmp_path / "secret.txt").write_text("no\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    brief = workspace_brief(tmp_path)
    assert brief.startswith("<workspace>") and brief.endswith("</workspace>")
    assert "main.py" in brief and "pkg/mod.py" in brief
    assert "secret.txt" not in brief and ".git/HEAD" not in brief


def test_a_large_workspace_is_listed_up_to_the_cap(tmp_path: Path) -> None:
    for i in range(12):
        (tmp_path / f"f{i:02}.txt").write_text("x")
    brief = workspace_brief(tmp_path, limit=5)
    assert brief.count(".txt") == 5 and "and more" in brief


def test_an_empty_or_missing_workspace_says_so(tmp_path: Path) -> None:
    assert "empty" in workspace_brief(tmp_path)
    assert list_files(tmp_path / "gone", 10) == []


def _on(window: int = 256 * 1024):  # type: ignore[no-untyped-def]
    config = make_config(window)
    return replace(config, model=replace(config.model, assists="on"))


async def test_with_the_assists_on_advice_gets_one_more_request_then_the_change(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    provider.script(
        text("Change `a - b` to `a + b` in calc.py."),
        tools(("read", {"path": "calc.py"})),
        tools(("edit", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})),
    )
    session = await open_session(config=_on())
    events = Events()
    finished = await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=events.append)
    assert finished.status is TaskStatus.DONE and "a + b" in (workspace / "calc.py").read_text()
    first = provider.requests[0].messages[-1].content
    assert first.startswith("Fix the bug in calc.py\n\n<workspace>") and "calc.py" in first
    second = provider.requests[1].messages[-1]
    assert second.role == "user" and "Make it now with one tool call" in (second.content or "")
    assert any("asking the model again" in e.text for e in events.of(Notice))
    assert len(provider.requests) == 3  # the edit checked at once and green: minicode writes the report
    assert any("minicode writes the report" in e.text for e in events.of(Notice))


async def test_with_the_assists_on_write_wants_an_existing_file_read_first(open_session, provider, workspace):
    (workspace / "util.py").write_text("def shout(s):\n    return s.upper()\n")
    for i in range(5):  # not a tiny workspace: nothing is shown unless the task names it
        (workspace / f"other{i}.py").write_text("x = 1\n")
    provider.script(
        tools(("write", {"path": "util.py", "content": "def reverse(s):\n    return s[::-1]\n"})),
        text("I could not write it."),
    )
    session = await open_session(config=_on())
    await session.turn("Add a reverse function to the helpers", approver=AutoApprover(), emit=Events().append)
    assert "shout" in (workspace / "util.py").read_text()
    assert "<file" not in (provider.requests[0].messages[-1].content or "")
    result = provider.requests[1].messages[-1]
    assert result.role == "tool" and "was not read in this session" in (result.content or "")


async def test_with_the_assists_on_the_files_the_task_names_come_with_it_read(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "notes.txt").write_text("nothing\n")
    for i in range(4):  # not a tiny workspace: only what the task names is shown
        (workspace / f"other{i}.py").write_text("x = 1\n")
    provider.script(
        tools(("edit", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})),
        tools(("bash", {"command": "true"})),
        text("Fixed."),
    )
    session = await open_session(config=_on())
    await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    task = provider.requests[0].messages[-1].content or ""
    assert '<file path="calc.py">' in task and "return a - b" in task and "nothing" not in task
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"  # no read needed first
    system = provider.requests[0].messages[0].content or ""
    assert "Fix the code the tests test" in system and "Project memory" not in system  # the small-model prompt


async def test_with_the_assists_off_nothing_changes(open_session, provider, workspace):
    (workspace / "util.py").write_text("old\n")
    provider.script(
        tools(("write", {"path": "util.py", "content": "new\n"})),
        text("Change `a - b` to `a + b`."),
    )
    session = await open_session()  # [model].assists defaults to auto, which has learned nothing
    finished = await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    assert finished.status is TaskStatus.DONE and len(provider.requests) == 2
    assert provider.requests[0].messages[-1].content == "Fix the bug in calc.py"
    assert (workspace / "util.py").read_text() == "new\n"


@pytest.mark.parametrize(("name", "small"), [
    ("qwen2.5-coder-1.5b", True), ("qwen2.5-coder:7b-instruct", True), ("llama3.2:3b", True), ("gemma-2-2b-it", True),
    ("phi-3-mini-3.8B", True), ("gpt-4.1", False), ("gpt-4o-mini", False), ("qwen3-coder", False),
    ("Qwen2.5-Coder-32B-Instruct", False), ("mixtral-8x7b", False), ("qwen3-30b-a3b", False), ("o3", False),
])  # fmt: skip
def test_a_small_model_is_told_by_its_name(name: str, small: bool) -> None:
    assert (small_model_reason(name) is not None) is small


def test_auto_starts_on_for_a_small_model_or_a_remembered_endpoint_and_remembers_what_it_learns(tmp_path: Path) -> None:
    from minicode.session.opening import assist_state

    model = make_config().model
    env = {"HOME": str(tmp_path)}
    state = assist_state(replace(model, name="qwen2.5-coder-1.5b"), env)
    assert state.on and "1.5B" in state.reason
    plain = assist_state(model, env)  # "scripted-model": nothing known
    assert not plain.on and plain.remember is not None
    assert plain.learn("tool calls written as text")
    plain.remember("tool calls written as text")
    again = assist_state(model, env)  # the next run of the same endpoint and model
    assert again.on and again.reason == "tool calls written as text"
    assert not assist_state(replace(model, assists="off"), env).on
    assert assist_state(replace(model, assists="on"), {}).on  # no HOME: nothing to remember, still on


async def test_with_the_assists_on_the_output_limit_is_short_and_off_it_is_the_windows(open_session, provider):
    from minicode.agent.assists import ASSIST_MAX_TOKENS, ASSIST_TEMPERATURE

    provider.script(text("hi"), text("hi"))
    session = await open_session(config=_on())
    await session.turn("hello", approver=AutoApprover(), emit=Events().append)
    plain = await open_session()
    await plain.turn("hello", approver=AutoApprover(), emit=Events().append)
    assert provider.requests[0].max_tokens == ASSIST_MAX_TOKENS < provider.requests[1].max_tokens
    assert provider.requests[0].temperature == ASSIST_TEMPERATURE and provider.requests[1].temperature is None


async def test_with_the_assists_on_a_write_that_drops_definitions_is_refused(open_session, provider, workspace):
    (workspace / "util.py").write_text("def shout(s):\n    return s.upper()\n")
    provider.script(
        tools(("write", {"path": "util.py", "content": "def reverse(s):\n    return s[::-1]\n"})),
        tools(("write", {"path": "util.py", "content": "def shout(s):\n    return s.upper()\n\n\ndef reverse(s):\n"
                                                       "    return s[::-1]\n"})),
        tools(("bash", {"command": "true"})),
        text("Added reverse."),
    )  # fmt: skip
    session = await open_session(config=_on())
    # not a task that adds (that write is merged: tests/agent/test_advice.py): refused, with why
    await session.turn("Give util.py a reverse(s) function", approver=AutoApprover(), emit=Events().append)
    refused = provider.requests[1].messages[-1]
    assert refused.role == "tool" and "would remove shout() from util.py" in (refused.content or "")
    assert "def shout" in (workspace / "util.py").read_text() and "def reverse" in (workspace / "util.py").read_text()


def test_with_the_assists_a_reply_that_opens_with_a_call_and_imagines_the_rest_is_that_call() -> None:
    from minicode.agent.text_calls import leading_call, recovered_message
    from minicode.provider.types import Message
    from minicode.tools.registry import default_registry

    reply = ('```json\n{"name": "bash", "arguments": {"command": "python count.py"}}\n```\nAfter running it:\n'
             "```bash\npython count.py\n```\nThe output should be 155.")  # fmt: skip
    specs = default_registry().specs()
    assert recovered_message(Message(role="assistant", content=reply), specs, "t") is None  # strict: it is text
    found = recovered_message(Message(role="assistant", content=reply), specs, "t", leading=True)
    assert found is not None and [c.name for c in found.tool_calls] == ["bash"]
    assert leading_call("Some explanation first. " * 20 + reply) is None  # a long lead-in: an explanation
    assert leading_call('```json\n{"a": 1}\n```') is None  # the block is the whole reply: the strict rule's


@pytest.mark.parametrize(("task", "path", "refused"), [
    ("The tests in test_calc.py fail. Fix the code so they pass.", "test_calc.py", True),
    ("tests/test_cart.py has a failing test. Find the bug and fix it.", "tests/test_cart.py", True),
    ("The tests in test_calc.py fail. Fix the code so they pass.", "calc.py", False),
    ("Add a test for mul to test_calc.py", "test_calc.py", False),
    ("The test fails: update the test to the new API", "test_calc.py", False),
    ("Rename area to rect_area everywhere", "tests/test_geo.py", False),  # not about failing tests
    ("slugify('Hello World') should return 'hello-world', and textkit/test_slug.py says it does not. Fix the bug.",
     "textkit/test_slug.py", True),
    ("python -m pytest -q shop fails. Fix it.", "shop/tests/test_pricing.py", True),
    ("Fix the test in test_calc.py: it uses the old name", "test_calc.py", False),
])  # fmt: skip
def test_a_test_is_not_changed_to_make_failing_tests_pass(task: str, path: str, refused: bool) -> None:
    from minicode.agent.assists import test_guard

    assert (test_guard(task, "edit", path) is not None) is refused
    assert test_guard(task, "read", path) is None


async def test_with_the_assists_on_the_test_guard_refuses_before_anyone_is_asked(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    provider.script(
        tools(("edit", {"path": "test_calc.py", "old_text": "== 5", "new_text": "== -1"})),
        tools(("edit", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})),
        tools(("bash", {"command": "true"})),
        text("Fixed add."),
    )
    session = await open_session(config=_on())
    await session.turn("The tests in test_calc.py fail. Fix the code so they pass.", approver=AutoApprover(),
                       emit=Events().append)  # fmt: skip
    assert "== 5" in (workspace / "test_calc.py").read_text() and "a + b" in (workspace / "calc.py").read_text()
    refused = provider.requests[1].messages[-1]
    assert refused.role == "tool" and "is a test" in (refused.content or "")


def test_a_write_of_the_examples_placeholder_is_refused() -> None:
    from minicode.agent.assists import PLACEHOLDER, placeholder_write

    assert placeholder_write("write", {"path": "a.py", "content": PLACEHOLDER}) is not None
    assert placeholder_write("write", {"path": "a.py", "content": "x = 1\n"}) is None
    assert placeholder_write("edit", {"path": "a.py", "new_text": PLACEHOLDER}) is None


def test_the_file_meant_is_found_by_its_whole_path_too() -> None:
    from minicode.agent.assists import target_file

    shown = ["shop/__init__.py", "shop/pricing.py", "shop/tests/test_pricing.py"]
    answer = "```python\n# shop/pricing.py\ndef discount(price, percent):\n    return price * (100 - percent) / 100\n```"
    assert target_file("python -m pytest -q shop fails. Fix it.", answer, shown) == "shop/pricing.py"


def test_a_test_named_alone_means_the_module_it_tests() -> None:
    from minicode.agent.assists import target_file

    shown = ["textkit/test_slug.py", "textkit/slug.py"]
    task = "slugify('Hello World') should return 'hello-world', and textkit/test_slug.py says it does not. Fix the bug."
    assert target_file(task, "Use lower().", shown) == "textkit/slug.py"  # live: the second chance named the test
    assert target_file("Add a test to textkit/test_slug.py", "", shown) == "textkit/test_slug.py"  # tests asked for


async def test_with_the_assists_on_an_empty_file_is_listed_but_not_shown(open_session, provider, workspace):
    (workspace / "shop").mkdir()
    (workspace / "shop" / "__init__.py").write_text("")
    (workspace / "shop" / "pricing.py").write_text("def discount(price, percent):\n    return price\n")
    provider.script(text("Done."), text("Done."), text("Done."))
    session = await open_session(config=_on())
    await session.turn("Fix the bug in the shop", approver=AutoApprover(), emit=Events().append)
    task = provider.requests[0].messages[-1].content or ""
    assert "shop/__init__.py" in task and '<file path="shop/__init__.py">' not in task
    assert '<file path="shop/pricing.py">' in task


def test_the_brief_shows_a_tiny_workspace_whole_and_a_named_test_with_its_module() -> None:
    from minicode.agent.assists import files_to_show

    tiny = ["textkit/__init__.py", "textkit/slug.py", "textkit/test_slug.py"]
    assert files_to_show("textkit/test_slug.py says it fails. Fix the bug.", tiny)[0] == "textkit/test_slug.py"
    assert set(files_to_show("textkit/test_slug.py fails", tiny)) == set(tiny)
    larger = [*tiny, *(f"textkit/m{i}.py" for i in range(5))]
    assert files_to_show("textkit/test_slug.py fails. Fix the bug.", larger) == ["textkit/test_slug.py", "textkit/slug.py"]
    assert files_to_show("Fix m1.py", larger) == ["textkit/m1.py"]


async def test_with_the_assists_on_an_edit_of_an_unread_file_is_refused_with_its_text(open_session, provider, workspace):
    (workspace / "slug.py").write_text("def slugify(s):\n    return s\n")
    for i in range(5):
        (workspace / f"m{i}.py").write_text("x = 1\n")
    edit = ("edit", {"path": "slug.py", "old_text": "return s", "new_text": "return s.lower()"})
    provider.script(tools(edit), tools(edit), tools(("bash", {"command": "true"})), text("Fixed."))
    session = await open_session(config=_on())
    await session.turn("Fix the bug in the slugify function", approver=AutoApprover(), emit=Events().append)
    refused = provider.requests[1].messages[-1].content or ""
    assert "has not been read in this session" in refused and "<file>\ndef slugify(s):\n    return s\n</file>" in refused
    assert (workspace / "slug.py").read_text() == "def slugify(s):\n    return s.lower()\n"  # the retry went through


async def test_with_the_assists_on_a_read_of_one_line_shows_the_page_and_off_it_is_one_line(open_session, provider,
                                                                                           workspace):
    (workspace / "three.txt").write_text("a\nb\nc\n")
    for config in (_on(), None):
        provider.script(tools(("read", {"path": "three.txt", "offset": 1, "limit": 1})), text("a b c"))
        session = await open_session(config=config) if config else await open_session()
        await session.turn("Tell me what three.txt says", approver=AutoApprover(), emit=Events().append)
        shown = next(m.content or "" for m in session.messages if m.role == "tool")
        assert ("[end of file; lines 1-3]" in shown) is (config is not None)


def test_an_empty_answer_to_a_question_after_looking_gets_a_second_chance() -> None:
    facts = TurnFacts([("read", True)])
    nudge = second_chance("Which port does the server use?", "", facts, TOOLS)
    assert nudge is not None and "empty" in nudge
    assert second_chance("Which port does the server use?", "  ", facts, TOOLS) is None  # once
    assert second_chance("Which port?", "", TurnFacts([]), TOOLS) is None  # nothing looked at: a plain question
    assert second_chance("Which port?", "8731", TurnFacts([("read", True)]), TOOLS) is None


def test_a_call_broken_by_text_around_it_gets_a_second_chance() -> None:
    # live: after running count.py the model answered with a write call and a stray code block
    answer = '{"name": "write", "arguments": {"path": "count.py", "content": "[exit code 0]"}}\n```\nobj[\'content\']\n```\n'
    facts = TurnFacts([("bash", True)], shown=["count.py"])
    nudge = second_chance("Run count.py and tell me the number it prints.", answer, facts, TOOLS)
    assert nudge is not None and "nothing ran" in nudge and facts.nudged == ["unrun call"]
    assert second_chance("Run count.py and tell me the number it prints.", answer, facts, TOOLS) is None  # once
    plain = TurnFacts([("bash", True)], shown=["count.py"])
    assert second_chance("Run count.py and tell me the number it prints.", "It prints 2487.", plain, TOOLS) is None


@pytest.mark.parametrize(("output", "answer", "nudged"), [
    ("2487\n[exit code 0]", "Files changed, verified, and result: checksum printed.", True),
    ("checksum 1422b8621c\n[exit code 0]", "It printed the checksum.", True),
    ("2487\n[exit code 0]", "count.py prints 2487.", False),
    ("checksum 1422b8621c\n[exit code 0]", "The checksum is 1422b8621c", False),
    ("hello world\n[exit code 0]", "It greets the world.", False),  # no value to give
    ("\n".join(f"row {n}" for n in range(30)) + "\n[exit code 0]", "Thirty rows.", False),  # too long to repeat
])
def test_an_answer_to_what_a_run_printed_gives_it(output: str, answer: str, nudged: bool) -> None:
    facts = TurnFacts([("bash", True)], shown=["count.py"], output=output)
    nudge = second_chance("Run count.py and tell me the number it prints.", answer, facts, TOOLS)
    assert (nudge is not None) is nudged
    if nudged:
        assert nudge is not None and "It printed:\n" in nudge and "[exit code" not in nudge


@pytest.mark.parametrize(("path", "files", "hint"), [
    ("shop/pricing.py", ["shop/__init__.py", "shop/pricing.py", "shop/tests/test_pricing.py"], "python -m pytest -q shop/tests"),
    ("calc.py", ["calc.py", "test_calc.py"], "python -m pytest -q]"),
    ("mathutils/numbers.py", ["mathutils/__init__.py", "mathutils/numbers.py"], 'python -c "import mathutils.numbers"'),
    ("hello.py", [], "python hello.py"),
    ("my dir/x.py", [], "python 'my dir/x.py'"),
    ("package.json", ["package.json"], "python -m json.tool package.json"),
    ("pyproject.toml", [], """tomllib.load(open(sys.argv[1], "rb")))' pyproject.toml"""),
    ("my conf.toml", [], "' 'my conf.toml'"),
])
def test_a_change_says_how_to_check_it(path: str, files: list[str], hint: str) -> None:
    from minicode.agent.assists import check_command, check_hint

    line = check_hint(check_command(path, files))
    assert hint in line and line.startswith("\n[Check it now with bash: ")


def test_a_change_of_another_kind_of_file_has_no_check_command() -> None:
    from minicode.agent.assists import check_command

    assert check_command("README.md", ["README.md", "test_x.py"]) == "" and check_command("notes.txt", []) == ""
    assert check_command("calc.py", [], "python3") == "python3 calc.py"  # the tools' PATH has only python3


async def test_with_the_assists_on_a_change_is_checked_at_once(open_session, provider, workspace):
    from minicode.agent.events import Notice, ToolStarted
    from tests.agent.conftest import python_env

    provider.script(tools(("write", {"path": "hello.py", "content": "print('hi')\n"})))
    session = await open_session(config=_on(), env=python_env(workspace))
    events = Events()
    finished = await session.turn("Create hello.py that prints hi", approver=AutoApprover(), emit=events.append)
    result = session.messages[-2].content or ""
    assert result.endswith("[Checked at once with bash: python hello.py]\nhi\n[exit code 0]")
    assert [e.name for e in events.of(ToolStarted)] == ["write", "bash"]
    assert any(e.text == "checking the change: python hello.py" for e in events.of(Notice))
    assert len(provider.requests) == 1  # no request spent on sending the check, nor on the report
    assert finished.final_text == "Created hello.py; `python hello.py` printed: hi."
    plain = await open_session()
    provider.script(tools(("write", {"path": "bye.py", "content": "print('bye')\n"})), text("Done."))
    await plain.turn("Create bye.py", approver=AutoApprover(), emit=Events().append)
    assert "Check" not in (provider.requests[-1].messages[-1].content or "")


async def test_a_check_the_user_denies_leaves_the_hint_and_python3_stands_in_for_python(open_session, provider, workspace):
    from tests.agent.conftest import ScriptedApprover, yes
    from minicode.agent.approval import Approval, Decision

    provider.script(tools(("write", {"path": "hello.py", "content": "print('hi')\n"})),
                    tools(("bash", {"command": "python3 hello.py"})), text("Created hello.py."))
    bin_dir = workspace.parent / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text("#!/bin/sh\necho hi\n")
    (bin_dir / "python3").chmod(0o755)
    session = await open_session(config=_on(), env={"PATH": str(bin_dir), "HOME": str(workspace)})  # python3 only
    approver = ScriptedApprover([yes(), Approval(Decision.DENY), yes()])
    await session.turn("Create hello.py that prints hi", approver=approver, emit=Events().append)
    assert [r.tool for r in approver.requests] == ["write", "bash", "bash"]
    result = provider.requests[1].messages[-1].content or ""
    assert result.endswith("[Check it now with bash: python3 hello.py]")  # denied: the model may still run it


def test_the_output_quoted_back_leaves_out_the_notes_minicode_added() -> None:
    output = ("2487\n[exit code 0]\n[You made this same call before and it gave the same result: calling it again "
              "will not change it. Use what it showed: answer, or take the next step.]")
    facts = TurnFacts([("bash", True), ("bash", True)], shown=["count.py"], output=output)
    nudge = second_chance("Run count.py and tell me the number it prints.", "It printed a number.", facts, TOOLS)
    assert nudge is not None and "It printed:\n2487\nAnswer the question with that." in nudge


def test_a_change_done_and_checked_is_reported_from_the_records() -> None:
    from minicode.agent.assists import TurnFacts, done_report

    tools = ["read", "write", "edit", "bash"]

    def done(task: str, written: list[str], files: list[str], output: str = "2 passed in 0.01s\n[exit code 0]",
             ran: list[tuple[str, bool]] | None = None) -> str | None:
        facts = TurnFacts(ran=ran or [("edit", True), ("bash", True)], task=task, files=files, written=written,
                          checked=("python -m pytest -q", output))
        return done_report(task, facts, tools)

    assert done("Set the version in package.json to 1.3.0.", ["package.json"], ["package.json"],
                "{\n  \"version\": \"1.3.0\"\n}\n[exit code 0]") == "Edited package.json; `python -m pytest -q` passed."
    assert done("Create hello.py that prints hi", ["hello.py"], [], "hi\n[exit code 0]") == (
        "Created hello.py; `python -m pytest -q` printed: hi.")
    assert done("Create hello.py that greets", ["hello.py"], [], "Hello, world!\n[exit code 0]") == (
        "Created hello.py; `python -m pytest -q` printed: Hello, world!")  # no second full stop
    assert done("Rename calc_total everywhere", ["a.py", "b.py", "a.py"], ["a.py", "b.py"], "(no output)\n[exit code 0]") == (
        "Edited a.py and b.py; `python -m pytest -q` passed.")
    fix = "textkit/test_slug.py fails. Fix the bug."  # the test it names stays as it is
    assert done(fix, ["textkit/slug.py"], ["textkit/slug.py", "textkit/test_slug.py"]) == (
        "Edited textkit/slug.py; `python -m pytest -q` printed: 2 passed in 0.01s.")
    # the model reports: a file the task names is unchanged, nothing was checked at once, a question
    assert done("Add count() to store.py and use it in main.py", ["store.py"], ["store.py", "main.py"]) is None
    assert done("Write fizzbuzz.py and notes.md", ["fizzbuzz.py"], []) is None
    facts = TurnFacts(ran=[("edit", True), ("bash", True)], task="Fix calc.py", files=["calc.py"], written=["calc.py"])
    assert done_report("Fix calc.py", facts, tools) is None  # no check ran at once
    assert done("What does calc.py return?", ["calc.py"], ["calc.py"]) is None
    assert done("Fix calc.py", [], ["calc.py"], ran=[("bash", True)]) is None  # nothing changed


async def test_stopped_during_the_check_at_once_the_change_keeps_its_result(open_session, provider, workspace):
    import asyncio

    import pytest

    from minicode.agent.events import ToolStarted
    from tests.agent.conftest import python_env

    provider.script(tools(("write", {"path": "slow.py", "content": "import time\ntime.sleep(30)\n"})))
    session = await open_session(config=_on(), env=python_env(workspace))
    started = asyncio.Event()
    events = Events()

    def emit(event):  # type: ignore[no-untyped-def]
        events.append(event)
        if isinstance(event, ToolStarted) and event.name == "bash":
            started.set()

    task = asyncio.create_task(session.turn("Create slow.py that waits", approver=AutoApprover(), emit=emit))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (result,) = [m for m in session.messages if m.role == "tool"]
    assert result.content is not None and result.content.startswith("Created slow.py")  # not "interrupted"
    assert (workspace / "slow.py").exists()


async def test_when_the_input_ends_at_the_check_at_once_the_task_stops(open_session, provider, workspace):
    from minicode.agent.approval import Approval, Decision
    from minicode.agent.events import TaskStatus
    from tests.agent.conftest import ScriptedApprover, python_env, yes

    provider.script(tools(("write", {"path": "hello.py", "content": "print('hi')\n"}),
                          ("write", {"path": "bye.py", "content": "print('bye')\n"})), text("Done."))
    session = await open_session(config=_on(), env=python_env(workspace))
    approver = ScriptedApprover([yes(), yes(), Approval(Decision.DENY, "no answer", input_ended=True)])
    finished = await session.turn("Create hello.py and bye.py", approver=approver, emit=Events().append)
    assert finished.status is TaskStatus.INPUT_ENDED  # not a next request whose approvals nobody can give
    assert len(provider.requests) == 1
    results = [m.content or "" for m in session.messages if m.role == "tool"]
    assert results[1].startswith("Created bye.py") and results[1].endswith("[Check it now with bash: python bye.py]")
