"""The pure transcript view: items, caches, block splitting, neutralisation, scrolling."""

from __future__ import annotations

from minicode.agent.events import (
    AssistantDone,
    CompactionDone,
    ReasoningChunk,
    TaskStatus,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from minicode.agent.stats import TaskStats
from minicode.cli.frontends.tui.answer import AnswerItem, split_finished
from minicode.cli.frontends.tui.items import Line, TextItem, neutralise, wrap_plain
from minicode.cli.frontends.tui.view import Scroll, Transcript, format_compaction, plain_text


class CountingMarkdown:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def __call__(self, text: str, width: int) -> list[Line]:
        self.calls.append((text, width))
        return wrap_plain(text, width)


def texts(lines: list[Line]) -> list[str]:
    return ["".join(t for _, t in line) for line in lines]


# --- neutralisation -----------------------------------------------------------------------

def test_neutralise_makes_escape_and_controls_visible_but_keeps_newline_and_tab() -> None:
    out = neutralise("a\x1b[2Jb\x07c\td\ne\x9bf\rg\x7f")
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out and "\r" not in out
    assert out == "a␛[2Jb␇c\td\ne\ufffdfg\u2421"


def test_model_text_with_escape_is_neutralised_in_the_transcript() -> None:
    md = CountingMarkdown()
    t = Transcript(md)
    t.apply(TextChunk("evil \x1b]0;title\x07 \x1b[?1049l done"))
    shown = "\n".join(texts(t.visible(80, 0, 100)))
    assert "\x1b" not in shown and "\x07" not in shown
    assert "␛]0;title␇" in shown


# --- caches ---------------------------------------------------------------------------------

def test_same_width_does_not_rerender_and_new_width_does() -> None:
    md = CountingMarkdown()
    item = AnswerItem("hello world")
    first = item.lines(40, md)
    assert item.lines(40, md) == first
    assert len(md.calls) == 1
    item.lines(20, md)
    assert len(md.calls) == 2 and md.calls[-1] == ("hello world", 20)


def test_finished_blocks_are_rendered_once_while_the_tail_streams() -> None:
    md = CountingMarkdown()
    item = AnswerItem()
    item.append("# Title\n\nfirst paragraph\n\n")
    item.lines(60, md)
    for i in range(10):
        item.append(f"word{i} ")
        item.lines(60, md)
    rendered_texts = [text for text, _ in md.calls]
    # "first paragraph" was the tail once, then became a finished block rendered once more;
    # after that, every frame re-rendered only the streaming tail
    assert rendered_texts[:3] == ["# Title", "first paragraph", "first paragraph"]
    assert rendered_texts[3:] == [" ".join(f"word{j}" for j in range(i + 1)) + " " for i in range(10)]
    assert "word9" in texts(item.lines(60, md))[-1]


def test_a_blank_line_inside_a_code_fence_is_not_a_block_boundary() -> None:
    text = "```py\nx = 1\n\ny = 2\n"
    assert split_finished(text) == 0
    closed = text + "```\n\nafter"
    assert closed[split_finished(closed):] == "after"


def test_an_indented_line_after_a_blank_continues_the_block() -> None:
    assert split_finished("- item\n\n  continued") == 0
    assert split_finished("para\n\n") == 0  # nothing has begun after the blank line yet


def test_unclosed_markdown_is_relaid_when_more_text_arrives() -> None:
    md = CountingMarkdown()
    item = AnswerItem("**bold")
    assert texts(item.lines(40, md)) == ["**bold"]
    item.append(" text**")
    assert texts(item.lines(40, md)) == ["**bold text**"]


def test_resize_relays_the_whole_transcript() -> None:
    md = CountingMarkdown()
    t = Transcript(md)
    t.add(TextItem("x" * 100, prefix="› "))
    t.apply(TextChunk("y" * 100))
    assert t.total_lines(100) < t.total_lines(30)
    assert max(len(s) for s in texts(t.visible(30, 0, 100))) <= 30


def test_visible_returns_only_the_requested_slice() -> None:
    md = CountingMarkdown()
    t = Transcript(md)
    for i in range(1000):
        t.add(TextItem(f"entry {i}"))
    assert t.total_lines(80) == 1999  # 1000 lines + 999 separators
    assert texts(t.visible(80, 1990, 5)) == ["entry 995", "", "entry 996", "", "entry 997"]
    assert texts(t.visible(80, 5000, 5)) == []


# --- events -------------------------------------------------------------------------------

def test_tool_lines_show_target_arguments_status_exit_code_and_duration() -> None:
    t = Transcript(CountingMarkdown())
    t.apply(ToolStarted("c1", "bash", "/ws", "$ pytest -q"))
    assert t.tool_running
    assert "running" in plain_text(t, 100)
    t.apply(ToolFinished("c1", "bash", True, "2 failed", 1, 3.25))
    shown = plain_text(t, 100)
    assert "✗ bash /ws $ pytest -q  — exit 1 · 3.2s · 2 failed" in shown
    assert not t.tool_running


def test_exit_code_is_not_repeated_when_the_summary_names_it() -> None:
    t = Transcript(CountingMarkdown())
    t.apply(ToolStarted("c1", "bash", "/ws", "true"))
    t.apply(ToolFinished("c1", "bash", False, "exit 0", 0, 0.1))
    shown = plain_text(t, 100)
    assert "— 0.1s · exit 0" in shown and shown.count("exit 0") == 1


def test_reasoning_is_one_collapsed_line() -> None:
    t = Transcript(CountingMarkdown())
    t.apply(ReasoningChunk("line one\nline two\n" * 50))
    t.apply(AssistantDone("answer", "", 0))
    lines = texts(t.visible(80, 0, 100))
    assert lines[0].startswith("∴ thought (900 chars)")
    assert len([s for s in lines if s.startswith("∴")]) == 1


def test_non_streamed_answer_and_turn_end_status_and_error() -> None:
    t = Transcript(CountingMarkdown())
    t.apply(AssistantDone("whole answer", "", 0))
    t.apply(TurnFinished(TaskStatus.ERROR, "", TaskStats(), error="APIError 500: boom"))
    shown = plain_text(t, 100)
    assert "whole answer" in shown
    assert "✗ error: APIError 500: boom" in shown
    assert "■ error · 0.0s" in shown


def test_compaction_notice_shows_tokens_and_messages() -> None:
    assert format_compaction(CompactionDone(180_000, 12_000, 42)) == (
        "compacted: 180k → 12k tokens, summary covers 42 messages"
    )
    t = Transcript(CountingMarkdown())
    t.apply(CompactionDone(180_000, 12_000, 42))
    assert "compacted: 180k → 12k tokens" in plain_text(t, 100)


def test_markdown_failure_falls_back_to_plain_text() -> None:
    from minicode.cli.frontends.tui.markdown import MarkdownRenderer

    r = MarkdownRenderer()
    r._render = lambda text, width: 1 / 0  # type: ignore[method-assign]
    assert texts(r("# not rendered", 40)) == ["# not rendered"]


# --- scrolling ----------------------------------------------------------------------------

def test_follow_stays_at_bottom_while_output_grows() -> None:
    s = Scroll()
    assert s.view_top(100, 20) == 80
    assert s.view_top(150, 20) == 130
    assert s.new_lines(150) == 0


def test_scrolled_up_view_is_not_pulled_down_and_counts_new_lines() -> None:
    s = Scroll()
    s.scroll(-20, 100, 20)
    assert not s.follow and s.view_top(100, 20) == 60
    assert s.view_top(140, 20) == 60  # new output does not move the view
    assert s.new_lines(140) == 40
    s.to_bottom()
    assert s.view_top(140, 20) == 120 and s.new_lines(140) == 0


def test_scrolling_down_to_the_bottom_resumes_following() -> None:
    s = Scroll()
    s.scroll(-5, 100, 20)
    s.scroll(+100, 100, 20)
    assert s.follow


def test_scroll_up_is_clamped_at_the_top() -> None:
    s = Scroll()
    s.scroll(-500, 100, 20)
    assert s.view_top(100, 20) == 0
    short = Scroll()
    short.scroll(-3, 5, 20)  # everything fits: there is nowhere to go
    assert short.follow


def test_a_resize_keeps_the_count_of_unread_lines_in_proportion() -> None:
    s = Scroll()
    s.scroll(-50, 200, 20)  # leaves the bottom with 200 lines laid out
    assert s.new_lines(260) == 60
    s.rescale(260, 130)  # twice as wide: every entry takes half the lines
    assert s.new_lines(130) == 30 and s.top == 65
    s.rescale(130, 260)
    assert s.new_lines(260) == 60


def test_reasoning_says_thought_once_the_answer_streams_and_its_preview_starts_at_a_word() -> None:
    t = Transcript(CountingMarkdown())
    t.apply(ReasoningChunk("alpha bravo charlie delta echo foxtrot golf hotel india juliet"))
    head = texts(t.visible(62, 0, 10))[0]  # 38 columns of preview: a cut inside "delta"
    assert head.startswith("∴ thinking (")
    preview = head.split("  ", 1)[1]
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
    assert preview.split()[0] in words and preview.endswith("juliet")
    t.apply(TextChunk("The answer"))
    assert texts(t.visible(60, 0, 10))[0].startswith("∴ thought (")


def test_help_continuation_lines_align_under_the_description() -> None:
    from minicode.cli.frontends.tui.commands import help_text
    from minicode.cli.frontends.tui.items import HelpItem

    lines = ["".join(x for _, x in line) for line in HelpItem(help_text(), "class:help").lines(50, CountingMarkdown())]
    at = lines.index(next(s for s in lines if s.startswith("Ctrl+J, Alt+Enter")))
    column = lines[at].index("newline")
    assert lines[at + 1].startswith(" " * column) and lines[at + 1][column] != " "
    assert all(len(s) <= 50 for s in lines)


def test_help_of_a_command_too_long_for_the_column_goes_under_it_in_the_column() -> None:
    """``/permissions [remove N|RULE|trust]`` is wider than the key column: its help used to
    follow it after one space and wrap back to the left edge, under the command names."""
    from minicode.cli.frontends.tui.commands import help_text
    from minicode.cli.frontends.tui.items import HelpItem

    for width in (60, 100, 120):
        lines = ["".join(x for _, x in line) for line in HelpItem(help_text(), "class:help").lines(width, CountingMarkdown())]
        at = lines.index("/permissions [remove N|RULE|trust]")
        rest = lines[at + 1:lines.index(next(s for s in lines if s.startswith("/undo")))]
        assert rest and all(s.startswith(" " * 27) and s[27] != " " for s in rest), rest
        assert all(len(s) <= width for s in lines)
