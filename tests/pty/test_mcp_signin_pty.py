"""A remote MCP server's OAuth sign-in in the full screen: the real executable in a pseudo-terminal,
the SDK's authorization server (tests/mcp/oauth_server.py). The address is a notice at once, before
any task; the browser ($BROWSER, here a script that records the address) is opened with it; once the
test answers like that browser, a notice says it is signed in and /mcp shows it ready."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import httpx2

from tests.e2e.test_mcp_oauth_e2e import auth_server
from tests.pty.conftest import Term

Start = Callable[..., Term]


def test_the_sign_in_address_is_shown_at_once_and_the_browser_opened(term_factory: Start, tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}\n')
    browser.chmod(0o755)
    with auth_server(tmp_path / "issued") as url:
        mcp = tmp_path / "mcp.toml"
        mcp.write_text(f'[mcp.servers.web]\nurl = "{url}"\nstartup_timeout = 30\nsignin_timeout = 60\n')
        t = term_factory("--mcp-config", str(mcp), env_extra={"BROWSER": str(browser)})
        t.wait_text("MCP server web asks you to sign in", timeout=30)
        t.wait(lambda: opened.exists() and opened.read_text().startswith("http"), timeout=30, what="the browser opened")
        with httpx2.Client() as client:
            consent = client.get(opened.read_text())
            assert consent.status_code == 302
            assert "Signed in" in client.get(consent.headers["location"]).text
        t.wait_text("MCP server web: signed in (2 tools)", timeout=30)  # at once, no task needed
        t.send_line("/mcp")
        t.wait_text("web  ready  2 tools")
        t.send("\x03")  # the draft is empty: Ctrl+C leaves
        assert "EXIT=0" in t.finish()
