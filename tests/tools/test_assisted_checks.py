"""What the small-model assists refuse a write or edit for (``tools.assisted_checks``)."""

from __future__ import annotations

import pytest

from minicode.tools.assisted_checks import lost_definitions, refusal, still_broken


@pytest.mark.parametrize(("rel", "old", "new", "says"), [
    ("hello.py", None, b"Hello, world!\n", "not valid Python (line 1"),
    ("package.json", b'{"version": "1.2.7"}\n', b"1.3.0", "not valid JSON"),
    ("pyproject.toml", b'[project]\nname = "x"\n', b"[project\nname = x", "not valid TOML"),
    ("calc.py", b"def add(a, b):\n    return a - b\n", b"def add(a, b): return a +\n", "not valid Python"),
])
def test_a_result_that_no_longer_parses_is_refused(rel: str, old: bytes | None, new: bytes, says: str) -> None:
    reason = refusal(rel, old, new)
    assert reason is not None and says in reason


@pytest.mark.parametrize(("rel", "old", "new"), [
    ("hello.py", None, b"print('Hello, world!')\n"),
    ("notes.txt", b"a", b"{{{"),  # no format to check
    ("calc.py", b"def add(a, b:\n", b"def add(a, b):\n    pass\n"),
    ("calc.py", b"def add(a, b:\ndef sub(a, b:\n", b"def add(a, b):\n    pass\ndef sub(a, b:\n"),  # a fix in steps
    ("data.json", b"{", b'{"a": '),  # broken before: let through
    ("Makefile", b"a", b"b"),
])
def test_a_result_that_parses_or_a_file_broken_before_is_let_through(rel: str, old: bytes | None, new: bytes) -> None:
    assert refusal(rel, old, new) is None


def test_a_one_line_prose_python_file_is_told_the_print_it_means() -> None:
    reason = refusal("hello.py", None, b"Hello, world!")
    assert reason is not None and """{"content": "print('Hello, world!')"}""" in reason


def test_dropped_definitions_are_refused_but_a_rename_or_a_deletion_is_not() -> None:
    old = b"def square(n):\n    return n * n\n\n\nclass Box:\n    pass\n"
    reason = refusal("m.py", old, b"def is_prime(n):\n    return n > 1\n\n\nclass Box:\n    pass\n")
    assert reason is not None and "remove square()" in reason
    renamed = b"def squared(n):\n    return n * n\n\n\nclass Box:\n    pass\n"
    assert lost_definitions(old, renamed) == [] and refusal("m.py", old, renamed) is None
    assert refusal("m.py", old, b"class Box:\n    pass\n", deleting=True) is None


def test_a_file_left_broken_says_what_is_still_wrong() -> None:
    assert "still not valid Python: line 1" in still_broken("a.py", b"def f(:\n")
    assert "still not valid JSON" in still_broken("a.json", b"{")
    assert still_broken("a.py", b"x = 1\n") == "" and still_broken("a.txt", b"{") == ""


@pytest.mark.parametrize(("rel", "old", "new", "edit"), [
    ("package.json", b'{\n  "name": "w",\n  "version": "1.2.7",\n  "private": true\n}\n', b'  "version": "1.3.0"',
     {"path": "package.json", "old_text": '"version": "1.2.7"', "new_text": '"version": "1.3.0"'}),
    ("pyproject.toml", b'[project]\nname = "x"\nversion = "0.1"\n', b'version = 0.2"',
     {"path": "pyproject.toml", "old_text": 'version = "0.1"', "new_text": 'version = 0.2"'}),
])
def test_one_setting_sent_as_the_whole_file_is_told_the_edit_that_sets_it(rel: str, old: bytes, new: bytes,
                                                                        edit: dict[str, str]) -> None:
    import json

    reason = refusal(rel, old, new)
    assert reason is not None and json.dumps({"name": "edit", "arguments": edit}) in reason


def test_a_fragment_naming_no_key_of_the_file_gets_no_edit() -> None:
    reason = refusal("package.json", b'{"name": "w"}\n', b'"version": "1.3.0"')
    assert reason is not None and "edit it" not in reason


def test_a_workspace_module_not_found_says_how_to_run_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from minicode.tools.assisted_checks import run_hint

    (tmp_path / "textkit").mkdir()
    out = "Traceback ...\nModuleNotFoundError: No module named 'textkit'\n"
    assert "python -m pytest -q textkit" in run_hint(out, tmp_path)
    assert run_hint("ModuleNotFoundError: No module named 'requests'", tmp_path) == ""  # not the workspace's
    assert run_hint("1 failed", tmp_path) == ""


@pytest.mark.parametrize(("output", "vacuous"), [
    ("\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nOK\n", True),
    ("============================= test session starts ==============================\ncollected 0 items\n\n"
     "============================ no tests ran in 0.01s =============================\n", True),
    ("\nno tests ran in 0.01s\n", True),
    ("Ran 2 tests in 0.001s\n\nOK\n", False),
    ("2 passed in 0.02s\n", False),
    ("The function ran 0 tests yesterday\n", False),  # words, not a runner's summary line
])
def test_a_run_of_no_test_is_told(output: str, vacuous: bool) -> None:
    from minicode.tools.assisted_checks import ran_no_test

    assert bool(ran_no_test(output)) is vacuous


_PYPROJECT = b'[project]\nname = "widget"\nversion = "1.2.7"\ndependencies = ["click"]\n\n[tool.black]\nline-length = 100\n'


@pytest.mark.parametrize(("rel", "old", "new", "lost"), [
    ("pyproject.toml", _PYPROJECT, b'[project]\nversion = "1.3.0"\n',
     "project.name, project.dependencies, tool, tool.black"),
    ("pyproject.toml", _PYPROJECT, b'version = "1.3.0"\n',
     "project, project.name, project.version, project.dependencies, tool, tool.black"),
    ("package.json", b'{"name": "w", "version": "1.2.7", "scripts": {"test": "t"}}', b'{"version": "1.3.0"}',
     "name, scripts, scripts.test"),
    ("package.json", b'{"name": "w", "scripts": {"test": "t", "lint": "l"}}', b'{"name": "w", "scripts": {"test": "t"}}',
     "scripts.lint"),
])
def test_a_write_that_drops_settings_is_refused(rel: str, old: bytes, new: bytes, lost: str) -> None:
    reason = refusal(rel, old, new)
    assert reason is not None and reason.startswith(f"this would remove {lost} from {rel}")


@pytest.mark.parametrize(("rel", "old", "new", "deleting"), [
    ("pyproject.toml", _PYPROJECT, _PYPROJECT.replace(b"1.2.7", b"1.3.0"), False),  # a change that keeps the rest
    ("package.json", b'{"a": 1}', b'{"a": 1, "b": 2}', False),  # a key added
    ("package.json", b'{"a": 1, "b": 2}', b'{"a": 1}', True),  # an edit that deletes on purpose
    ("package.json", b'[1, 2]', b'[1]', False),  # not a table: nothing to compare
    ("notes.yaml", b"a: 1\nb: 2\n", b"a: 1\n", False),  # no parser for it here
])
def test_a_write_that_keeps_the_settings_passes(rel: str, old: bytes, new: bytes, deleting: bool) -> None:
    assert refusal(rel, old, new, deleting=deleting) is None


@pytest.mark.parametrize(("code", "line"), [
    ("def discount(price, percent):\n    return price - percent\n    return price * percent / 100\n", 3),
    ("for x in y:\n    break\n    print(x)\n", 3),
    ("def f():\n    try:\n        pass\n    except E:\n        raise\n        log()\n", 6),
])
def test_code_left_after_a_return_is_told(code: str, line: int) -> None:
    from minicode.tools.assisted_checks import unreachable

    note = unreachable("m.py", code.encode())
    assert f"line {line} comes after the" in note and "never runs" in note


@pytest.mark.parametrize(("rel", "code"), [
    ("m.py", "def f(x):\n    if x:\n        return 1\n    return 2\n"),
    ("m.py", "def f(:\n    return 1\n    return 2\n"),  # does not parse: still_broken's to say
    ("notes.txt", "return 1\nreturn 2\n"),
])
def test_reachable_code_has_no_note(rel: str, code: str) -> None:
    from minicode.tools.assisted_checks import unreachable

    assert unreachable(rel, code.encode()) == ""


def test_a_change_that_leaves_the_old_line_dead_is_refused_with_that_line() -> None:
    old = b"def discount(price, percent):\n    return price * percent / 100\n"
    new = b"def discount(price, percent):\n    return price - percent\n    return price * percent / 100\n"
    reason = refusal("shop/pricing.py", old, new)
    assert reason is not None and "would leave line 3 of shop/pricing.py after the return on line 2" in reason
    assert '"old_text": "    return price * percent / 100"' in reason
    dead = b"def f():\n    return 1\n    return 2\n"
    assert refusal("m.py", dead, dead + b"x = 1\n") is None  # dead before: not this change's doing


def test_the_line_to_change_is_the_old_one_not_the_docstring_pushed_down() -> None:
    old = b'def windows(seq, n):\n    """Every run."""\n    return [seq[i:i + n] for i in range(len(seq) - n)]\n'
    new = old.replace(b"n):\n", b"n):\n    return []\n", 1)
    reason = refusal("ranges/window.py", old, new)
    assert reason is not None and "would leave line 4 of ranges/window.py after the return on line 2" in reason
    assert '"old_text": "    return [seq[i:i + n] for i in range(len(seq) - n)]"' in reason
