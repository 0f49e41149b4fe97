"""How to run the function a question asks about (agent/call_hint.py), and in the task message."""

from __future__ import annotations

from dataclasses import replace

from minicode.agent.approval import AutoApprover
from minicode.agent.call_hint import asked_functions, call_hint, count_hint
from tests.agent.conftest import Events, make_config, python_env
from tests.agent.scripted import text

CORE = "def compute():\n    return 41 + 1\n\n\ndef scale(x, by=2):\n    return x * by\n\n\ndef ready(*, strict=False):\n    return 1\n"
HINT = "[To see what compute() returns, run it: python -c 'from calc.core import compute; print(compute())']"


def test_a_question_about_what_a_function_returns_names_the_one_liner() -> None:
    modules = {"calc.core": CORE, "calc": ""}
    assert call_hint("What does compute() in calc/core.py return? Give the number.", modules) == HINT
    assert call_hint("What does the function compute print?", modules) == HINT
    assert call_hint("What does the compute function give?", modules) == HINT
    assert "ready()" in call_hint("What does ready() return?", modules)  # keyword-only with a default


def test_the_functions_a_question_asks_the_result_of() -> None:
    assert asked_functions("What does compute() in calc/core.py return?") == ["compute"]
    assert asked_functions("What does the function compute print?") == ["compute"]
    assert asked_functions("Where is compute() used?") == []  # not about its result: no module is read


def test_no_hint_without_one_function_callable_with_no_argument() -> None:
    modules = {"calc.core": CORE}
    assert call_hint("What does scale() return?", modules) == ""  # it needs an argument
    assert call_hint("Where is compute() used?", modules) == ""  # not about its result
    assert call_hint("What does compute() return?", {**modules, "other": CORE}) == ""  # two definers: no guess
    assert call_hint("What does missing() return?", modules) == ""
    assert call_hint("What does compute() return?", {"calc.core": "def compute(:\n"}) == ""


def _on():  # type: ignore[no-untyped-def]
    config = make_config()
    return replace(config, model=replace(config.model, assists="on"))


async def test_with_the_assists_on_the_question_comes_with_the_command(open_session, provider, workspace):
    (workspace / "calc").mkdir()
    (workspace / "calc" / "__init__.py").write_text("")
    (workspace / "calc" / "core.py").write_text(CORE)
    provider.script(text("42"), text("42"))
    session = await open_session(config=_on(), env=python_env(workspace))
    await session.turn("What does compute() in calc/core.py return?", approver=AutoApprover(), emit=Events().append)
    assert (provider.requests[0].messages[1].content or "").endswith(HINT)


async def test_a_change_task_or_the_assists_off_get_no_command(open_session, provider, workspace):
    (workspace / "calc").mkdir()
    (workspace / "calc" / "__init__.py").write_text("")
    (workspace / "calc" / "core.py").write_text(CORE)
    provider.script(text("42"))
    session = await open_session()
    await session.turn("What does compute() in calc/core.py return?", approver=AutoApprover(), emit=Events().append)
    assert provider.requests[0].messages[1].content == "What does compute() in calc/core.py return?"
    provider.script(text("Done."), text("Done."), text("Done."))
    assisted = await open_session(config=_on())
    await assisted.turn("Change compute() in calc/core.py so it returns 43", approver=AutoApprover(), emit=Events().append)
    assert "To see what" not in (provider.requests[1].messages[1].content or "")


def test_a_question_about_how_many_names_the_command_that_counts() -> None:
    files = ["lib/__init__.py", "lib/helpers.py", "lib/other.py"]
    assert count_hint("How many functions are defined in lib/helpers.py?", files) == (
        "[To count them: grep -cE '^ *(async +)?def ' lib/helpers.py]")
    assert count_hint("How many lines does lib/other.py have?", files) == "[To count them: wc -l < lib/other.py]"
    assert count_hint("How many classes are in lib/helpers.py and lib/other.py?", files) == ""  # two files
    assert count_hint("How many functions are there?", files) == ""  # no file named
    assert count_hint("What does lib/helpers.py do?", files) == ""
