"""The CLI entry: mode selection, workspace (-C), config errors, --init, first run, dispatch."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import minicode.cli.frontends.plain
import minicode.cli.main
import minicode.cli.config_setup as setup
from minicode import __version__
from minicode.cli.main import main, pick_mode, resolve_workspace
from minicode.errors import ConfigError, SessionError
from tests.support.streams import FakeStream

SECRET = "sk-SECRET-main-0815"
LOCAL = '[model]\nbase_url = "http://127.0.0.1:9/v1"\nname = "local-model"\napi_key = ""\n'


@pytest.fixture()
def env(home: Path) -> Path:
    """The isolated HOME of tests/conftest.py, under the name these tests use."""
    return home


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    (w / "config").mkdir(parents=True)
    (w / "config" / "config.toml").write_text(LOCAL)
    return w


def install(monkeypatch: pytest.MonkeyPatch, name: str, run: Any) -> None:
    """Replace the frontend module `minicode.cli.frontends.<name>` (e.g. "plain.frontend", "tui.app")."""
    fake = types.ModuleType(f"minicode.cli.frontends.{name}")
    fake.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, f"minicode.cli.frontends.{name}", fake)
    parent_name, _, leaf = f"minicode.cli.frontends.{name}".rpartition(".")
    __import__(parent_name)
    monkeypatch.setattr(sys.modules[parent_name], leaf, fake, raising=False)


@pytest.fixture()
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def plain_run(options: Any, config: Any, workspace: Path, mode: str, piped: Any, env: Any) -> int:
        seen.append({"front": "plain", "mode": mode, "piped": piped, "config": config,
                     "workspace": workspace, "options": options, "env": env})
        return 0

    def app_run(options: Any, config: Any, workspace: Path, env: Any, new_id: str | None = None) -> int:
        seen.append({"front": "app", "config": config, "workspace": workspace})
        return 0

    install(monkeypatch, "plain.frontend", plain_run)
    install(monkeypatch, "tui.app", app_run)
    return seen


# --- mode selection --------------------------------------------------------------------


@pytest.mark.parametrize("task,stdin_tty,stdout_tty,mode", [
    (False, True, True, "interactive"),
    (True, True, True, "oneshot"),
    (True, False, True, "oneshot"),
    (False, False, True, "pipe"),
    (False, False, False, "pipe"),
    (False, True, False, "pipe"),
])
def test_pick_mode(task: bool, stdin_tty: bool, stdout_tty: bool, mode: str) -> None:
    assert pick_mode(task, stdin_tty, stdout_tty) == mode


def test_json_output_is_never_interactive() -> None:
    """--output json with two terminals and no TASK reads tasks line by line (pipe rules)."""
    assert pick_mode(False, True, True, events=True) == "pipe"
    assert pick_mode(True, True, True, events=True) == "oneshot"


def test_interactive_when_both_terminals(env: Path, ws: Path, calls: list[dict[str, Any]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStream("", tty=True))
    monkeypatch.setattr(sys, "stdout", FakeStream("", tty=True))
    assert main(["-C", str(ws)]) == 0
    assert calls[0]["front"] == "app" and calls[0]["workspace"] == ws.resolve()


def test_pipe_mode_when_stdin_is_not_a_terminal(env: Path, ws: Path, calls: list[dict[str, Any]]) -> None:
    sys.stdin = FakeStream("first task\nsecond\n")
    assert main(["-C", str(ws)]) == 0
    assert (calls[0]["front"], calls[0]["mode"], calls[0]["piped"]) == ("plain", "pipe", None)
    assert sys.stdin.read() == "first task\nsecond\n"  # left for the frontend to read line by line


def test_oneshot_attaches_piped_text(env: Path, ws: Path, calls: list[dict[str, Any]],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStream("diff --git a b\n+x\n"))
    assert main(["-C", str(ws), "review", "this"]) == 0
    c = calls[0]
    assert (c["mode"], c["piped"], c["options"].task_text) == ("oneshot", "diff --git a b\n+x\n", "review this")


def test_oneshot_from_terminal_reads_no_stdin(env: Path, ws: Path, calls: list[dict[str, Any]],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStream("must not be read", tty=True))
    assert main(["-C", str(ws), "task"]) == 0
    assert (calls[0]["mode"], calls[0]["piped"]) == ("oneshot", None)


def test_oneshot_with_real_pipe_and_dev_null(env: Path, ws: Path, tmp_path: Path, calls: list[dict[str, Any]],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    piped = tmp_path / "in.txt"
    piped.write_text("context ünïcode\n")
    with open(piped, encoding="utf-8") as f:
        monkeypatch.setattr(sys, "stdin", f)
        assert main(["-C", str(ws), "t"]) == 0
    with open("/dev/null", encoding="utf-8") as f:  # a character device is never read
        monkeypatch.setattr(sys, "stdin", f)
        assert main(["-C", str(ws), "t"]) == 0
    r, w = os.pipe()
    os.write(w, b"from a pipe\n")
    os.close(w)
    with open(r, encoding="utf-8") as f:
        monkeypatch.setattr(sys, "stdin", f)
        assert main(["-C", str(ws), "t"]) == 0
    assert [c["piped"] for c in calls] == ["context ünïcode\n", None, "from a pipe\n"]


def test_oversized_piped_text_is_a_usage_error(env: Path, ws: Path, calls: list[dict[str, Any]],
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(minicode.cli.main, "PIPED_TEXT_LIMIT", 10)
    monkeypatch.setattr(sys, "stdin", FakeStream("x" * 11))
    assert main(["-C", str(ws), "t"]) == 2
    assert "piped input is larger" in capsys.readouterr().err and calls == []


# --- workspace, flags, version ------------------------------------------------------------


def test_dash_c_must_be_an_existing_directory(env: Path, tmp_path: Path, calls: list[dict[str, Any]],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(tmp_path / "missing"), "t"]) == 2
    assert "does not exist" in capsys.readouterr().err
    f = tmp_path / "file"
    f.write_text("")
    assert main(["-C", str(f), "t"]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert calls == []


def test_resolve_workspace(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert resolve_workspace(None, tmp_path) == tmp_path
    assert resolve_workspace(Path("sub"), tmp_path) == (tmp_path / "sub").resolve()
    with pytest.raises(ConfigError, match="-C nope"):
        resolve_workspace(Path("nope"), tmp_path)


def test_relative_config_is_relative_to_the_workspace(env: Path, ws: Path, calls: list[dict[str, Any]]) -> None:
    (ws / "other.toml").write_text(LOCAL.replace("local-model", "from-other"))
    assert main(["-C", str(ws), "--config", "other.toml", "t"]) == 0
    assert calls[0]["config"].model.name == "from-other"


def test_bad_flag_exits_2_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--max-turns", "0"]) == 2
    err = capsys.readouterr().err
    assert "usage: minicode" in err and "--max-turns" in err


def test_version_and_help_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"minicode {__version__}\n"
    assert main(["-h"]) == 0
    assert "--max-turns" in capsys.readouterr().out


@pytest.mark.parametrize("columns", [60, 120])
def test_help_is_formatted_for_the_terminal_width(columns: int, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    lines = text[text.index("options:"):text.index("modes:")].splitlines()  # the epilog is kept as written
    assert text.startswith("usage: minicode") and max(map(len, lines)) <= columns - 2
    assert any(len(line) > 60 for line in lines) == (columns > 60)


def test_version_as_a_real_process() -> None:
    r = subprocess.run([sys.executable, "-m", "minicode", "--version"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"minicode {__version__}\n", "")


def test_overrides_reach_the_frontend(env: Path, ws: Path, calls: list[dict[str, Any]]) -> None:
    assert main(["-C", str(ws), "--model", "other", "--think", "low", "t"]) == 0
    m = calls[0]["config"].model
    assert (m.name, m.thinking) == ("other", "low")


# --- frontend outcomes ------------------------------------------------------------------


def test_missing_frontend_exits_2(env: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "minicode.cli.frontends.plain.frontend", None)  # import fails as if absent
    monkeypatch.delattr(minicode.cli.frontends.plain, "frontend", raising=False)
    assert main(["-C", str(ws), "t"]) == 2
    assert "this mode is not available yet" in capsys.readouterr().err


def test_broken_dependency_of_a_frontend_is_not_masked(env: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    pkg = tmp_path / "broken"
    pkg.mkdir()
    (pkg / "frontend.py").write_text("import minicode_no_such_dependency\n")
    monkeypatch.delitem(sys.modules, "minicode.cli.frontends.plain.frontend", raising=False)
    monkeypatch.delattr(minicode.cli.frontends.plain, "frontend", raising=False)
    monkeypatch.setattr(minicode.cli.frontends.plain, "__path__", [str(pkg), *minicode.cli.frontends.plain.__path__])
    with pytest.raises(ModuleNotFoundError, match="minicode_no_such_dependency"):
        main(["-C", str(ws), "t"])


@pytest.mark.parametrize("exc,code", [
    (KeyboardInterrupt(), 130),
    (ConfigError("unknown session id abc"), 2),
    (SessionError("unknown session id abc", exit_code=2), 2),
    (SessionError("disk full"), 1),
])
def test_frontend_errors_become_exit_codes(env: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], exc: BaseException,
                                           code: int) -> None:
    def run(*a: Any) -> int:
        raise exc

    install(monkeypatch, "plain.frontend", run)
    assert main(["-C", str(ws), "t"]) == code
    err = capsys.readouterr().err
    assert ("interrupted" if code == 130 else str(exc)) in err


def test_frontend_exit_code_is_returned(env: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, "plain.frontend", lambda *a: 1)
    assert main(["-C", str(ws), "t"]) == 1


# --- no config, --init, first run ------------------------------------------------------------


def test_no_config_without_terminal_prints_the_commands(env: Path, tmp_path: Path, calls: list[dict[str, Any]],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["-C", str(empty), "t"]) == 2
    err = capsys.readouterr().err
    assert "no configuration file found" in err
    assert f"minicode -C {empty} --init --base-url https://api.openai.com/v1 --model gpt-4.1 " \
           "--api-key-env OPENAI_API_KEY" in err
    assert str(empty / "config" / "config.toml") in err
    assert f"or write {empty / 'config' / 'config.toml'} yourself, for example:\n  [model]\n" in err
    assert "config.example.toml" not in err
    assert calls == []


def test_init_from_flags_writes_0600_and_refuses_overwrite(env: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    w = tmp_path / "proj"
    w.mkdir()
    argv = ["-C", str(w), "--init", "--base-url", "https://api.x.io/v1", "--model", "m", "--api-key-env", "XK"]
    assert main(argv) == 0
    path = w / "config" / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert 'api_key_env = "XK"' in path.read_text()
    assert str(path) in capsys.readouterr().err
    before = path.read_text()
    assert main(argv) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert path.read_text() == before


def test_init_without_terminal_needs_the_flags(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(tmp_path), "--init", "--base-url", "https://api.x.io/v1"]) == 2
    err = capsys.readouterr().err
    assert "--model NAME" in err and "--api-key-env VAR" in err
    assert not (tmp_path / "config" / "config.toml").exists()


def test_init_loopback_without_key(env: Path, tmp_path: Path) -> None:
    assert main(["-C", str(tmp_path), "--init", "--base-url", "http://127.0.0.1:11434/v1", "--model", "q"]) == 0
    assert 'api_key = ""' in (tmp_path / "config" / "config.toml").read_text()


def test_init_in_terminal_asks_and_hides_the_key(env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStream("\nmy-model\n", tty=True))
    monkeypatch.setattr(sys, "stderr", FakeStream("", tty=True))
    monkeypatch.setattr(setup.getpass, "getpass", lambda prompt, stream=None: SECRET)
    monkeypatch.setattr(setup, "probe_local_servers", lambda: [])
    assert main(["-C", str(tmp_path), "--init"]) == 0
    text = (tmp_path / "config" / "config.toml").read_text()
    assert 'base_url = "https://api.openai.com/v1"' in text and 'name = "my-model"' in text
    assert SECRET in text
    shown = sys.stderr.getvalue()  # type: ignore[attr-defined]
    assert SECRET not in shown and "keep config/config.toml out of version control" in shown
    assert capsys.readouterr().out == ""  # questions never go to stdout


def test_first_run_in_terminal_asks_writes_user_config_and_continues(
    env: Path, tmp_path: Path, calls: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    w = tmp_path / "proj"
    w.mkdir()
    monkeypatch.setattr(sys, "stdin", FakeStream("\nqwen3\n\n", tty=True))
    monkeypatch.setattr(sys, "stderr", FakeStream("", tty=True))
    monkeypatch.setattr(setup.getpass, "getpass", lambda prompt, stream=None: "")
    monkeypatch.setattr(setup, "probe_local_servers", lambda: [("Ollama", "http://127.0.0.1:11434/v1")])
    assert main(["-C", str(w), "fix it"]) == 0
    user = env / ".config" / "minicode" / "config.toml"
    assert stat.S_IMODE(user.stat().st_mode) == 0o600
    assert not (w / "config").exists()  # a key typed at first run never lands in a project
    m = calls[0]["config"].model
    assert (m.base_url, m.name, m.api_key) == ("http://127.0.0.1:11434/v1", "qwen3", "")
    assert "Found a local Ollama" in sys.stderr.getvalue()  # type: ignore[attr-defined]


def test_first_run_cancelled_by_eof_exits_2(env: Path, tmp_path: Path, calls: list[dict[str, Any]],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStream("", tty=True))
    monkeypatch.setattr(sys, "stderr", FakeStream("", tty=True))
    monkeypatch.setattr(setup, "probe_local_servers", lambda: [])
    assert main(["-C", str(tmp_path), "t"]) == 2
    assert "setup cancelled" in sys.stderr.getvalue()  # type: ignore[attr-defined]
    assert calls == [] and not (env / ".config").exists()


def test_piped_text_stream_with_surrogates_becomes_valid_text() -> None:
    assert minicode.cli.main._read_piped(io.StringIO("diff caf\udce9\n")) == "diff caf\ufffd\n"
