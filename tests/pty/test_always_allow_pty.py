"""The full-screen approval offers "Always allow `<rule>` in this project" when a narrow rule
makes sense: choosing it saves the rule (0600, in .minicode/local/permissions.toml), says so,
and the next matching call in a new run is not asked (real executable, real pty)."""

from __future__ import annotations

import time
from typing import Callable

from tests.pty.conftest import READ_PAUSE, Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def test_always_allow_saves_the_rule_and_the_next_run_is_not_asked(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.tool("bash", command="touch first.txt"), Reply.text("made the first"))
    t.send_line("make the first file")
    t.wait_text("Always allow `bash(touch *)` in this project")
    time.sleep(READ_PAUSE)
    t.keys("\x1b[B", "\x1b[B")  # Down twice: once → every call this session → always allow
    t.wait_text("❯ Always allow `bash(touch *)`")
    t.keys("\r")
    t.wait_text("saved rule bash(touch *) in .minicode/local/permissions.toml")
    t.wait_text("made the first")
    assert (t.workspace / "first.txt").exists()
    saved = t.workspace / ".minicode" / "local" / "permissions.toml"
    assert '"bash(touch *)"' in saved.read_text() and (saved.stat().st_mode & 0o777) == 0o600
    t.send_line("/permissions")
    t.wait_text("(saved here: removable)")
    t.send_line("/exit")
    assert "EXIT=0" in t.finish()

    t2 = term_factory()
    t2.server.script(Reply.tool("bash", command="touch second.txt"), Reply.text("made the second"))
    t2.send_line("make the second file")
    t2.wait_text("made the second")
    assert (t2.workspace / "second.txt").exists()
    assert "Allow once" not in "".join(t2.raw)  # the saved rule allowed it: nothing was asked
    t2.send_line("/exit")
    assert "EXIT=0" in t2.finish()


def test_a_compound_command_offers_no_always_choice(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.tool("bash", command="touch a && touch b"), Reply.text("ok"))
    t.send_line("make two")
    t.wait_text("❯ Allow once")
    assert "Always allow" not in t.screen.text()
    time.sleep(READ_PAUSE)
    t.keys("\x1b[A")  # Up wraps to Deny
    t.wait_text("❯ Deny")
    t.keys("\r")
    t.wait_text("reason (optional, Enter sends)")
    t.keys("\r")
    t.wait_text("ok")
    assert not (t.workspace / "a").exists()
    t.send_line("/exit")
    assert "EXIT=0" in t.finish()
