"""The private parts of prompt_toolkit the full screen relies on, named and checked in one place.

prompt_toolkit has no public hook for either use: ``repaint.py`` wraps the renderer's screen
diff (``prompt_toolkit.renderer._output_screen_diff``, whose keyword arguments it reads), and
``app.py`` overrides ``Application._on_resize`` (which calls ``_request_absolute_cursor_position``
and ``_redraw``) and sets the renderer's ``_bracketed_paste_enabled`` and
``_mouse_support_enabled``. pyproject caps prompt_toolkit at the minor release these were
written for (``<3.1``). ``problems`` says what a different release changed:
``tests/cli/frontends/tui/test_pt_private.py`` fails with it, naming the API and the version, and at run
time the full screen uses the stock renderer and resize instead (slower repaints, no crash).
"""

from __future__ import annotations

import inspect
from functools import cache

import prompt_toolkit
import prompt_toolkit.renderer as pt_renderer
from prompt_toolkit.application import Application
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.renderer import Renderer
from prompt_toolkit.styles import DummyStyle

__all__ = ["APPLICATION_METHODS", "RENDERER_FLAGS", "SCREEN_DIFF_PARAMETERS", "problems", "resize_ok", "screen_diff_ok"]

SCREEN_DIFF_PARAMETERS = ("app", "output", "screen", "current_pos", "color_depth", "previous_screen", "last_style",
                          "is_done", "full_screen", "attrs_for_style_string", "style_string_has_style", "size",
                          "previous_width")
"""``_output_screen_diff``'s parameters as prompt_toolkit 3.0 has them (repaint.py passes the
first nine on and reads ``size`` and ``previous_width``)."""
APPLICATION_METHODS = ("_on_resize", "_request_absolute_cursor_position", "_redraw")
RENDERER_FLAGS = ("_bracketed_paste_enabled", "_mouse_support_enabled")


@cache
def screen_diff_ok() -> bool:
    """Whether ``repaint.RepaintRenderer`` may wrap this prompt_toolkit's screen diff."""
    diff = getattr(pt_renderer, "_output_screen_diff", None)
    try:
        return diff is not None and tuple(inspect.signature(diff).parameters) == SCREEN_DIFF_PARAMETERS
    except (TypeError, ValueError):  # not a function any more
        return False


@cache
def resize_ok() -> bool:
    """Whether ``app.py``'s resize (bracketed paste and mouse kept on) fits this prompt_toolkit."""
    if not all(callable(getattr(Application, name, None)) for name in APPLICATION_METHODS):
        return False
    renderer = Renderer(DummyStyle(), DummyOutput())
    return all(isinstance(getattr(renderer, name, None), bool) for name in RENDERER_FLAGS)


def problems() -> list[str]:
    """What this prompt_toolkit changed of the private API above, one line each ([] when none)."""
    found = []
    version = prompt_toolkit.__version__
    if not screen_diff_ok():
        diff = getattr(pt_renderer, "_output_screen_diff", None)
        try:
            got = f"parameters {tuple(inspect.signature(diff).parameters)}" if diff is not None else "missing"
        except (TypeError, ValueError):
            got = "not a function"
        found.append(f"prompt_toolkit {version}: prompt_toolkit.renderer._output_screen_diff is {got}; "
                     f"cli/frontends/tui/repaint.py expects parameters {SCREEN_DIFF_PARAMETERS}")
    if not resize_ok():
        found.append(f"prompt_toolkit {version}: Application{APPLICATION_METHODS} or Renderer{RENDERER_FLAGS} "
                     "changed; cli/frontends/tui/app.py's _on_resize expects those methods and bool flags")
    return found
