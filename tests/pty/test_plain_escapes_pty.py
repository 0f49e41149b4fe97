"""One-shot mode on a real terminal: escape sequences in the model's answer, a tool's output
and an approval preview are shown visibly (␛…), never obeyed — no window title, no cleared
screen (the full screen does the same)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect

from tests.support.fake_openai import FakeOpenAI, Reply

EXE = str(Path(sys.executable).parent / "minicode")
EVIL = "\x1b]0;PWNED\x07\x1b[2J\x9b31m"


def _spawn(ws: Path, home: Path, *args: str) -> pexpect.spawn:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm", "LANG": "C.UTF-8"}
    return pexpect.spawn(EXE, list(args), cwd=str(ws), env=env, encoding="utf-8", timeout=20, dimensions=(30, 200))


def test_escape_sequences_are_shown_not_obeyed(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        ws = tmp_path / "ws"
        (ws / "config").mkdir(parents=True)
        (ws / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
        )
        server.script(
            Reply.tool("bash", command="printf 'out \\033]0;TOOL\\007 \\033[2J'; exit 3"),
            Reply.tool("write", path="x.txt", content=f"file {EVIL}\n"),
            Reply.text(f"answer {EVIL} end"),
        )
        child = _spawn(ws, tmp_path, "--yes", "do it")
        child.expect(pexpect.EOF)
        child.close()
        seen = child.before
        assert child.exitstatus == 0, seen
        assert "\x1b]0;" not in seen and "\x1b[2J" not in seen and "\x9b" not in seen
        assert "answer ␛]0;PWNED␇␛[2J\ufffd31m end" in seen
        assert "      out" in seen  # the failed command's output tail on stderr, its sequences dropped
        assert (ws / "x.txt").read_text() == f"file {EVIL}\n"  # the file itself is written as sent


def test_json_mode_progress_lines_on_a_terminal_are_shown_not_obeyed(tmp_path: Path) -> None:
    """Finding P7: with --output json, stderr's progress lines carry the model's command and
    file names; on a terminal their escape sequences are made visible too."""
    import pty
    import select
    import subprocess

    with FakeOpenAI() as server:
        ws = tmp_path / "ws"
        (ws / "config").mkdir(parents=True)
        (ws / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
        )
        server.script(
            Reply.tools(("bash", {"command": f"echo hi # {EVIL}"}), ("write", {"path": "a\u202e.txt", "content": "x"}),
                          ("write", {"path": "b\x1b[31m.txt", "content": "x"})),
            Reply.text("done"),
        )
        main, secondary = pty.openpty()
        env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        proc = subprocess.Popen([EXE, "--output", "json", "--yes", "t"], cwd=ws, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=secondary, start_new_session=True)
        os.close(secondary)
        seen = b""
        while True:
            ready, _, _ = select.select([main], [], [], 20)
            if not ready:
                break
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            seen += chunk
        stdout = proc.communicate(timeout=20)[0]
        os.close(main)
    assert proc.returncode == 0, seen
    text = seen.decode("utf-8", "replace")
    assert "bash $ echo hi # ␛]0;PWNED␇␛[2J" in text and "write a⟨U+202E⟩.txt" in text, text
    # a path with an escape is refused before it is shown (finding T12); the refusal is readable
    assert "invalid path for write: the path contains a control character (an escape at position 1)" in text
    assert "\u202e" not in text
    assert b"\x1b" not in seen and b"\x07" not in seen and "\x9b".encode() not in seen
    assert b'"type":"result"' in stdout  # the JSON stream itself is untouched


def test_export_on_a_terminal_shows_escape_sequences_and_into_a_pipe_keeps_them(tmp_path: Path) -> None:
    import re
    import subprocess

    with FakeOpenAI() as server:
        ws = tmp_path / "ws"
        (ws / "config").mkdir(parents=True)
        (ws / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "fake-model"\napi_key = ""\n'
        )
        server.script(Reply.tool("bash", command="printf 'out \\033]0;TOOL\\007 \\033[2J'"),
                      Reply.text(f"answer {EVIL} end"))
        child = _spawn(ws, tmp_path, "--yes", "do it")
        child.expect(pexpect.EOF)
        child.close()
        sid = re.search(r"session ([0-9a-f-]{36})", child.before or "")
        assert child.exitstatus == 0 and sid, child.before

        child = _spawn(ws, tmp_path, "--export", sid.group(1)[:8])
        child.expect(pexpect.EOF)
        child.close()
        seen = child.before
        assert child.exitstatus == 0, seen
        assert "\x1b]0;" not in seen and "\x1b[2J" not in seen and "\x9b" not in seen
        assert "answer ␛]0;PWNED␇␛[2J" in seen and "out ␛]0;TOOL␇" in seen

        piped = subprocess.run([EXE, "--export", sid.group(1)[:8]], cwd=ws, capture_output=True, text=True,
                               env={"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                    "LANG": "C.UTF-8"}, timeout=20)
        assert piped.returncode == 0 and f"answer {EVIL} end" in piped.stdout  # verbatim Markdown
