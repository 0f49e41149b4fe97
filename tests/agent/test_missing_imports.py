"""Imports a small model's Python write left out, added (agent/missing_imports.py), and through the loop."""

from __future__ import annotations

from dataclasses import replace

from minicode.agent.approval import AutoApprover
from minicode.agent.missing_imports import definers, undefined_names, with_imports
from tests.agent.conftest import Events, make_config, python_env
from tests.agent.scripted import text, tools

TEST = 'def test_count():\n    store = Store()\n    assert math.floor(store.count()) == 0\n'


def test_the_names_read_and_never_bound_are_undefined() -> None:
    assert undefined_names(TEST) == ["Store", "math"]
    bound = ("import os\nfrom a import b as c\n\n\ndef f(x, *args, y=1, **kw):\n    z = [i for i in x]\n"
             "    try:\n        pass\n    except OSError as e:\n        print(e, z, c, os, args, kw, y, later)\n"
             "    global g\n\n\nlater = 1\nclass K:\n    pass\n__file__, __name__\n")
    assert undefined_names(bound) == []  # a name bound anywhere counts, builtins and module names too
    assert undefined_names("from x import *\nprint(y)\n") == []  # a star import may bring anything
    assert undefined_names("def f(:\n") == []  # does not parse: the parse check speaks for it


def test_a_name_one_workspace_module_defines_gets_its_import_and_no_guess_otherwise() -> None:
    modules = {"inventory.store": "class Store:\n    pass\n", "inventory.test_store": "", "other": "X = 1\n"}
    assert definers(["Store", "math", "X"], modules, "inventory.test_store") == {
        "Store": "from inventory.store import Store", "math": "import math", "X": "from other import X"}
    two = {"a": "def f():\n    pass\n", "b": "def f():\n    pass\n"}
    assert definers(["f", "nowhere", "_thread"], two, "c") == {}  # two definers, none, a private module
    assert definers(["f"], {"c": "def f():\n    pass\n"}, "c") == {}  # the file itself is no source


def test_the_imports_go_after_the_docstring_and_the_files_own_imports() -> None:
    assert with_imports('"""Doc."""\nimport os\n\nx = 1\n', ["import re"]) == '"""Doc."""\nimport os\nimport re\n\nx = 1\n'
    assert with_imports("def f():\n    pass\n", ["import re"]) == "import re\n\n\ndef f():\n    pass\n"
    assert with_imports("x = 1\n", []) == "x = 1\n"


def _on():  # type: ignore[no-untyped-def]
    config = make_config()
    return replace(config, model=replace(config.model, assists="on"))


async def test_with_the_assists_on_a_test_written_without_its_import_gets_it(open_session, provider, workspace):
    (workspace / "inventory").mkdir()
    (workspace / "inventory" / "__init__.py").write_text("")
    (workspace / "inventory" / "store.py").write_text("class Store:\n    def count(self):\n        return 0\n")
    provider.script(tools(("write", {"path": "inventory/test_store.py", "content": TEST})),
                    text("Added the test."))
    session = await open_session(config=_on(), env=python_env(workspace))
    await session.turn("Write a test for Store.count in inventory/test_store.py", approver=AutoApprover(),
                       emit=Events().append)
    written = (workspace / "inventory" / "test_store.py").read_text()
    assert written == "from inventory.store import Store\nimport math\n\n\n" + TEST
    result = session.messages[-2].content or ""
    assert "added the imports the code uses: from inventory.store import Store; import math" in result
    assert "[Checked at once with bash: python -m pytest -q inventory/test_store.py]" in result
    assert "1 passed" in result and result.endswith("[exit code 0]")


async def test_with_the_assists_off_the_write_is_run_as_sent(open_session, provider, workspace):
    (workspace / "store.py").write_text("class Store:\n    pass\n")
    provider.script(tools(("write", {"path": "test_store.py", "content": TEST})), text("Done."))
    session = await open_session()
    await session.turn("Write a test for Store in test_store.py", approver=AutoApprover(), emit=Events().append)
    assert (workspace / "test_store.py").read_text() == TEST
