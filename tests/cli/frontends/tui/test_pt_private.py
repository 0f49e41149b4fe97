"""The prompt_toolkit private API the full screen uses (``cli/frontends/tui/pt_private.py``): this
release has it as repaint.py and app.py expect — else the failure names what changed and the
version — and a release that changed it gets the stock renderer and resize, not a crash."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from typing import Any

import prompt_toolkit.renderer as pt_renderer
import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.renderer import Renderer

from minicode.cli.frontends.tui import pt_private
from minicode.cli.frontends.tui.app import create_application, run_controller
from minicode.cli.frontends.tui.controller import Controller
from minicode.cli.frontends.tui.markdown import MarkdownRenderer
from minicode.cli.frontends.tui.repaint import RepaintRenderer
from tests.cli.frontends.tui.fake_session import FakeSession


@pytest.fixture(autouse=True)
def _fresh_checks() -> Iterator[None]:
    pt_private.screen_diff_ok.cache_clear()
    pt_private.resize_ok.cache_clear()
    yield
    pt_private.screen_diff_ok.cache_clear()
    pt_private.resize_ok.cache_clear()


def test_this_prompt_toolkit_has_the_private_api_repaint_and_resize_expect() -> None:
    found = pt_private.problems()
    assert found == [], "\n".join(["prompt_toolkit's private API changed (see cli/frontends/tui/pt_private.py):",
                                   *found])
    assert pt_private.screen_diff_ok() and pt_private.resize_ok()


def _changed_diff(app: Any, output: Any, screen: Any, current_pos: Any, *, size: Any) -> Any:
    raise AssertionError("not called: the stock renderer's own diff would be")


def test_a_changed_screen_diff_is_named_with_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pt_renderer, "_output_screen_diff", _changed_diff)
    (line,) = pt_private.problems()
    assert "prompt_toolkit 3." in line and "_output_screen_diff" in line and "'current_pos', 'size')" in line
    monkeypatch.delattr(pt_renderer, "_output_screen_diff")
    pt_private.screen_diff_ok.cache_clear()
    assert "_output_screen_diff is missing" in pt_private.problems()[0]


def test_changed_resize_internals_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    original = Renderer.__init__

    def without_flags(self: Renderer, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        del self._bracketed_paste_enabled

    monkeypatch.setattr(Renderer, "__init__", without_flags)
    (line,) = pt_private.problems()
    assert "_on_resize" in line and "_bracketed_paste_enabled" in line


async def test_a_release_that_changed_them_draws_and_resizes_the_stock_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """(What the checks above say for such a release; its own renderer then calls its own diff.)"""
    import minicode.cli.frontends.tui.app as app_module

    monkeypatch.setattr(app_module, "screen_diff_ok", lambda: False)
    monkeypatch.setattr(app_module, "resize_ok", lambda: False)
    sink = io.StringIO()
    out = Vt100_Output(sink, lambda: Size(rows=12, columns=50), term="xterm-256color")
    with create_pipe_input() as pipe:
        controller = Controller(FakeSession(), MarkdownRenderer())
        controller.start()
        app = create_application(controller, input=pipe, output=out)
        assert type(app.renderer) is Renderer and not isinstance(app.renderer, RepaintRenderer)
        runner = asyncio.ensure_future(run_controller(controller, app))
        try:
            for _ in range(500):
                if app.render_counter:
                    break
                await asyncio.sleep(0.01)
            app._on_resize()  # the stock resize: no private flags touched
            app._redraw()
        finally:
            controller.exit(0)
            await asyncio.wait_for(runner, 5)
    assert app.render_counter > 1 and "idle" in sink.getvalue()
