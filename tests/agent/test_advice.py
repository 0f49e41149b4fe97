"""Advice made into the change it describes (agent/advice.py), and through the loop."""

from __future__ import annotations

from dataclasses import replace

from minicode.agent.advice import advice_edit, python_blocks
from minicode.agent.approval import AutoApprover
from minicode.agent.events import TaskStatus, ToolStarted
from tests.agent.conftest import Events, make_config
from tests.agent.scripted import text, tools

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = ("Here's the corrected `calc.py`:\n\n```python\ndef add(a, b):\n    return a + b  # fixed\n```\n\n"
         "Then run the tests:\n\n```bash\npython3 -m pytest\n```")  # fmt: skip


def test_a_redefined_function_replaces_its_namesake_and_keeps_the_rest() -> None:
    edit = advice_edit("Fix the code so the tests pass", FIXED, "calc.py", CALC)
    assert edit is not None and edit.replaced == ("add",) and edit.added == ()
    assert edit.content == "def add(a, b):\n    return a + b  # fixed\n\n\ndef mul(a, b):\n    return a * b\n"


def test_a_new_function_is_added_only_when_the_task_adds_one() -> None:
    answer = "```python\ndef reverse(s):\n    return s[::-1]\n```"
    edit = advice_edit("Add a function reverse(s) to util.py", answer, "util.py", "def shout(s):\n    return s.upper()\n")
    assert edit is not None and edit.added == ("reverse",)
    assert edit.content == "def shout(s):\n    return s.upper()\n\n\ndef reverse(s):\n    return s[::-1]\n"
    assert advice_edit("Fix the bug in util.py", answer, "util.py", "def shout(s):\n    return s.upper()\n") is None


def test_what_is_not_a_change_stays_an_answer() -> None:
    assert advice_edit("Fix calc.py", "```python\ndef add(a, b):\n    return a - b  # it is right\n```", "calc.py",
                       CALC) is None  # the same code: nothing to change  # fmt: skip
    assert advice_edit("Fix calc.py", "Use a + b.", "calc.py", CALC) is None  # no code
    assert advice_edit("Fix calc.py", "```python\ndef add(a, b:\n```", "calc.py", CALC) is None  # does not parse
    assert advice_edit("Fix calc.py", FIXED, "calc.py", "def add(a, b:\n") is None  # the file does not parse
    assert advice_edit("Fix calc.js", FIXED, "calc.js", CALC) is None  # not a Python file
    assert python_blocks("```bash\nls -la\n```\n```\nx = (\n```") == []


def test_decorated_definitions_are_replaced_whole() -> None:
    current = "import functools\n\n\n@functools.cache\ndef f(x):\n    return x\n"
    edit = advice_edit("Fix f", "```py\n@functools.cache\ndef f(x):\n    return x + 1\n```", "m.py", current)
    assert edit is not None and edit.content == "import functools\n\n\n@functools.cache\ndef f(x):\n    return x + 1\n"


def _on():  # type: ignore[no-untyped-def]
    config = make_config()
    return replace(config, model=replace(config.model, assists="on"))


async def test_with_the_assists_on_advice_runs_as_the_write_it_describes(open_session, provider, workspace):
    (workspace / "calc.py").write_text(CALC)
    provider.script(text(FIXED), text("Fixed add in calc.py."))
    session = await open_session(config=_on())
    events = Events()
    finished = await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=events.append)
    assert finished.status is TaskStatus.DONE
    assert (workspace / "calc.py").read_text().startswith("def add(a, b):\n    return a + b")
    (started,) = [e for e in events.of(ToolStarted) if e.name == "write"]
    assert started.from_text
    sent = session.messages  # the write, its result (checked at once), and the report minicode wrote
    assert sent[-3].tool_calls[0].name == "write" and sent[-2].role == "tool"
    assert finished.final_text.startswith("Edited calc.py; `python")


async def test_with_the_assists_off_advice_stays_an_answer(open_session, provider, workspace):
    (workspace / "calc.py").write_text(CALC)
    provider.script(text(FIXED))
    session = await open_session()
    finished = await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    assert finished.status is TaskStatus.DONE and (workspace / "calc.py").read_text() == CALC


def test_one_shell_block_is_the_command_it_shows() -> None:
    from minicode.agent.advice import command_block

    assert command_block("```bash\n$ python3 count.py\n```") == "python3 count.py"
    assert command_block("Let me check:\n```sh\npytest -q\n```") == "pytest -q"
    assert command_block("```bash\nbash\n```") is None  # nothing to run
    assert command_block("```bash\nls\n```\n```bash\npwd\n```") is None  # two blocks: an explanation
    assert command_block("```python\nprint(1)\n```") is None
    assert command_block("Long explanation. " * 30 + "```bash\nls\n```") is None


async def test_with_the_assists_on_a_shell_block_after_a_second_chance_is_run(open_session, provider, workspace):
    (workspace / "count.py").write_text("print(6 * 7)\n")
    provider.script(text("It prints 41."), text("```bash\npython3 count.py\n```"), text("It prints 42."))
    session = await open_session(config=_on())
    finished = await session.turn("Run count.py and tell me the number it prints.", approver=AutoApprover(),
                                  emit=Events().append)  # fmt: skip
    assert finished.final_text == "It prints 42."
    result = provider.requests[2].messages[-1]
    assert result.role == "tool" and "42" in (result.content or "")


async def test_with_the_assists_on_an_edit_that_breaks_python_is_refused(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    provider.script(
        tools(("edit", {"path": "calc.py", "old_text": "def add(a, b):", "new_text": "def add(a, b): return a + b"})),
        text("Done."), text("Done."), text("Done."),
    )  # fmt: skip
    session = await open_session(config=_on())
    await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    result = provider.requests[1].messages[-1]
    assert result.role == "tool" and "not valid Python (line 2: " in (result.content or "")
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # unchanged


async def test_with_the_assists_on_a_write_of_prose_into_a_python_file_is_refused(open_session, provider, workspace):
    provider.script(
        tools(("write", {"path": "hello.py", "content": "Hello, world!\n"})),
        tools(("write", {"path": "hello.py", "content": "print('Hello, world!')\n"})),
        tools(("bash", {"command": "python3 hello.py"})),
        text("Created hello.py."),
    )  # fmt: skip
    session = await open_session(config=_on())
    await session.turn("Create hello.py that prints Hello, world!", approver=AutoApprover(), emit=Events().append)
    refused = provider.requests[1].messages[-1]
    assert refused.role == "tool" and "hello.py refused: the new content is not valid Python" in (refused.content or "")
    assert """a program that prints that text is {"content": "print('Hello, world!')"}""" in (refused.content or "")
    assert (workspace / "hello.py").read_text() == "print('Hello, world!')\n"


async def test_with_the_assists_on_a_file_broken_before_may_be_fixed_in_steps(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b:\n    return a - b\ndef sub(a, b:\n    return a - b\n")
    provider.script(
        tools(("edit", {"path": "calc.py", "old_text": "def add(a, b:", "new_text": "def add(a, b):"})),
        text("Done."), text("Done."), text("Done."),
    )  # fmt: skip
    session = await open_session(config=_on())
    await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    result = provider.requests[1].messages[-1].content or ""
    assert "Edited calc.py" in result and "is still not valid Python: line 3" in result


def test_a_call_with_a_python_triple_quoted_content_in_a_json_tag_is_recovered() -> None:
    from minicode.agent.text_calls import recover_calls
    from minicode.tools.registry import default_registry

    reply = '<json>\n{"name": "write", "arguments": {"path": "a.py", "content": """x = 1\\n"""}}\n</json>'
    found = recover_calls(reply, default_registry().specs())
    assert found is not None and found.calls[0].arguments == '{"path": "a.py", "content": "x = 1\\n"}'


async def test_advice_for_a_file_that_cannot_be_read_as_text_stays_an_answer(open_session, provider, workspace):
    (workspace / "calc.py").write_bytes(b"def add(a, b):\n    return a - b  # \xff\n")  # not UTF-8
    provider.script(text(FIXED), text("I could not."), text("Still not."))
    session = await open_session(config=_on())
    await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    assert (workspace / "calc.py").read_bytes().endswith(b"\xff\n")
    assert not provider.requests[1].messages[-2].tool_calls  # the advice stayed an answer


async def test_with_the_assists_on_an_edit_that_replaces_a_function_instead_of_adding_is_refused(
        open_session, provider, workspace):
    (workspace / "numbers.py").write_text("def square(n):\n    return n * n\n")
    new = "def is_prime(n):\n    return n > 1"
    provider.script(
        tools(("edit", {"path": "numbers.py", "old_text": "def square(n):\n    return n * n", "new_text": new})),
        text("Done."), text("Done."), text("Done."),
    )  # fmt: skip
    session = await open_session(config=_on())
    await session.turn("Add a function is_prime(n) to numbers.py", approver=AutoApprover(), emit=Events().append)
    result = provider.requests[1].messages[-1].content or ""
    assert "edit of numbers.py refused: this would remove square()" in result
    assert (workspace / "numbers.py").read_text() == "def square(n):\n    return n * n\n"


async def test_with_the_assists_on_a_rename_says_where_the_old_name_is_still_used(open_session, provider, workspace):
    (workspace / "billing").mkdir()
    (workspace / "billing" / "invoice.py").write_text("def calc_total(lines):\n    return sum(lines)\n")
    (workspace / "billing" / "report.py").write_text("from billing.invoice import calc_total\n\n"
                                                     "def summary(lines):\n    return calc_total(lines)\n")
    provider.script(
        tools(("edit", {"path": "billing/invoice.py", "old_text": "calc_total", "new_text": "compute_total"})),
        text("Done."), text("Done."), text("Done."),
    )  # fmt: skip
    session = await open_session(config=_on())
    await session.turn("Rename calc_total to compute_total everywhere", approver=AutoApprover(), emit=Events().append)
    result = provider.requests[1].messages[-1].content or ""
    assert "calc_total still appears in: billing/report.py (lines 1, 4). The rename is not done until it is gone" in result
    assert result.endswith('{"name": "edit", "arguments": {"path": "billing/report.py", "old_text": "calc_total", '
                           '"new_text": "compute_total", "replace_all": true}}')
    plain = await open_session()  # the assists off: the result is the edit's alone
    provider.script(tools(("edit", {"path": "billing/report.py", "old_text": "calc_total", "new_text": "compute_total",
                                    "replace_all": True})), text("Done."))
    await plain.turn("Rename calc_total in report.py", approver=AutoApprover(), emit=Events().append)
    assert "still appears" not in (provider.requests[-1].messages[-1].content or "")


async def test_with_the_assists_on_a_write_of_only_the_new_function_keeps_the_others(open_session, provider, workspace):
    (workspace / "numbers.py").write_text("def square(n):\n    return n * n\n")
    new = "def is_prime(n):\n    return n > 1\n"
    provider.script(tools(("write", {"path": "numbers.py", "content": new})), text("Added is_prime."))
    session = await open_session(config=_on())
    await session.turn("Add a function is_prime(n) to numbers.py", approver=AutoApprover(), emit=Events().append)
    assert (workspace / "numbers.py").read_text() == "def square(n):\n    return n * n\n\n\n" + new
    result = session.messages[-2].content or ""
    assert "is_prime() added; the file's other definitions were kept" in result


async def test_with_the_assists_off_a_write_is_run_as_sent(open_session, provider, workspace):
    (workspace / "numbers.py").write_text("def square(n):\n    return n * n\n")
    provider.script(tools(("write", {"path": "numbers.py", "content": "def is_prime(n):\n    return n > 1\n"})),
                    text("Done."))
    session = await open_session()
    await session.turn("Add a function is_prime(n) to numbers.py", approver=AutoApprover(), emit=Events().append)
    assert (workspace / "numbers.py").read_text() == "def is_prime(n):\n    return n > 1\n"
