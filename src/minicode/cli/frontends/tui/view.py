"""The transcript view: agent events → transcript items → the visible lines; scroll state.

Pure (no prompt_toolkit, no rich): the layout asks ``Transcript.visible`` for exactly the
lines on screen. Entry heights are summed per width in a ``Heights`` tree that only entries
which report a change (``Item.watch``) update, so a redraw costs the visible slice plus the
changed entries (the streaming answer), whatever the transcript length. ``Scroll`` keeps the sticky-bottom rule: the view follows new
output only while it is at the bottom, and counts the lines that arrived while it was not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence, assert_never

from minicode.agent.approval import Approval, ApprovalRequest
from minicode.agent.deps import ToolOutcome
from minicode.cli.frontends.shared.plan_lines import MODE_LINES
from minicode.cli.frontends.shared.shown_call import reveal
from minicode.agent.events import (
    AgentEvent,
    ApprovalResolved,
    AssistantDone,
    CheckFinished,
    ChecksFeedback,
    CheckStarted,
    CompactionDone,
    ModeChanged,
    ModelCallStarted,
    HookFeedback,
    HookReport,
    Notice,
    QuestionResolved,
    ReasoningChunk,
    Retrying,
    SubAgentEvent,
    TaskStatus,
    TextChunk,
    TodoUpdated,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)
from minicode.cli.frontends.tui.history import HistoryItem
from minicode.cli.frontends.tui.lazy_history import lazy_entries
from minicode.cli.frontends.tui.heights import Heights
from minicode.cli.frontends.tui.answer import AnswerItem
from minicode.cli.frontends.tui.items import (
    MAX_CACHED_WIDTHS,
    Item,
    Line,
    ReasoningItem,
    RenderMarkdown,
    TextItem,
)
from minicode.cli.frontends.tui.stored import Offload, StoredAnswer, StoredReasoning, record_log
from minicode.cli.frontends.tui.printout import EXIT_MAX_LINES, exit_lines, plain_text
from minicode.cli.frontends.tui.tool import ToolItem
from minicode.provider.types import Message

__all__ = ["EXIT_MAX_LINES", "Scroll", "Transcript", "exit_lines", "format_compaction", "format_tokens", "plain_text"]


def format_tokens(n: int) -> str:
    """180000 → "180k", 1500 → "1.5k", 950 → "950"."""
    if n >= 100_000:
        return f"{n // 1000}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return str(n)


def format_compaction(e: CompactionDone) -> str:
    how = "compacted (manual)" if e.manual else "compacted"
    return (
        f"{how}: {format_tokens(e.tokens_before)} → {format_tokens(e.tokens_after)} tokens,"
        f" summary covers {e.messages_summarised:,} messages"
    )


class _Watch:
    """Tells the transcript that entry ``index`` may have changed height (a closure would
    cost four times the memory, and a long run has three entries a turn)."""

    __slots__ = ("_transcript", "_index")

    def __init__(self, transcript: Transcript, index: int) -> None:
        self._transcript = transcript
        self._index = index

    def __call__(self) -> None:
        self._transcript._resized(self._index)


class Transcript:
    """The entries of this run, and the event → entry mapping."""

    def __init__(self, md: RenderMarkdown, workspace: str = "") -> None:
        self.items: list[Item] = []
        self.md = md
        self.workspace = workspace
        """Tool lines leave out a target that is just the workspace (bash's working directory)."""
        self._answer: AnswerItem | None = None
        self._reasoning: ReasoningItem | None = None
        self._tools: dict[str, ToolItem] = {}
        self.tool_running: str | None = None
        """The name of the tool that runs now, if any."""
        self.checking: str | None = None
        """The acceptance check that runs now, if any."""
        self._heights: dict[int, Heights] = {}
        """Per width: each entry's height plus its separator line, summed in a Fenwick tree."""
        self._dirty: dict[int, set[int]] = {}
        """Per width: the entries whose height changed since it was last summed."""
        self._offload: Offload | None = None
        """Stores the answers of older turns as places in the session file (``stored.py``)."""
        self._shown = range(0)
        """The entries the last ``visible`` showed."""

    @property
    def streaming(self) -> bool:
        return self._answer is not None

    def add(self, item: Item) -> Item:
        index = len(self.items)
        self.items.append(item)
        item.watch(_Watch(self, index))
        return item

    def _resized(self, index: int) -> None:
        for dirty in self._dirty.values():
            dirty.add(index)

    def _swap(self, index: int, item: Item) -> None:
        """Put ``item`` in place of entry ``index``, of the same height (``stored.py``)."""
        self.items[index] = item
        item.watch(_Watch(self, index))

    def held(self) -> int:
        """Answers whose text is in memory now (the rest are places in the session file)."""
        return sum(1 for item in self.items if isinstance(item, AnswerItem)
                   or isinstance(item, StoredAnswer) and item.resident)

    def note(self, text: str, style: str = "class:notice", prefix: str = "") -> None:
        self.add(TextItem(text, style, prefix))

    def replay(self, messages: Sequence[Message], outcomes: Mapping[str, ToolOutcome] | None = None) -> None:
        """A resumed session's earlier conversation, under a "resumed session" line;
        ``outcomes`` marks failed tool calls (by tool_call_id; missing = judged by the text).
        Each message is read only when it first scrolls into view (``lazy_history``).
        This run's answers are found in ``messages`` too, to be read back from there once
        they are a few turns old (``stored.py``)."""
        log = record_log(messages)
        self._offload = Offload(log, self._swap) if log is not None else None
        # the same mapping, even while empty: a lazily read session fills it as messages are read
        items = lazy_entries(messages, {} if outcomes is None else outcomes)
        if not items:
            return
        self.note(f"resumed session · {len(messages):,} messages", "class:notice", "↺ ")
        self.add(HistoryItem(items))

    def toggle_reasoning(self) -> bool:
        """Ctrl+R: show the latest reasoning in full, or collapse it again; False if none."""
        for item in reversed(self.items):
            if isinstance(item, (ReasoningItem, StoredReasoning)):
                item.toggle()
                return True
        return False

    # --- approvals ----------------------------------------------------------------------
    def ask(self, request: ApprovalRequest, asking_reason: bool = False) -> None:
        """Show the approval on its tool line (a line of its own if the call has none)."""
        tool = self._tools.get(request.call_id)
        if tool is None:
            tool = self._tool_item(request.call_id, request.tool, request.target, request.detail, request.body)
        tool.ask(request, asking_reason)

    def answered(self, call_id: str, answer: Approval | None) -> None:
        tool = self._tools.get(call_id)
        if tool is not None:
            tool.answered(answer)

    def _tool_item(self, call_id: str, name: str, target: str, detail: str, body: str) -> ToolItem:
        where = ""
        if target in (".", self.workspace):
            target, where = "", self.workspace or target  # said while it waits for approval
        item = ToolItem(call_id, name, target, detail, body, where)
        self._tools[call_id] = item
        self.add(item)
        return item

    # --- events -------------------------------------------------------------------------
    def apply(self, event: AgentEvent) -> None:
        match event:
            case ToolOutput(call_id=call_id, text=text):
                tool = self._tools.get(call_id)
                if tool is not None:
                    tool.output(text)
            case ApprovalResolved():
                tool = self._tools.get(event.call_id)
                if tool is not None:
                    tool.resolved(event)  # decided by a rule or "for the session": the line says so
            case QuestionResolved(how=how, answer=answer):  # the question is in the transcript since it was asked
                said = {"declined": "no answer (declined)", "unavailable": "no answer available"}.get(how, answer)
                self.note(said, "class:notice", "→ ")
            case TurnStarted() | ModelCallStarted() | Retrying():
                pass  # the submission is shown when it is sent; the status bar says "thinking"
            case TextChunk(text=text):
                if self._reasoning is not None and not self._reasoning.finished:
                    self._reasoning.finish()  # the answer has begun: the thinking is over
                if self._answer is None:
                    self._answer = AnswerItem()
                    self.add(self._answer)
                self._answer.append(text)
            case ReasoningChunk(text=text):
                if self._reasoning is None:
                    self._reasoning = ReasoningItem()
                    self.add(self._reasoning)
                self._reasoning.append(text)
            case AssistantDone():
                self._finish_response(event)
            case ToolStarted():
                if event.call_id in self._tools:  # already shown by its approval
                    self._tools[event.call_id].started(event.body, event.from_text)
                else:
                    self._tool_item(event.call_id, event.name, event.target, event.detail, event.body)
                    self._tools[event.call_id].started("", event.from_text)
                self.tool_running = event.name
            case ToolFinished():
                self.tool_running = None
                tool = self._tools.pop(event.call_id, None)
                if tool is not None:
                    tool.finish(event)
            case CheckStarted(command=command):
                self.checking = command
            case CheckFinished(result=result):
                self.checking = None
                tail = f"\n{result.output_tail}" if result.output_tail else ""
                verdict = "check passed" if result.passed else "check failed"
                style, mark = ("class:stats", "✓ ") if result.passed else ("class:status.bad", "✗ ")
                self.note(f"{verdict}: {result.describe()}{tail}", style, mark)
            case ChecksFeedback(round=round_, max_rounds=rounds):
                self.note(f"checks failed: their output went back to the model ({round_} of {rounds})",
                          "class:notice", "↻ ")
            case CompactionDone():
                self.note(format_compaction(event), "class:compaction", "⇣ ")
            case Notice(text=text):
                self.note(text, "class:notice", "· ")
            case TodoUpdated(todo=todo):  # the panel shows the list; the transcript, when it changed
                current = f": ▶ {reveal(todo.current.text)}" if todo.current is not None else ""
                self.note(f"task list {todo.summary}{current}" if todo else "task list cleared", "class:notice", "☰ ")
            case ModeChanged(why=why, mode=mode):
                self.note(MODE_LINES.get(why, mode), "class:notice", "◆ ")
            case HookReport():
                self.note(event.describe(), "class:status.bad" if event.blocked else "class:notice", "⊘ ")
            case HookFeedback(round=round_, max_rounds=rounds):
                self.note(f"the model goes on ({round_} of {rounds})", "class:notice", "↻ ")
            case TurnFinished():
                self._finish_turn(event)
            case SubAgentEvent(call_id=call_id):
                tool = self._tools.get(call_id)
                if tool is not None:  # its calls under the agent line; the rest is its report
                    tool.sub_event(event.event, self.workspace)
            case _:
                assert_never(event)

    def _finish_response(self, event: AssistantDone) -> None:
        if self._reasoning is not None:
            self._reasoning.finish()
        elif event.reasoning:
            item = ReasoningItem()
            item.append(event.reasoning)
            item.finish()
            self.add(item)
        if self._answer is None and event.text:
            self.add(AnswerItem(event.text, finished=True))  # a non-streaming response arrives whole
        elif self._answer is not None:
            self._answer.finish(event.text)
        self._answer = None
        self._reasoning = None

    def _finish_turn(self, event: TurnFinished) -> None:
        if self._answer is not None and event.status is not TaskStatus.DONE:
            # a stream that did not finish appends nothing to the conversation
            self._answer.cut_off("interrupted" if event.status is TaskStatus.INTERRUPTED else "cut off")
        if self._answer is not None or self._reasoning is not None:
            self._finish_response(AssistantDone(text="", reasoning="", tool_call_count=0))
        self.tool_running = None
        if self.checking is not None:  # stopped mid-check (Esc, timeout): say which, as a check line
            self.note(f"check stopped: {self.checking} ({event.status_text})", "class:status.bad", "✗ ")
        self.checking = None
        for tool in self._tools.values():
            if tool.result is None:
                tool.finish(ToolFinished(tool.call_id, tool.name, True, "interrupted", None, 0.0))
        self._tools.clear()
        # an interrupt is the user's own doing: the status line says it, not an error line
        if event.error and event.status is not TaskStatus.INTERRUPTED:
            self.note(f"error: {event.error}", "class:error", "✗ ")
        style = "class:stats" if event.status is TaskStatus.DONE else "class:status.bad"
        self.note(f"{event.status_text} · {event.stats.format()}", style, "■ ")
        if self._offload is not None:
            self._offload.turn_finished(self.items, self._shown.__contains__)

    # --- lines --------------------------------------------------------------------------
    def _sizes(self, width: int) -> Heights:
        """The entry sizes at ``width``, brought up to date: only entries added or changed
        since the last frame are measured, so a frame never walks the whole transcript."""
        sizes = self._heights.get(width)
        if sizes is None:
            if len(self._heights) >= MAX_CACHED_WIDTHS:
                oldest = next(iter(self._heights))
                del self._heights[oldest], self._dirty[oldest]
            sizes = self._heights[width] = Heights()
            self._dirty[width] = set()
        md = self.md
        dirty = self._dirty[width]
        while dirty:  # measuring may report another change (a history's estimates settle)
            index = dirty.pop()
            if index < len(sizes):
                sizes.set(index, self.items[index].height(width, md) + 1)
        for item in self.items[len(sizes):]:
            sizes.append(item.height(width, md) + 1)
        return sizes

    def settle(self, width: int, more: Callable[[], bool]) -> bool:
        """Render, at ``width``, what no frame has shown yet, while ``more()`` allows — so
        after a resize (or a fast stream) the rest is re-wrapped lazily, off the frames, and
        the exit printout finds it done; a resumed history (left out of that printout) is
        left alone. True when nothing is left."""
        for item in self.items:
            if isinstance(item, HistoryItem):
                continue
            if not item.settle(width, self.md, more):
                return False
        return True

    def total_lines(self, width: int) -> int:
        # every entry's size counts one separator line under it; the last one has none
        return max(0, self._sizes(width).total - 1)

    def visible(self, width: int, top: int, height: int) -> list[Line]:
        """Lines [top, top + height) of the whole transcript, rendering only what is needed."""
        sizes = self._sizes(width)
        index, pos = sizes.find(max(0, top))
        first = index
        out: list[Line] = []
        md = self.md
        last = len(self.items) - 1
        while index <= last and len(out) < height:
            size = sizes.get(index) - 1
            start = max(0, top - pos)
            if start < size:
                out.extend(self.items[index].slice(width, md, start, height - len(out)))
            if index < last and len(out) < height and top <= pos + size:
                out.append(())  # the separator under this entry
            pos += size + 1
            index += 1
        self._shown = range(first, index)
        return out


@dataclass(slots=True)
class Scroll:
    """Where the transcript view is. ``top`` is only meaningful while not following."""

    follow: bool = True
    top: int = 0
    baseline: int = 0
    """Total lines when the user left the bottom; new lines are counted from it."""

    def view_top(self, total: int, height: int) -> int:
        bottom = max(0, total - height)
        if self.follow:
            return bottom
        self.top = min(self.top, bottom)
        return self.top

    def scroll(self, delta: int, total: int, height: int) -> None:
        """Move by ``delta`` lines (negative = up); reaching the bottom resumes following."""
        bottom = max(0, total - height)
        current = bottom if self.follow else min(self.top, bottom)
        self.move_to(current + delta, total, height)

    def move_to(self, top: int, total: int, height: int) -> None:
        """Show line ``top`` at the top (within the transcript); the bottom resumes following."""
        bottom = max(0, total - height)
        target = max(0, min(bottom, top))
        if target >= bottom:
            self.follow = True
            return
        if self.follow:
            self.baseline = total
        self.follow = False
        self.top = target

    def to_bottom(self) -> None:
        self.follow = True

    def new_lines(self, total: int) -> int:
        return 0 if self.follow else max(0, total - self.baseline)

    def settled(self, delta: int) -> None:
        """The transcript grew or shrank by ``delta`` lines because entries first drawn now
        replaced their estimated heights (a resumed history): that is not new output."""
        self.baseline += delta

    def rescale(self, old_total: int, new_total: int) -> None:
        """After a resize, keep roughly the same place in a re-laid transcript."""
        if not self.follow and old_total:
            self.top = self.top * new_total // old_total
            # the lines that arrived before the resize are still unread: scale, don't forget
            self.baseline = self.baseline * new_total // old_total
