"""How each task ended, read back from the session file for the replay (trial R13)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from minicode.agent.events import CheckResult
from minicode.agent.stats import TaskStats
from minicode.provider.types import Message
from minicode.session.store import SessionStore
from minicode.session.turn_ends import TurnEnds, turn_end_from_record


def _task(store: SessionStore, text: str, status: str = "done", **stats: int) -> None:
    store.append_message(Message.user(text))
    store.append_message(Message(role="assistant", content=f"answer to {text}"))
    store.append_turn_end(status, TaskStats(wall_seconds=1.25, **stats))


def test_each_tasks_end_is_found_under_its_last_message(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    _task(store, "one", model_calls=2, tool_calls=1, prompt_tokens=10, completion_tokens=5, total_tokens=15,
          calls_with_usage=2)
    _task(store, "two", "interrupted", model_calls=1)
    store.close()
    again, loaded = SessionStore.open(tmp_path, sid)
    log = loaded.messages
    first, second = log.turn_end(2), log.turn_end(4)
    assert first is not None and second is not None
    assert first.text == "done · 1.2s · 2 model calls · 1 tool call · tokens: 15 total (10 in, 5 out)" and first.done
    assert second.text.startswith("interrupted · 1.2s · 1 model call") and not second.done
    assert log.turn_end(1) is None and log.turn_end(3) is None
    again.close()


def test_a_rewind_drops_the_ends_of_the_tasks_it_removed_and_keeps_the_one_before(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    _task(store, "one")
    _task(store, "two")
    store.append_rewind(2)
    store.append_message(Message.user("two again"))
    store.close()
    again, loaded = SessionStore.open(tmp_path, sid)
    assert loaded.messages.turn_end(2) is not None and loaded.messages.turn_end(4) is None
    again.close()


def test_checks_are_told_as_the_live_view_told_them(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    store.append_message(Message.user("fix"))
    stats = TaskStats(wall_seconds=2.0, model_calls=3)
    stats.add_check_run(1, 0)
    stats.add_check_run(1, 1)
    store.append_turn_end("done", stats, [CheckResult("pytest -q", True, 0, False, 0.5)])
    store.close()
    again, loaded = SessionStore.open(tmp_path, sid)
    end = loaded.messages.turn_end(1)
    assert end is not None and end.text == ("done (checks passed) · 2.0s · 3 model calls · 0 tool calls · "
                                            "tokens: unavailable · checks 1/1 passed (2 runs)")
    again.close()


def test_a_damaged_turn_end_shows_no_line_and_the_session_still_loads(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    _task(store, "one")
    _task(store, "two")
    store.close()
    path = tmp_path / ".minicode" / "sessions" / f"{sid}.jsonl"
    lines = path.read_text().splitlines()
    ends = [i for i, line in enumerate(lines) if '"turn_end"' in line]
    lines[ends[0]] = json.dumps({"type": "turn_end", "status": "done", "stats": {"model_calls": "many"}},
                                separators=(",", ":"))
    lines[ends[1]] = '{"type":"turn_end","status":"no such status","stats":{}}'
    path.write_text("\n".join(lines) + "\n")
    again, loaded = SessionStore.open(tmp_path, sid)
    assert len(loaded.messages) == 4
    assert loaded.messages.turn_end(2) is None and loaded.messages.turn_end(4) is None
    again.close()


def test_records_that_are_not_turn_ends_are_refused() -> None:
    for bad in ({"type": "turn_end", "status": "done", "stats": []}, {"type": "message"},
                {"type": "turn_end", "status": "done", "stats": {"wall_seconds": -1}},
                {"type": "turn_end", "status": "done", "stats": {"tool_calls": True}}):
        try:
            turn_end_from_record(bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")


def test_the_first_end_at_a_position_wins() -> None:
    ends = TurnEnds()
    done = turn_end_from_record({"type": "turn_end", "status": "done", "stats": {}})
    stopped = turn_end_from_record({"type": "turn_end", "status": "interrupted", "stats": {}})
    ends.add(2, done)
    ends.add(2, stopped)  # a task stopped before its message was saved
    assert ends.get(2, None) is done


def test_an_end_saved_in_this_run_is_known_without_reading_the_file(tmp_path: Path) -> None:
    from minicode.session.history import StoredHistory
    from minicode.session.reader import LoadedSession
    from minicode.session.writer import OrderedWriter

    async def run() -> None:
        store, sid = SessionStore.create(tmp_path)
        history = StoredHistory(store, OrderedWriter(), LoadedSession(sid, ""))
        await history.append(Message.user("one"))
        await history.append(Message(role="assistant", content="answer"))
        await history.save_turn_end("done", TaskStats(wall_seconds=0.5, model_calls=1))
        end = history.messages.turn_end(2)
        assert end is not None and end.text.startswith("done · 0.5s · 1 model call")
        store.close()

    asyncio.run(run())
