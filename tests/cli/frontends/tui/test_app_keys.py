"""The real Application driven through a pipe input: keys, paste, queue, interrupts, commands."""

from __future__ import annotations

import asyncio

from prompt_toolkit.layout import BufferControl

from minicode.agent.events import TextChunk
from tests.cli.frontends.tui.conftest import Harness
from tests.cli.frontends.tui.fake_session import Step, held, text_steps


async def test_enter_submits_and_ctrl_j_inserts_a_newline(harness: Harness) -> None:
    await harness.type("one")
    await harness.key("c-j", "t", "w", "o", "enter")
    await harness.until(lambda: harness.session.turns == ["one\ntwo"])
    await harness.until(lambda: harness.controller.task is None)
    assert "› one\n  two" in harness.screen_text()
    assert harness.controller.draft.text == ""


async def test_alt_enter_and_shift_enter_insert_newlines(harness: Harness) -> None:
    await harness.key("a", "\x1b\r", "b", "\x1b[27;2;13~", "c", "\x1b[13;2u", "d")
    assert harness.controller.draft.text == "a\nb\nc\nd"
    assert harness.session.turns == []


async def test_empty_enter_sends_nothing(harness: Harness) -> None:
    await harness.type("   ")
    await harness.key("enter")
    assert harness.session.turns == []


async def test_bracketed_paste_is_one_edit_with_placeholder_and_full_text_sent(harness: Harness) -> None:
    data = "\r".join(f"row {i}" for i in range(5000))
    await harness.type("look: ")
    await harness.type("\x1b[200~" + data + "\x1b[201~")
    c = harness.controller
    # a 5,000-line paste takes a while to parse on a loaded machine: wait for it, not a fixed time
    await harness.until(lambda: c.draft.text == "look: [pasted 5,000 lines]")
    assert harness.session.turns == []  # the paste's line breaks never submit
    await harness.key("c-o")  # Ctrl+O expands
    assert c.draft.text == "look: " + data.replace("\r", "\n")
    await harness.key("c-o")  # and collapses again
    assert c.draft.text == "look: [pasted 5,000 lines]"
    await harness.key("enter")
    await harness.until(lambda: len(harness.session.turns) == 1)
    assert harness.session.turns[0] == "look: " + data.replace("\r", "\n")
    # the transcript (and so the exit printout) shows the placeholder, not 5,000 lines
    shown = harness.screen_text()
    assert "› look: [pasted 5,000 lines]" in shown and "row 4999" not in shown


async def test_small_paste_is_inserted_verbatim_without_submitting(harness: Harness) -> None:
    await harness.type("\x1b[200~x\ry\r\x1b[201~")
    assert harness.controller.draft.text == "x\ny\n"
    assert harness.session.turns == []


async def test_esc_interrupts_only_the_task(harness: Harness) -> None:
    gate = asyncio.Event()
    harness.session.scripts.append(held(gate))
    await harness.send("long task")
    await harness.until(lambda: "working" in harness.screen_text())
    assert harness.controller.busy
    await harness.key("esc")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.interrupted == 1
    shown = harness.screen_text()
    assert "■ interrupted" in shown and "error" not in shown  # said once, not as an error
    assert not harness.runner.done()  # the session goes on
    await harness.send("again")
    await harness.until(lambda: harness.session.turns == ["long task", "again"])


async def test_enter_and_esc_in_one_read_never_leave_a_task_that_is_not_running(harness: Harness) -> None:
    await harness.type("abc")
    harness.clock.advance(1.0)
    await harness.type("\r\x1bn")  # Enter, Esc and a key in one read: the task is cancelled unstarted
    await harness.until(lambda: harness.controller.task is None)
    assert "interrupted before it started" in harness.screen_text()
    assert harness.session.turns == [] and not harness.controller.busy
    harness.controller.draft.text = ""
    await harness.send("again")  # the session goes on: the next message runs
    await harness.until(lambda: harness.session.turns == ["again"])


async def test_esc_when_idle_does_nothing(harness: Harness) -> None:
    await harness.type("draft")
    await harness.key("esc")
    assert not harness.runner.done()
    assert harness.controller.draft.text == "draft"


async def test_typed_ahead_message_is_queued_and_sent_when_the_task_ends(harness: Harness) -> None:
    gate = asyncio.Event()
    harness.session.scripts.append(text_steps("a", "b", gate=gate))
    await harness.send("first")
    await harness.until(lambda: harness.controller.busy)
    await harness.send("second")
    assert [(q.text, q.shown) for q in harness.controller.queue] == [("second", "second")]
    assert harness.session.turns == ["first"]
    gate.set()
    await harness.until(lambda: harness.session.turns == ["first", "second"])
    await harness.until(lambda: harness.controller.task is None)
    assert harness.controller.queue == []


async def test_esc_puts_queued_messages_back_into_the_draft(harness: Harness) -> None:
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("first")
    await harness.until(lambda: harness.controller.busy)
    await harness.send("queued one")
    await harness.send("queued two")
    await harness.type("still typing")
    await harness.key("esc")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.controller.draft.text == "queued one\nqueued two\nstill typing"
    assert harness.session.turns == ["first"]


async def test_slash_commands_and_slash_text(harness: Harness) -> None:
    await harness.send("/help")
    shown = harness.screen_text()
    assert "› /help\n" in shown and harness.session.turns == []
    # one key or command per line, never wrapped mid-phrase (the harness view is 80 wide)
    assert "\n/compact                   summarise older context now\n" in shown
    assert "\nEsc                        interrupt the task; queued messages return\n" in shown
    await harness.send("/compact")
    await harness.until(lambda: harness.session.compactions == 1)
    assert "compacted (manual): 180k → 12k tokens, summary covers 42 messages" in harness.screen_text()
    await harness.until(lambda: harness.controller.task is None)
    await harness.send("/usr/lib is missing")
    await harness.until(lambda: harness.session.turns == ["/usr/lib is missing"])
    await harness.until(lambda: harness.controller.task is None)
    await harness.send("/quit")
    assert await harness.exit_code() == 0


async def test_a_near_miss_of_a_command_is_not_sent_and_comes_back_to_the_draft(harness: Harness) -> None:
    await harness.send("/exti")
    await harness.until(lambda: "did you mean" in harness.screen_text())
    assert "! unknown command /exti — did you mean /exit?" in harness.screen_text()
    assert harness.session.turns == [] and not harness.runner.done()
    assert harness.controller.draft.text == "/exti"  # one edit fixes the typo
    await harness.key("c-c")
    await harness.send("/help me")
    await harness.until(lambda: "takes no arguments" in harness.screen_text())
    assert harness.session.turns == []


async def test_typing_a_slash_offers_the_commands_and_tab_enter_takes_one(harness: Harness) -> None:
    c = harness.controller
    await harness.key("/")
    await harness.until(lambda: c.draft.complete_state is not None)
    offered = [(x.text, x.display_meta_text) for x in c.draft.complete_state.completions]
    assert ("/help", "keys and commands") in offered and ("/compact", "summarise older context now") in offered
    await harness.key("c", "o")
    await harness.until(lambda: c.draft.complete_state is not None
                        and [x.text for x in c.draft.complete_state.completions] == ["/compact"])
    await harness.key("tab")  # highlight it
    await harness.key("enter")  # takes the command into the draft; nothing is sent yet
    assert c.draft.text == "/compact" and harness.session.compactions == 0
    await harness.key("enter")
    await harness.until(lambda: harness.session.compactions == 1)


async def test_a_path_does_not_open_the_command_menu(harness: Harness) -> None:
    c = harness.controller
    await harness.key("/", "u", "s", "r")
    await harness.redrawn()
    assert c.draft.complete_state is None or not c.draft.complete_state.completions


async def test_agent_error_becomes_a_transcript_entry(harness: Harness) -> None:
    harness.session.scripts.append([Step(error=RuntimeError("tool registry exploded"))])
    await harness.send("go")
    await harness.until(lambda: "tool registry exploded" in harness.screen_text())
    await harness.until(lambda: harness.controller.task is None)
    assert not harness.runner.done()


# --- Ctrl+C, Ctrl+D, leaving ------------------------------------------------------------------

async def test_ctrl_c_clears_a_multiline_draft_says_how_to_get_it_back_then_exits_0(harness: Harness) -> None:
    c = harness.controller
    await harness.type("half a thought")
    await harness.key("c-j")
    await harness.type("and a second line")
    await harness.key("c-c")
    assert c.draft.text == "" and not harness.runner.done() and harness.session.turns == []
    assert c.editor.flash_text() == "draft cleared — Up brings it back"
    await harness.key("up")
    assert c.draft.text == "half a thought\nand a second line"
    await harness.key("c-c")
    await harness.key("c-c")  # the draft is empty now: leave, idle → 0
    assert await harness.exit_code() == 0
    assert harness.session.turns == []


async def test_ctrl_c_with_an_empty_draft_during_a_task_interrupts_it_and_a_second_leaves(harness: Harness) -> None:
    """Finding T4: the first Ctrl+C stops the task like Esc, the session stays; leaving takes another."""
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("long")
    await harness.until(lambda: harness.controller.busy)
    await harness.key("c-c")
    await harness.until(lambda: harness.controller.task is None)
    assert harness.session.interrupted == 1 and not harness.runner.done()
    assert harness.controller.editor.flash_text() == "interrupted — Ctrl+C again on an empty draft leaves"
    await harness.key("c-c")  # idle now, empty draft: leave with 0
    assert await harness.exit_code() == 0


async def test_a_second_ctrl_c_while_the_interrupted_task_winds_down_leaves_with_130(harness: Harness) -> None:
    c = harness.controller
    harness.session.winding_down = asyncio.Event()  # never set: the stop takes "long"
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("long")
    await harness.until(lambda: c.busy)
    await harness.key("c-c")
    await harness.until(lambda: harness.session.interrupted == 1)
    assert c.busy and not harness.runner.done()  # still stopping
    await harness.key("c-c")
    assert await harness.exit_code() == 130


async def test_ctrl_c_during_a_task_gives_queued_messages_back_to_the_draft(harness: Harness) -> None:
    c = harness.controller
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("long")
    await harness.until(lambda: c.busy)
    await harness.send("yes please do it")
    assert [q.text for q in c.queue] == ["yes please do it"]
    await harness.key("c-c")
    await harness.until(lambda: c.task is None)
    assert c.queue == [] and c.draft.text == "yes please do it" and not harness.runner.done()
    assert harness.session.turns == ["long"]  # the queued message was not sent either


async def test_ctrl_c_during_a_task_first_clears_the_draft_being_typed(harness: Harness) -> None:
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("long")
    await harness.until(lambda: harness.controller.busy)
    await harness.type("next message")
    await harness.key("c-c")
    assert not harness.runner.done() and harness.controller.busy and harness.controller.draft.text == ""


async def test_ctrl_d_exits_only_on_an_empty_draft_with_0_when_idle(harness: Harness) -> None:
    await harness.key("x", "c-d")
    assert not harness.runner.done()
    await harness.key("backspace", "c-d")
    assert await harness.exit_code() == 0


async def test_exit_while_a_task_runs_interrupts_it_and_exits_130(harness: Harness) -> None:
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("long")
    await harness.until(lambda: harness.controller.busy)
    await harness.send("/exit")
    assert await harness.exit_code() == 130
    assert harness.session.interrupted == 1


async def test_session_id_and_warnings_are_shown_at_start() -> None:
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer
    from minicode.cli.frontends.tui.controller import Controller
    from tests.cli.frontends.tui.fake_session import FakeSession

    c = Controller(FakeSession(warnings=["torn last line ignored"]), MarkdownRenderer())
    c.start()
    from minicode.cli.frontends.tui.view import plain_text

    text = plain_text(c.transcript, 120)
    assert "session 0b7e1c2a-1111-4222-8333-444455556666" in text
    assert "! torn last line ignored" in text


# --- scrolling ----------------------------------------------------------------------------

def _fill(harness: Harness, n: int = 200) -> None:
    for i in range(n):
        harness.controller.transcript.note(f"old line {i}")
    harness.controller.invalidate()


async def test_page_up_during_streaming_keeps_the_view_still(harness: Harness) -> None:
    _fill(harness)
    gate = asyncio.Event()
    chunks = [f"streamed {i}\n\n" for i in range(40)]
    harness.session.scripts.append(text_steps(*chunks, gate=gate))
    await harness.send("go")
    await harness.until(lambda: "streamed 0" in harness.screen_text())
    await harness.redrawn()
    await harness.key("pageup")
    c = harness.controller
    assert not c.scroll.follow
    top = c.scroll.top
    gate.set()
    await harness.until(lambda: c.task is None)
    await harness.redrawn()
    assert c.scroll.top == top  # not pulled down by the new output
    assert c.scroll.new_lines(c.total_lines) > 0
    from minicode.cli.frontends.tui.layout import status_line

    assert "new lines ↓" in "".join(t for _, t in status_line(c, 120))
    await harness.key("end")  # End resumes following
    assert c.scroll.follow and c.scroll.new_lines(c.total_lines) == 0


async def test_page_down_back_to_the_bottom_resumes_following(harness: Harness) -> None:
    _fill(harness)
    await harness.redrawn()
    await harness.key("pageup", "pagedown")
    assert harness.controller.scroll.follow


async def test_mouse_wheel_scrolls_three_lines_and_clicks_never_reach_the_draft(harness: Harness) -> None:
    _fill(harness)
    await harness.type("hello")
    await harness.redrawn()
    c = harness.controller
    c.draft.cursor_position = 2
    bottom = c.total_lines - c.view_size[1]
    await harness.key("\x1b[<64;5;5M")  # wheel up over the transcript
    assert c.scroll.top == bottom - 3
    await harness.key("\x1b[<0;1;40M\x1b[<0;1;40m")  # a click on the input row
    assert c.draft.cursor_position == 2 and c.draft.text == "hello"


# --- layout -------------------------------------------------------------------------------

async def test_input_grows_with_the_draft_up_to_six_lines(harness: Harness) -> None:
    c = harness.controller
    assert c.app is not None
    window = next(w for w in c.app.layout.find_all_windows()
                  if isinstance(w.content, BufferControl) and w.content.buffer is c.draft)
    await harness.key("x")
    await harness.redrawn()
    assert window.render_info is not None and window.render_info.window_height == 1
    await harness.type("\n2\n3")
    await harness.redrawn()
    assert window.render_info.window_height == 3
    await harness.type("\n4\n5\n6\n7\n8\n9")
    await harness.redrawn()
    assert window.render_info.window_height == 6  # 40 rows: a third would be 13


async def test_esc_puts_a_queued_big_paste_back_as_its_placeholder(harness: Harness) -> None:
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("long task")
    await harness.until(lambda: harness.controller.busy)
    data = "\r".join(f"row {i}" for i in range(30))
    await harness.type("see ")
    await harness.type("\x1b[200~" + data + "\x1b[201~")
    await harness.key("enter", pause=1.0)
    c = harness.controller
    assert [q.shown for q in c.queue] == ["see [pasted 30 lines]"]
    # a new paste of the same size in the draft must not take over the queued one's label
    await harness.type("\x1b[200~" + data.replace("row", "other") + "\x1b[201~")
    await harness.key("esc")
    await harness.until(lambda: c.task is None)
    assert c.draft.text == "see [pasted 30 lines #2]\n[pasted 30 lines]"
    await harness.key("enter", pause=1.0)
    await harness.until(lambda: len(harness.session.turns) == 2)
    sent = harness.session.turns[1]
    assert sent == "see " + data.replace("\r", "\n") + "\n" + data.replace("row", "other").replace("\r", "\n")


async def test_ctrl_t_shows_the_latest_reasoning_in_full_and_collapses_it_again(harness: Harness) -> None:
    from minicode.agent.events import AssistantDone, ReasoningChunk

    c = harness.controller
    await harness.key("c-t")  # nothing to show yet: said so, no crash
    assert "no reasoning to show yet" in harness.screen_text()
    harness.session.scripts.append([
        Step(event=ReasoningChunk("first thoughts")), Step(event=AssistantDone("a", "", 0)),
        Step(event=ReasoningChunk("Check calc.py.\nThe add 函数 subtracts; fix it.")),
        Step(event=TextChunk("Fixed.")), Step(event=AssistantDone("Fixed.", "", 0)),
    ])
    await harness.send("fix")
    await harness.until(lambda: c.task is None)
    collapsed = harness.screen_text()
    assert "∴ thought (44 chars)" in collapsed and "subtracts" not in collapsed
    await harness.key("c-t")
    shown = harness.screen_text()
    assert "∴ thought (44 chars) · Ctrl+T hides\n  Check calc.py.\n  The add 函数 subtracts; fix it." in shown
    assert "first thoughts" not in shown  # only the latest one opens
    assert c.draft.text == ""
    await harness.key("c-t")
    assert harness.screen_text() == collapsed


async def test_leaving_with_queued_messages_says_they_were_not_sent(harness: Harness) -> None:
    c = harness.controller
    harness.session.scripts.append(held(asyncio.Event()))
    await harness.send("long")
    await harness.until(lambda: c.busy)
    await harness.send("yes please do it")
    await harness.key("c-d")  # Ctrl+D on an empty draft: leave at once
    assert await harness.exit_code() == 130
    assert "! 1 queued message was not sent (“yes please do it”): Up recalls it next time" in harness.screen_text()
    assert harness.session.turns == ["long"]
