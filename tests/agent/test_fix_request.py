"""A fix for red tests asked for as code (agent/fix_request.py), and through the loop."""

from __future__ import annotations

import shlex
from dataclasses import replace

from minicode.agent.approval import AutoApprover
from minicode.agent.events import Notice, TaskStatus, ToolStarted
from minicode.agent.fix_request import (MAX_REPAIRS, code_shown, failure_excerpt, red_failure,
                                        repair_message)
from tests.agent.conftest import Events, make_config, python_env
from tests.agent.scripted import text, tools

PYTEST_RED = """\
F.                                                                       [100%]
=================================== FAILURES ===================================
_____________________________ test_ten_percent_off _____________________________

    def test_ten_percent_off():
>       assert discount(200, 10) == 180
E       assert 20.0 == 180
E        +  where 20.0 = discount(200, 10)

shop/tests/test_pricing.py:5: AssertionError
=========================== short test summary info ============================
FAILED shop/tests/test_pricing.py::test_ten_percent_off - assert 20.0 == 180
1 failed, 1 passed in 0.02s
[exit code 1]"""
PRICING = 'def discount(price, percent):\n    """The price after the discount."""\n    return price * percent / 100\n'
TEST = "from shop.pricing import discount\n\n\ndef test_ten_percent_off():\n    assert discount(200, 10) == 180\n"
TASK = "python -m pytest -q shop fails. Fix it."


def test_the_excerpt_is_the_failure_without_rulers_and_the_summary_lines() -> None:
    excerpt = failure_excerpt(PYTEST_RED)
    assert excerpt.splitlines() == [
        "test_ten_percent_off:",
        "    def test_ten_percent_off():",
        ">       assert discount(200, 10) == 180",
        "E       assert 20.0 == 180",
        "E        +  where 20.0 = discount(200, 10)",
        "shop/tests/test_pricing.py:5: AssertionError",
        "FAILED shop/tests/test_pricing.py::test_ten_percent_off - assert 20.0 == 180",
        "1 failed, 1 passed in 0.02s",
    ]
    traceback = "Traceback (most recent call last):\n  File \"m.py\", line 3\nZeroDivisionError: division by zero\n[exit code 1]"
    assert failure_excerpt(traceback).splitlines()[-1] == "ZeroDivisionError: division by zero"  # its last lines
    long = "=== FAILURES ===\n" + "E   x\n" * 500
    assert len(failure_excerpt(long).splitlines()) <= 40


def test_only_a_failure_a_change_can_answer_is_red() -> None:
    assert red_failure(PYTEST_RED)
    assert red_failure("Traceback (most recent call last):\nValueError: bad")
    assert not red_failure("bash: pytst: command not found\n[exit code 127]")  # the command, not the code
    by_path = ("Traceback (most recent call last):\n  File \"textkit/test_slug.py\", line 1\n"
               "ModuleNotFoundError: No module named 'textkit'\n[exit code 1]")
    assert not red_failure(by_path)  # a test run by its path: how it ran, not what the code does


def test_the_code_shown_is_the_file_whose_functions_the_failure_names() -> None:
    texts = {"shop/pricing.py": PRICING, "shop/other.py": "def unrelated():\n    return 1\n"}
    assert code_shown(failure_excerpt(PYTEST_RED), texts) == [("shop/pricing.py", PRICING)]
    long = PRICING + "".join(f"\n\ndef f{n}():\n    return {n}\n" for n in range(40))
    ((path, code),) = code_shown(failure_excerpt(PYTEST_RED), {"shop/pricing.py": long})
    assert code == PRICING.rstrip("\n")  # a long file: just the function the failure names
    assert code_shown("E  assert 1 == 2", {"a.py": PRICING}) == [("a.py", PRICING)]  # the one candidate
    assert code_shown("E  assert 1 == 2", {"a.py": PRICING, "b.py": PRICING}) == []  # no guess between two
    assert code_shown("discount", {"a.py": "def discount(:\n"}) == []  # a file that does not parse


def test_the_message_holds_the_failure_the_code_and_what_to_answer_with() -> None:
    message = repair_message("E  assert 20.0 == 180", [("shop/pricing.py", PRICING)])
    assert message.startswith("The tests fail:\n```\nE  assert 20.0 == 180\n```")
    assert f"shop/pricing.py is now:\n```python\n{PRICING}```" in message
    assert "one ```python block" in message
    assert repair_message("E", [], unchanged=True).startswith("Your last answer changed nothing")


def _on():  # type: ignore[no-untyped-def]
    config = make_config()
    return replace(config, model=replace(config.model, assists="on"))


def _shop(workspace) -> None:  # type: ignore[no-untyped-def]
    (workspace / "shop" / "tests").mkdir(parents=True)
    (workspace / "shop" / "__init__.py").write_text("")
    (workspace / "shop" / "pricing.py").write_text(PRICING)
    (workspace / "shop" / "tests" / "__init__.py").write_text("")
    (workspace / "shop" / "tests" / "test_pricing.py").write_text(TEST)


def _red_run() -> dict[str, str]:
    return {"command": f"printf '%s\\n' {shlex.quote(PYTEST_RED.rsplit(chr(10), 1)[0])}; exit 1"}


FIX = ("```python\ndef discount(price, percent):\n    \"\"\"The price after the discount.\"\"\"\n"
       "    return price * (100 - percent) / 100\n```")


async def test_red_tests_in_a_fix_task_ask_for_the_fixed_function_and_its_block_is_the_change(
        open_session, provider, workspace):
    _shop(workspace)
    provider.script(tools(("bash", _red_run())), text(FIX))
    session = await open_session(config=_on(), env=python_env(workspace))
    events = Events()
    finished = await session.turn(TASK, approver=AutoApprover(), emit=events.append)
    assert finished.status is TaskStatus.DONE
    assert "price * (100 - percent) / 100" in (workspace / "shop" / "pricing.py").read_text()
    assert (provider.requests[0].messages[1].content or "").endswith("[The tests run with: python -m pytest -q shop/tests]")
    first = provider.requests[0].answer_schema
    assert [one["properties"]["name"]["const"] for one in first["oneOf"]] == ["bash"]  # type: ignore[index]
    asked = provider.requests[1]
    assert asked.answer_schema is None  # a free answer: the Python block
    assert len(asked.messages) == 1 and asked.tools == () and asked.max_tokens <= 1024  # the message alone
    after = session.messages  # then the conversation, the message and its answer in it
    assert after[0].role == "user" and after[-4] == asked.messages[0] and after[-3].tool_calls[0].name == "write"
    message = asked.messages[-1]
    assert message.role == "user" and "E       assert 20.0 == 180" in (message.content or "")
    assert "shop/pricing.py is now:" in (message.content or "") and "test_pricing.py is now" not in (message.content or "")
    assert any("asking the model for the fix as code" in e.text for e in events.of(Notice))
    (write,) = [e for e in events.of(ToolStarted) if e.name == "write"]
    assert write.from_text
    result = session.messages[-2].content or ""
    assert "[Checked at once with bash: python -m pytest -q shop/tests]" in result
    assert "1 passed" in result and result.endswith("[exit code 0]")  # green
    assert len(provider.requests) == 2  # green: minicode writes the report
    assert finished.final_text.startswith("Edited shop/pricing.py; `python -m pytest -q shop/tests` printed: 1 passed")


async def test_a_fix_answer_that_changes_nothing_is_asked_again_at_most_max_repairs_times(
        open_session, provider, workspace):
    _shop(workspace)
    same = f"```python\n{PRICING}```"
    provider.script(tools(("bash", _red_run())), *[text(same)] * (MAX_REPAIRS + 3))
    session = await open_session(config=_on())
    finished = await session.turn(TASK, approver=AutoApprover(), emit=Events().append)
    assert finished.status is TaskStatus.DONE
    assert (workspace / "shop" / "pricing.py").read_text() == PRICING
    asks = [r.messages[-1].content or "" for r in provider.requests if r.messages[-1].role == "user"]
    repairs = [a for a in asks if "is now:" in a]
    assert len(repairs) == MAX_REPAIRS
    assert repairs[1].startswith("Your last answer changed nothing")
    retried = [r for r in provider.requests if (r.messages[-1].content or "").startswith("Your last answer")]
    assert all(r.temperature is not None and r.temperature > 0.5 for r in retried)  # hotter after no change


async def test_without_the_assists_red_tests_get_no_fix_request(open_session, provider, workspace):
    _shop(workspace)
    provider.script(tools(("bash", _red_run())), text("The discount is wrong."))
    session = await open_session()
    await session.turn(TASK, approver=AutoApprover(), emit=Events().append)
    assert len(provider.requests) == 2
    assert provider.requests[1].messages[-1].role == "tool" and provider.requests[1].temperature is None


async def test_a_task_not_about_failing_tests_gets_no_fix_request(open_session, provider, workspace):
    (workspace / "count.py").write_text("print(1)\n")
    provider.script(tools(("bash", {"command": "echo 'Traceback: AssertionError'; exit 1"})), text("It failed."))
    session = await open_session(config=_on())
    await session.turn("Run count.py and tell me the number", approver=AutoApprover(), emit=Events().append)
    assert not any("is now:" in (m.content or "") for r in provider.requests for m in r.messages if m.role == "user")


async def test_a_question_about_failing_tests_gets_no_fix_request(open_session, provider, workspace):
    _shop(workspace)
    provider.script(tools(("bash", _red_run())), text("test_ten_percent_off fails."))
    session = await open_session(config=_on())
    finished = await session.turn("Run the tests in shop/ and tell me the name of the test that fails. Do not change "
                                  "anything.", approver=AutoApprover(), emit=Events().append)
    assert finished.final_text == "test_ten_percent_off fails." and len(provider.requests) == 2
    assert (workspace / "shop" / "pricing.py").read_text() == PRICING
