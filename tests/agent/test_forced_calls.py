"""With the small-model assists on, an answer that must act is constrained to a call
(``assists.must_call`` / ``call_schema``, sent as ``ChatRequest.answer_schema``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.assists import FORCED_LOOKS, MAX_FORCED, TurnFacts, must_call
from minicode.agent.call_schema import call_schema
from minicode.agent.events import TaskStatus
from tests.agent.conftest import Events, make_config, python_env
from tests.agent.scripted import text, tools

TOOLS = ["read", "ls", "glob", "grep", "write", "edit", "bash"]
LOOKERS = ("read", "ls", "glob", "grep", "bash")


def facts(task: str, ran: list[tuple[str, bool]] | None = None, **kw: object) -> TurnFacts:
    return TurnFacts(ran=list(ran or []), task=task, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("task", "ran", "shown", "forced", "allowed"), [
    ("Fix the bug in calc.py", [], ["calc.py"], 0, tuple(TOOLS)),  # a change to make: any call first
    ("Fix the bug in calc.py", [("read", True)], ["calc.py"], FORCED_LOOKS, ("write", "edit")),  # looked enough
    ("Fix the bug in calc.py", [("edit", True)], ["calc.py"], 1, ("bash",)),  # changed, not checked
    ("Fix the bug in calc.py", [("edit", True), ("bash", False)], ["calc.py"], 2, tuple(TOOLS)),  # red: fix it
    ("Fix the bug in calc.py", [("edit", True), ("bash", False), ("bash", True)], ["calc.py"], 3, None),  # green
    ("Fix the bug in calc.py", [("edit", False)], ["calc.py"], 1, tuple(TOOLS)),  # a failed edit is no change
    ("Run count.py and tell me the number", [], ["count.py"], 0, ("bash",)),
    ("Run count.py and tell me the number", [("read", True)], ["count.py"], 1, ("bash",)),
    ("Run count.py and tell me the number", [("bash", True)], ["count.py"], 1, None),
    ("Which port does the server in this project use?", [], [], 0, LOOKERS),  # not looked: no changers
    ("Which port does the server in this project use?", [], ["config.py"], 0, None),  # the brief showed it
    ("What is a closure in Python?", [], [], 0, None),  # a plain question
    ("How many bytes are in a kilobyte?", [], ["notes.txt"], 0, None),  # a plain one in a tiny workspace
    ("What does compute() in calc/core.py return?", [], ["calc/core.py"], 0, ("bash",)),  # computed: run it
    ("How many functions are defined in lib/helpers.py?", [], ["lib/helpers.py"], 0, ("bash",)),
])
def test_what_the_next_answer_must_call(task: str, ran: list[tuple[str, bool]], shown: list[str], forced: int,
                                        allowed: tuple[str, ...] | None) -> None:
    assert must_call(task, facts(task, ran, shown=shown, forced=forced), TOOLS) == allowed


def test_red_tests_after_a_fix_force_a_change_and_a_call_refused_twice_is_left_out() -> None:
    task = "python -m pytest -q shop fails. Fix it."
    files = ["shop/pricing.py", "shop/tests/test_pricing.py"]
    red = facts(task, [("bash", False), ("edit", True), ("bash", False)], files=files, forced=3)
    assert must_call(task, red, TOOLS) == ("edit",)  # not the same run again: a change of its lines
    other = "Fix the bug in calc.py"  # no failing tests named: the check may have been the wrong command
    assert must_call(other, facts(other, [("edit", True), ("bash", False)], forced=3), TOOLS) == tuple(TOOLS)
    json_task = "In package.json set the version to 1.3.0"
    refused = {("write", '{"path": "package.json"}', "refused"): 2}
    assert must_call(json_task, facts(json_task, [("write", False)] * 2, forced=3, failed=refused), TOOLS) == ("edit",)
    once = {("write", '{"path": "package.json"}', "refused"): 1}
    assert must_call(json_task, facts(json_task, [("write", False)], forced=3, failed=once), TOOLS) == ("write", "edit")
    existing = facts(json_task, [("write", False)], forced=3, failed=once, files=["package.json"])
    assert must_call(json_task, existing, TOOLS) == ("edit",)  # a refused rewrite of a file: its lines, edited
    both = {("write", "{}", "refused"): 2, ("edit", "{}", "not found"): 2}  # nothing else left: as it was
    assert must_call(json_task, facts(json_task, [("write", False)], forced=3, failed=both), TOOLS) == ("write", "edit")


def test_a_rename_task_may_edit_a_bare_name() -> None:
    from minicode.agent.assists import wants_rename

    assert wants_rename("Rename calc_total to compute_total everywhere")
    assert wants_rename("calc_total should be renamed")
    assert not wants_rename("python -m pytest -q shop fails. Fix it.")


def test_a_change_in_a_workspace_shown_whole_skips_the_looks() -> None:
    task = "Add a function is_prime(n) to mathutils/numbers.py"
    seen = facts(task, shown=["mathutils/numbers.py"], files=["mathutils/__init__.py", "mathutils/numbers.py"],
                 seen_all=True)
    assert must_call(task, seen, TOOLS) == ("write", "edit", "bash")  # a re-read of what was shown costs a request
    assert must_call(task, replace(seen, seen_all=False), TOOLS) == tuple(TOOLS)


async def test_the_brief_says_whether_it_showed_the_whole_workspace(open_session, provider, workspace):
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "__init__.py").write_text("")
    (workspace / "pkg" / "numbers.py").write_text("def square(n):\n    return n * n\n")
    provider.script(tools(("edit", {"path": "pkg/numbers.py", "old_text": "    return n * n",
                                    "new_text": "    return n ** 2"})), tools(("bash", {"command": "true"})), text("Done."))
    session = await open_session(config=_on(), env={"PATH": "/nonexistent", "HOME": str(workspace)})  # checks fail
    await session.turn("Change square in pkg/numbers.py to use **", approver=AutoApprover(), emit=Events().append)
    first = [one["properties"]["name"]["const"] for one in provider.requests[0].answer_schema["oneOf"]]  # type: ignore[index]
    assert first == ["write", "edit", "bash"]
    for n in range(6):  # a workspace larger than the brief shows whole: the looks stay
        (workspace / "pkg" / f"m{n}.py").write_text(f"X = {n}\n")
    provider.script(tools(("edit", {"path": "pkg/numbers.py", "old_text": "    return n ** 2",
                                    "new_text": "    return n * n"})), tools(("bash", {"command": "true"})), text("Done."))
    await session.turn("Change square in pkg/numbers.py back to *", approver=AutoApprover(), emit=Events().append)
    later = [one["properties"]["name"]["const"] for one in provider.requests[3].answer_schema["oneOf"]]  # type: ignore[index]
    assert "read" in later


def test_no_call_is_forced_after_a_denial_past_the_cap_or_without_tools() -> None:
    task = "Fix the bug in calc.py"
    assert must_call(task, facts(task, denied=True), TOOLS) is None
    assert must_call(task, facts(task, forced=MAX_FORCED), TOOLS) is None
    assert must_call(task, facts(task), []) is None
    assert must_call("Run it and report", facts("Run it and report"), ["read"]) == ("read",)  # no bash: a look


def test_the_schema_is_one_call_to_one_of_the_tools() -> None:
    params = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    schema = call_schema([("read", params), ("bash", {"type": "object"})])
    first, second = schema["oneOf"]  # type: ignore[misc]
    assert first == {"type": "object", "properties": {"name": {"const": "read"},
                                                      "arguments": {**params, "additionalProperties": False}},
                     "required": ["name", "arguments"], "additionalProperties": False}
    assert second["properties"]["name"] == {"const": "bash"}


def test_a_forced_call_has_only_the_required_arguments_and_those_kept() -> None:
    params = {"type": "object", "required": ["command"],
              "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}}}
    (bash,) = call_schema([("bash", params)])["oneOf"]  # type: ignore[misc]
    assert bash["properties"]["arguments"]["properties"] == {"command": {"type": "string"}}  # no "timeout": 120
    assert bash["properties"]["arguments"]["additionalProperties"] is False
    (kept,) = call_schema([("bash", params)], keep=("timeout",))["oneOf"]  # type: ignore[misc]
    assert set(kept["properties"]["arguments"]["properties"]) == {"command", "timeout"}
    loose = {"type": "object"}  # no properties to keep or drop: as declared
    assert call_schema([("x", loose)])["oneOf"][0]["properties"]["arguments"] == loose  # type: ignore[index]


def _on():  # type: ignore[no-untyped-def]
    config = make_config()
    return replace(config, model=replace(config.model, assists="on"))


def _names(schema: object) -> list[str] | None:
    if schema is None:
        return None
    return [one["properties"]["name"]["const"] for one in schema["oneOf"]]  # type: ignore[index]


async def test_a_change_task_is_constrained_to_calls_until_it_is_made_and_checked(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    provider.script(tools(("edit", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})))
    session = await open_session(config=_on(), env=python_env(workspace))
    finished = await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    assert finished.status is TaskStatus.DONE and "a + b" in (workspace / "calc.py").read_text()
    schemas = [_names(r.answer_schema) for r in provider.requests]
    assert schemas == [["write", "edit", "bash"]]  # the whole workspace came with the task: no look needed;
    # then the check ran at once (green), and minicode wrote the report
    assert finished.final_text == "Edited calc.py; `python calc.py` passed."


async def test_a_model_that_never_acts_is_constrained_at_most_max_forced_times(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    provider.script(*[tools(("grep", {"pattern": f"x{n}", "path": "calc.py"})) for n in range(MAX_FORCED + 1)],
                    *[text("I give up.") for _ in range(3)])  # with the second chances after it
    session = await open_session(config=_on())
    finished = await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    assert finished.status is TaskStatus.DONE
    forced = [_names(r.answer_schema) for r in provider.requests]
    assert all(s is not None for s in forced[:MAX_FORCED]) and forced[MAX_FORCED] is None
    assert forced[FORCED_LOOKS] == ["write", "edit"]  # after looking twice: a change, nothing else


async def test_with_the_assists_off_no_answer_is_constrained(open_session, provider, workspace):
    provider.script(tools(("read", {"path": "calc.py"})), text("Fixed."))
    (workspace / "calc.py").write_text("x = 1\n")
    session = await open_session()  # auto, nothing learned: a model that calls natively
    await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    assert [r.answer_schema for r in provider.requests] == [None, None]


async def test_with_the_assists_on_a_call_that_failed_the_same_way_before_says_so(open_session, provider, workspace):
    call = ("read", {"path": "missing.py"})
    provider.script(tools(call), tools(call), tools(("read", {"path": "other.py"})), text("No such file."),
                    text("No such file."), text("No such file."))
    session = await open_session(config=_on())
    await session.turn("What does missing.py print?", approver=AutoApprover(), emit=Events().append)
    results = [m.content or "" for m in session.messages if m.role == "tool"]
    assert "same call before" not in results[0] and "sent this same call before and it failed the same way" in results[1]
    assert "same call before" not in results[2]  # another call: its own result


async def test_with_the_assists_off_a_repeated_failure_is_left_as_it_is(open_session, provider, workspace):
    call = ("read", {"path": "missing.py"})
    provider.script(tools(call), tools(call), text("No such file."))
    session = await open_session()
    await session.turn("What does missing.py print?", approver=AutoApprover(), emit=Events().append)
    results = [m.content or "" for m in session.messages if m.role == "tool"]
    assert results[0] == results[1]


async def test_with_the_assists_on_a_model_stuck_on_one_failing_call_ends_the_task(open_session, provider, workspace):
    from minicode.agent.assists import MAX_SAME_FAILURES

    call = ("read", {"path": "missing.py"})
    provider.script(*[tools(call) for _ in range(MAX_SAME_FAILURES)], text("never asked"))
    session = await open_session(config=_on())
    finished = await session.turn("What does missing.py print?", approver=AutoApprover(), emit=Events().append)
    assert finished.status is TaskStatus.ERROR and "same read call 3 times" in (finished.error or "")
    assert len(provider.requests) == MAX_SAME_FAILURES
    assert session.messages[-1].role == "tool"  # every call answered: the session stays valid


def test_a_forced_change_for_failing_tests_may_only_name_the_code() -> None:
    from minicode.agent.assists import change_paths

    files = ["shop/__init__.py", "shop/pricing.py", "shop/tests/test_pricing.py", "README.md"]
    task = "python -m pytest -q shop fails. Fix it."
    assert change_paths(task, facts(task, files=files)) == ["shop/pricing.py"]
    assert change_paths("Add a test for discount", facts("Add a test for discount", files=files)) is None
    assert change_paths("Create hello.py", facts("Create hello.py", files=files)) is None
    params = {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}
    schema = call_schema([("write", params), ("read", params)], ["shop/pricing.py"])
    write, read = schema["oneOf"]  # type: ignore[misc]
    assert write["properties"]["arguments"]["properties"]["path"] == {"type": "string", "enum": ["shop/pricing.py"]}
    assert read["properties"]["arguments"] == params  # a look may name any file


async def test_a_forced_call_for_failing_tests_names_only_the_code_in_its_schema(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "test_calc.py").write_text("from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    provider.script(tools(("bash", {"command": "exit 1"})),  # the tests' run comes first; this one shows no failure
                    tools(("edit", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})),
                    tools(("bash", {"command": "true"})), text("Fixed."))
    session = await open_session(config=_on())
    await session.turn("test_calc.py fails. Fix the bug.", approver=AutoApprover(), emit=Events().append)
    first = provider.requests[0].answer_schema["oneOf"]  # type: ignore[index]
    assert [one["properties"]["name"]["const"] for one in first] == ["bash"]
    edit = next(one for one in provider.requests[1].answer_schema["oneOf"]  # type: ignore[index]
                if one["properties"]["name"]["const"] == "edit")
    (only,) = edit["properties"]["arguments"]["anyOf"]  # the one file a fix may name, and its own lines
    assert only["properties"]["path"] == {"const": "calc.py"}
    assert only["properties"]["old_text"]["enum"] == ["def add(a, b):", "    return a - b", "def add(a, b):\n    return a - b"]


def test_an_edit_may_only_take_a_line_of_the_file_or_a_name_in_it(tmp_path) -> None:
    from minicode.agent.call_schema import EDIT_CHOICES_MAX, edit_choices

    (tmp_path / "pricing.py").write_text('def discount(price, percent):\n    """Off."""\n    return price\n\n    return price\n')
    (tmp_path / "big.py").write_text("".join(f"x{i} = {i}\n" for i in range(EDIT_CHOICES_MAX)))
    (tmp_path / "blob.bin").write_bytes(b"\xff\xfe\x00")
    choices = edit_choices(tmp_path, ["pricing.py", "missing.py", "blob.bin", "../outside.py", "big.py"], names=True)
    # a line that occurs twice would be ambiguous; a blank line is no anchor; unreadable or
    # outside files, and files past the cap, are left out
    whole = 'def discount(price, percent):\n    """Off."""\n    return price\n\n    return price'
    assert choices == {"pricing.py": ["def discount(price, percent):", '    """Off."""', whole, "discount", "price", "percent",
                                      "Off"]}
    assert edit_choices(tmp_path, ["pricing.py"]) == {"pricing.py": ["def discount(price, percent):", '    """Off."""', whole]}
    params = {"type": "object", "properties": {"path": {"type": "string"}, "old_text": {"type": "string"},
                                               "new_text": {"type": "string"}}, "required": ["path", "old_text", "new_text"],
              "additionalProperties": False}
    (edit,) = call_schema([("edit", params)], None, choices)["oneOf"]  # type: ignore[misc]
    (one,) = edit["properties"]["arguments"]["anyOf"]
    assert one["properties"]["path"] == {"const": "pricing.py"} and one["required"] == ["path", "old_text", "new_text"]
    assert call_schema([("edit", params)], None, {})["oneOf"][0]["properties"]["arguments"] == params  # type: ignore[index]


def test_a_fix_for_red_tests_may_not_edit_a_docstring_or_a_comment(tmp_path) -> None:
    from minicode.agent.call_schema import edit_choices

    (tmp_path / "slug.py").write_text('import re\n\n\ndef slugify(title):\n    """A URL slug:\n    lower case."""\n'
                                      '    # words only\n    words = re.findall("[a-z]+", title)\n    return "-".join(words)\n')
    (tmp_path / "broken.py").write_text('def f(:\n    """Doc."""\n')
    code = edit_choices(tmp_path, ["slug.py", "broken.py"], code_only=True)
    assert code["slug.py"][:4] == ["import re", "def slugify(title):", '    words = re.findall("[a-z]+", title)',
                                   '    return "-".join(words)']
    assert code["slug.py"][4].startswith("def slugify(title):\n") and len(code["slug.py"]) == 5  # the whole function
    assert code["broken.py"] == ["def f(:", '    """Doc."""']  # does not parse: every line may be the fix
    assert '    """A URL slug:' in edit_choices(tmp_path, ["slug.py"])["slug.py"]  # any other change may edit them


async def test_with_the_assists_on_a_call_repeated_with_the_same_result_ends_in_an_answer(open_session, provider,
                                                                                           workspace):
    from minicode.agent.assists import MAX_SAME_CALLS

    (workspace / "settings.py").write_text("PORT = 8731\n")
    call = ("grep", {"pattern": "PORT", "path": "settings.py"})
    provider.script(*[tools(call) for _ in range(MAX_SAME_CALLS)], text("It listens on 8731."))
    session = await open_session(config=_on())
    events = Events()
    finished = await session.turn("Which port does the server in this project listen on?", approver=AutoApprover(),
                                  emit=events.append)
    assert finished.status is TaskStatus.DONE and finished.final_text == "It listens on 8731."
    results = [m.content or "" for m in session.messages if m.role == "tool"]
    assert "same call before" not in results[0] and "calling it again will not change it" in results[1]
    last = provider.requests[-1]
    assert last.tools == provider.requests[0].tools and last.answer_schema is None  # the prefix stays; no call forced
    assert "no more tools will run" in (last.messages[-1].content or "")
    assert any("same grep call 3 times" in getattr(e, "text", "") for e in events)
    assert len(provider.requests) == MAX_SAME_CALLS + 1


async def test_without_the_assists_a_repeated_call_is_answered_as_usual(open_session, provider, workspace):
    (workspace / "settings.py").write_text("PORT = 8731\n")
    call = ("grep", {"pattern": "PORT", "path": "settings.py"})
    provider.script(*[tools(call) for _ in range(4)], text("8731"))
    session = await open_session()
    finished = await session.turn("Which port?", approver=AutoApprover(), emit=Events().append)
    assert finished.final_text == "8731" and len(provider.requests) == 5
    assert all("same call before" not in (m.content or "") for m in session.messages if m.role == "tool")


async def test_a_rename_left_elsewhere_is_continued_before_it_is_checked(open_session, provider, workspace):
    (workspace / "billing").mkdir()
    (workspace / "billing" / "__init__.py").write_text("")
    (workspace / "billing" / "invoice.py").write_text("def calc_total(lines):\n    return sum(lines)\n")
    (workspace / "billing" / "report.py").write_text("from billing.invoice import calc_total\n")
    provider.script(
        tools(("edit", {"path": "billing/invoice.py", "old_text": "calc_total", "new_text": "compute_total"})),
        tools(("edit", {"path": "billing/report.py", "old_text": "calc_total", "new_text": "compute_total"})),
    )  # fmt: skip
    session = await open_session(config=_on(), env=python_env(workspace))
    finished = await session.turn("Rename calc_total to compute_total everywhere", approver=AutoApprover(),
                                  emit=Events().append)
    # the rename continued, then checked at once when it was done, and minicode wrote the report
    assert [_names(r.answer_schema) for r in provider.requests] == [["write", "edit", "bash"], ["edit"]]
    assert finished.final_text.startswith("Edited billing/invoice.py and billing/report.py; `python -c")
    results = [m.content or "" for m in session.messages if m.role == "tool"]
    assert "Checked at once" not in results[0] and "[Checked at once with bash: python -c \"import billing.report\"]" in results[1]
    edit = provider.requests[1].answer_schema["oneOf"][0]["properties"]["arguments"]["anyOf"]  # type: ignore[index]
    assert any("calc_total" in one["properties"]["old_text"]["enum"] for one in edit)  # a rename may take the bare name


async def test_with_the_assists_on_the_same_change_again_is_refused(open_session, provider, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    insert = ("edit", {"path": "calc.py", "old_text": "def add(a, b):", "new_text": "def add(a, b):\n    return a * b"})
    fix = ("edit", {"path": "calc.py", "old_text": "    return a - b", "new_text": "    return a * b"})
    provider.script(tools(insert), tools(fix), tools(fix), text("Done."), text("Done."), text("Done."))
    session = await open_session(config=_on(), env={"PATH": "/nonexistent", "HOME": str(workspace)})  # checks fail
    await session.turn("Fix the bug in calc.py", approver=AutoApprover(), emit=Events().append)
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"  # the fix, once
    results = [m.content or "" for m in session.messages if m.role == "tool"]
    # an insertion that leaves the old line dead is refused, with the line to change instead
    assert "would leave line 3 of calc.py after the return on line 2, never running" in results[0]
    assert '"old_text": "    return a - b"' in results[0]
    assert results[2].startswith("This is the same change you already made in this task")
    from minicode.agent.assists import ASSIST_RETRY_TEMPERATURE, ASSIST_TEMPERATURE

    # after the repeat the next request samples wider; before it, low
    assert [r.temperature for r in provider.requests[:4]] == [ASSIST_TEMPERATURE, ASSIST_TEMPERATURE,
                                                              ASSIST_TEMPERATURE, ASSIST_RETRY_TEMPERATURE]


def test_a_test_the_task_asks_for_is_written_before_the_task_ends() -> None:
    task = "Add a count() method to Store in inventory/store.py and a test for it in inventory/test_store.py."
    half = facts(task, [("edit", True), ("bash", True)], written=["inventory/store.py"], defined_in={"f.py": {"Store", "count"}})
    assert must_call(task, half, TOOLS) == ("write", "edit")
    done = facts(task, [("edit", True), ("write", True), ("bash", True)],
                 written=["inventory/store.py", "inventory/test_store.py"], defined_in={"f.py": {"Store", "count", "test_count"}})
    assert must_call(task, done, TOOLS) is None
    fix = "inventory/test_store.py fails. Fix it."  # a test named, none asked for: it stays as it is
    assert must_call(fix, facts(fix, [("edit", True), ("bash", True)], written=["inventory/store.py"]), TOOLS) is None


def test_the_second_chance_names_the_test_still_to_write() -> None:
    from minicode.agent.assists import second_chance

    task = "Add count() to Store in store.py and a test for it in test_store.py"
    nudge = second_chance(task, "Done.", facts(task, [("edit", True), ("bash", True)], written=["store.py"],
                                               defined_in={"f.py": {"count"}}), TOOLS)
    assert nudge == ("The task also asks for a test in test_store.py, and it is not written yet. Write it now "
                     "(import what it tests, keep the tests already there), then run it.")
    written = facts(task, [("edit", True), ("write", True), ("bash", True)], written=["store.py", "test_store.py"],
                    defined_in={"f.py": {"count"}}, used={"test_store.py": {"Store", "count"}})
    assert second_chance(task, "Done.", written, TOOLS) is None
    # the test file rewritten with its old test only: the test of count() is still to write
    old_only = facts(task, [("edit", True), ("write", True), ("bash", True)], written=["store.py", "test_store.py"],
                     defined_in={"f.py": {"count"}}, used={"test_store.py": {"Store", "items"}})
    assert (second_chance(task, "Done.", old_only, TOOLS) or "").startswith("The task also asks for a test in test_store.py")


def test_a_function_the_task_asks_to_add_is_defined_before_the_task_ends() -> None:
    from minicode.agent.assists import second_chance
    from minicode.agent.task_names import defined_names

    task = "Add a function is_prime(n) to mathutils/numbers.py"
    ran = [("write", True), ("bash", True)]
    missing = facts(task, ran, written=["mathutils/numbers.py"], defined_in={"f.py": {"square"}})
    assert must_call(task, missing, TOOLS) == ("write", "edit")
    assert second_chance(task, "Done.", missing, TOOLS) == (
        "The task asks to add is_prime(), and no file you changed defines it yet. Add it now, with the rest of the "
        "file kept.")
    assert must_call(task, facts(task, ran, written=["mathutils/numbers.py"], defined_in={"f.py": {"is_prime"}}), TOOLS) is None
    fix = "windows() in ranges/window.py loses its last window. Fix it."  # nothing to add: no such rule
    assert must_call(fix, facts(fix, ran, written=["ranges/window.py"], defined_in={"f.py": {"windows"}}), TOOLS) is None
    remark = ("Add a function is_prime(n) to mathutils/numbers.py that returns True when n is a prime number "
              "and False otherwise (0 and 1 are not prime).")  # live: "otherwise" was taken for a function to add
    assert must_call(remark, facts(remark, ran, written=["mathutils/numbers.py"], defined_in={"f.py": {"is_prime"}}),
                     TOOLS) is None
    hello = "Create hello.py that calls print() once"  # a builtin is nothing to add
    assert must_call(hello, facts(hello, ran, written=["hello.py"], defined_in={}), TOOLS) is None
    assert defined_names("class Store:\n    def count(self):\n        pass\n") == {"Store", "count"}
    assert defined_names("def (:") == set()


async def test_the_forced_change_for_a_missing_test_names_the_test_file(open_session, provider, workspace):
    (workspace / "inventory").mkdir()
    (workspace / "inventory" / "__init__.py").write_text("")
    (workspace / "inventory" / "store.py").write_text("class Store:\n    def add(self, item):\n        pass\n")
    test = "from inventory.store import Store\n\n\ndef test_count():\n    assert Store().count() == 0\n"
    provider.script(tools(("edit", {"path": "inventory/store.py", "old_text": "        pass",
                                    "new_text": "        pass\n\n    def count(self):\n        return 0"})),
                    tools(("write", {"path": "inventory/test_store.py", "content": test})), text("Added count() and its test."))
    session = await open_session(config=_on(), env=python_env(workspace))
    await session.turn("Add a count() method to Store in inventory/store.py and a test for it in "
                       "inventory/test_store.py.", approver=AutoApprover(), emit=Events().append)
    (write,) = provider.requests[1].answer_schema["oneOf"]  # type: ignore[index]
    assert write["properties"]["name"] == {"const": "write"}  # a new file: no edit of it
    assert write["properties"]["arguments"]["properties"]["path"] == {"type": "string", "enum": ["inventory/test_store.py"]}
    assert (workspace / "inventory" / "test_store.py").read_text() == test


def test_a_change_from_one_value_to_another_may_only_edit_the_lines_that_hold_it(tmp_path) -> None:
    from minicode.agent.call_schema import edit_choices

    (tmp_path / "ci.yml").write_text('jobs:\n  test:\n    runs-on: ubuntu-latest\n    with:\n      python-version: "3.10"\n')
    (tmp_path / "other.yml").write_text("name: other\n")
    task = "In ci.yml, change the Python version from 3.10 to 3.12."
    assert edit_choices(tmp_path, ["ci.yml", "other.yml"], task=task) == {"ci.yml": ['      python-version: "3.10"']}
    everything = edit_choices(tmp_path, ["ci.yml"], task="Change the Python version from 3.9 to 3.12")  # no line has it
    assert "    runs-on: ubuntu-latest" in everything["ci.yml"]
    assert len(edit_choices(tmp_path, ["ci.yml"], task="Set the Python version to 3.12")["ci.yml"]) == 5


async def test_a_function_the_task_deletes_is_gone_before_minicode_reports(open_session, provider, workspace):
    (workspace / "core.py").write_text("def parse(text):\n    return text\n\n\ndef old_parse(text):\n    return text.split(':')\n")
    hollow = ("edit", {"path": "core.py", "old_text": "    return text.split(':')", "new_text": "    pass"})
    gone = ("edit", {"path": "core.py", "old_text": "def old_parse(text):\n    pass\n", "new_text": ""})
    provider.script(tools(hollow), tools(gone), text("Deleted."))
    session = await open_session(config=_on(), env=python_env(workspace))
    finished = await session.turn("Delete the unused function old_parse from core.py.", approver=AutoApprover(),
                                  emit=Events().append)
    assert "old_parse" not in (workspace / "core.py").read_text()
    assert [_names(r.answer_schema) for r in provider.requests][1] == ["write", "edit"]  # not done: a change again
    assert finished.final_text.startswith("Edited core.py; `python core.py` passed")
    from minicode.agent.assists import second_chance

    task = "Delete the unused function old_parse from core.py."
    still = facts(task, [("edit", True), ("bash", True)], written=["core.py"], defined_in={"core.py": {"old_parse"}})
    assert (second_chance(task, "Done.", still, TOOLS) or "").startswith("The task asks to delete old_parse")
    assert second_chance(task, "Done.", facts(task, [("edit", True), ("bash", True)], written=["core.py"],
                                              defined_in={"core.py": {"parse"}}), TOOLS) is None
