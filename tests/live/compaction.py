"""The compaction acceptance (from the seed design): three successive compactions of one fixed
conversation, each summary checked fact by fact by an independent request to the same model,
which must quote the summary for every fact it finds; and three negative cases — a summary
that drops the goal, one that reverses the dependency constraint, one that reports a stale
test status — which that judge must reject (a correct reference summary is the control).

The judge's answer is checked locally before it counts: valid JSON, every fact exactly once,
no unknown ids, a quote that really is in the summary for every "supported", a complete
answer (finish_reason ``stop``). Driven through ``minicode.compaction.compact`` (the function
every compaction entry point shares) with the configured provider; the judge is a provider of
its own when one is given — a small model misquotes the summaries it is asked to check, so it
cannot judge itself (the live suite then asks for a stronger judge, see tests/live/endpoints.py).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Sequence

from minicode.compaction.checkpoint import Checkpoint
from minicode.compaction.compact import compact
from minicode.compaction.trigger import Budget
from minicode.provider.base import Provider
from minicode.provider.types import ChatRequest, ChatResponse, Message, ToolCall, Usage
from tests.live.harness import Verdict

__all__ = ["FACTS", "NEGATIVES", "PARTS", "REFERENCE", "JudgeResult", "check_judge_report", "judge_messages",
           "run_compaction_acceptance"]

VERDICTS = ("supported", "contradicted", "missing")
MIN_QUOTE_CHARS = 8
_ids = iter(range(1, 10_000))


@dataclass(frozen=True)
class Fact:
    id: str
    statement: str
    keywords: tuple[str, ...]
    """Phrases of the reference summaries that state it (for the scripted judge only)."""


def _call(name: str, result: str, **arguments: object) -> list[Message]:
    call = ToolCall(f"call_{next(_ids)}", name, json.dumps(arguments))
    return [Message(role="assistant", tool_calls=(call,)), Message.tool(call.id, result)]


def _pause() -> list[Message]:
    # the newest unit is kept verbatim: a pause, so everything before it is summarised
    return [Message.user("Let's pause here for a moment."), Message(role="assistant", content="OK, pausing.")]


TASK = ("In /srv/projects/netkit, add retries with exponential backoff to fetch() in net/client.py. "
        "Constraints: do not add any new dependencies; do not modify anything under docs/; keep the public "
        "signature fetch(url) unchanged. Run the tests with `python -m pytest -q tests/net`.")
CLIENT = "import urllib.request\n\nfrom net.config import DEFAULT_TIMEOUT\n\n\ndef fetch(url):\n" \
         "    return urllib.request.urlopen(url, timeout=DEFAULT_TIMEOUT).read()\n"
FAILING = ("..F.F.........\nFAILED tests/net/test_client.py::test_retry_count - AssertionError: expected 3 attempts,"
           " got 1\nFAILED tests/net/test_client.py::test_backoff_delays - AssertionError: no delay between"
           " attempts\n2 failed, 12 passed in 0.41s\n[exit code 1]")
PARTS: tuple[list[Message], ...] = (
    [Message.user(TASK),
     *_call("read", CLIENT, path="net/client.py"),
     *_call("read", "DEFAULT_TIMEOUT = 5\nMAX_ATTEMPTS = 3\n", path="net/config.py"),
     *_call("edit", "1 replacement in net/config.py", path="net/config.py", old_text="DEFAULT_TIMEOUT = 5",
            new_text="DEFAULT_TIMEOUT = 10"),
     *_call("bash", FAILING, command="python -m pytest -q tests/net"),
     Message(role="assistant", content="Raised the default timeout to 10 s in net/config.py. Two tests fail because "
             "fetch() does not retry yet: test_retry_count (AssertionError: expected 3 attempts, got 1) and "
             "test_backoff_delays. Next I will implement the retry loop in net/client.py."),
     *_pause()],
    [Message.user("Go on."),
     *_call("edit", "1 replacement in net/client.py", path="net/client.py",
            old_text="    return urllib.request.urlopen(url, timeout=DEFAULT_TIMEOUT).read()\n",
            new_text="    for attempt in range(MAX_ATTEMPTS):\n        try:\n            return urllib.request.urlopen("
                     "url, timeout=DEFAULT_TIMEOUT).read()\n        except OSError:\n            if attempt == "
                     "MAX_ATTEMPTS - 1:\n                raise\n            time.sleep(delay(attempt))\n"),
     *_call("bash", "..............\n14 passed in 0.52s\n[exit code 0]", command="python -m pytest -q tests/net"),
     Message(role="assistant", content="fetch() now retries up to MAX_ATTEMPTS times with exponential backoff "
             "(net/client.py, using delay() from net/backoff.py). All 14 tests in tests/net pass. Next: add jitter "
             "to the backoff in net/backoff.py."),
     *_pause()],
    [Message.user("Yes, add the jitter."),
     *_call("read", "def delay(attempt):\n    return 0.5 * 2 ** attempt\n", path="net/backoff.py"),
     *_call("edit", "1 replacement in net/backoff.py", path="net/backoff.py",
            old_text="    return 0.5 * 2 ** attempt\n", new_text="    return 0.5 * 2 ** attempt + random.uniform(0, 0.1)\n"),
     Message(role="assistant", content="Added up to 0.1 s of random jitter to delay() in net/backoff.py. I have not "
             "run the tests since this change; the next step is to rerun python -m pytest -q tests/net."),
     *_pause()],
)

_GOAL = Fact("goal", "The task is to add retries with exponential backoff to fetch() in net/client.py.",
             ("retr", "exponential backoff", "fetch"))
_NO_DEPS = Fact("no_new_dependencies", "The user forbade adding new dependencies.", ("not add any new dependencies",))
_NO_DOCS = Fact("docs_untouched", "Nothing under docs/ may be modified.", ("docs/",))
_SIGNATURE = Fact("signature", "The public signature fetch(url) must stay unchanged.", ("fetch(url)",))
_WORKSPACE = Fact("workspace", "The project is in /srv/projects/netkit.", ("/srv/projects/netkit",))
_TEST_COMMAND = Fact("test_command", "Tests are run with python -m pytest -q tests/net.",
                     ("python -m pytest -q tests/net",))
FACTS: tuple[tuple[Fact, ...], ...] = (
    (_GOAL, _NO_DEPS, _NO_DOCS, _SIGNATURE, _WORKSPACE,
     Fact("changed_files", "net/config.py was changed: the default timeout was raised to 10 seconds.",
          ("net/config.py", "10")),
     _TEST_COMMAND,
     Fact("test_status", "The latest test run failed: 2 tests failed, including test_retry_count with "
          "'AssertionError: expected 3 attempts, got 1'.", ("2 failed", "test_retry_count", "expected 3 attempts, got 1")),
     Fact("next_step", "The next step is to implement the retry loop in net/client.py.", ("retry loop",))),
    (_GOAL, _NO_DEPS, _NO_DOCS, _SIGNATURE,
     Fact("changed_files", "net/config.py and net/client.py were changed.", ("net/config.py", "net/client.py")),
     _TEST_COMMAND,
     Fact("test_status", "The latest test run passed: all 14 tests passed.", ("14 passed",)),
     Fact("next_step", "The next step is to add jitter to the backoff in net/backoff.py.", ("jitter", "net/backoff.py"))),
    (_GOAL, _NO_DEPS, _NO_DOCS, _SIGNATURE,
     Fact("changed_files", "net/config.py, net/client.py and net/backoff.py were changed.",
          ("net/config.py", "net/client.py", "net/backoff.py")),
     _TEST_COMMAND,
     Fact("test_status", "The latest change (jitter in net/backoff.py) has not been tested yet; the last test "
          "run (14 passed) happened before it.", ("not been tested",)),
     Fact("next_step", "The next step is to rerun python -m pytest -q tests/net.", ("rerun",))),
)

_HEAD = """## Goal
Add retries with exponential backoff to fetch() in net/client.py (project in /srv/projects/netkit).
## Constraints and preferences
- Do not add any new dependencies.
- Do not modify anything under docs/.
- Keep the public signature fetch(url) unchanged.
- Tests: python -m pytest -q tests/net
"""
REFERENCE: tuple[str, ...] = (
    _HEAD + """## Progress
### Done
- net/config.py: DEFAULT_TIMEOUT raised from 5 to 10 seconds.
### In progress
- Tests: 2 failed, 12 passed — test_retry_count (AssertionError: expected 3 attempts, got 1) and test_backoff_delays.
## Next steps
1. Implement the retry loop in net/client.py.
""",
    _HEAD + """## Progress
### Done
- net/config.py: DEFAULT_TIMEOUT raised from 5 to 10 seconds.
- net/client.py: fetch() retries up to MAX_ATTEMPTS with exponential backoff via delay() from net/backoff.py.
- Tests: 14 passed.
## Next steps
1. Add jitter to the backoff in net/backoff.py.
""",
    _HEAD + """## Progress
### Done
- net/config.py: DEFAULT_TIMEOUT raised from 5 to 10 seconds.
- net/client.py: fetch() retries up to MAX_ATTEMPTS with exponential backoff via delay() from net/backoff.py.
- net/backoff.py: delay() adds up to 0.1 s of random jitter.
### In progress
- The jitter change has not been tested yet; the last run (14 passed) was before it.
## Next steps
1. Rerun python -m pytest -q tests/net.
""",
)
NEGATIVES: tuple[tuple[str, str, str], ...] = (
    # (name, summary, the fact the judge must not find supported)
    ("dropped goal", REFERENCE[2].replace(
        "## Goal\nAdd retries with exponential backoff to fetch() in net/client.py (project in /srv/projects/netkit).\n",
        "## Goal\nTidy up the project in /srv/projects/netkit.\n").replace(
        "- net/client.py: fetch() retries up to MAX_ATTEMPTS with exponential backoff via delay() from net/backoff.py.\n",
        "- net/client.py: edited.\n"), "goal"),
    ("reversed dependency constraint", REFERENCE[2].replace(
        "- Do not add any new dependencies.", "- New dependencies may be added when they help (e.g. tenacity)."),
        "no_new_dependencies"),
    ("stale test status", REFERENCE[2].replace(
        "### In progress\n- The jitter change has not been tested yet; the last run (14 passed) was before it.\n",
        "- Tests: 14 passed after the jitter change.\n").replace(
        "1. Rerun python -m pytest -q tests/net.", "1. Open a pull request."), "test_status"),
)

JUDGE_SYSTEM = "You check whether a summary of a coding session states given facts. You are strict and literal."
JUDGE_PROMPT = """\
Below is a summary written for a coding agent, then a list of facts. For each fact decide:
- "supported": the summary states it (paraphrase is fine) with the same polarity (a "must not" stays a \
"must not") and the same state (a test run that happened before the latest change does not test that change);
- "contradicted": the summary says the opposite, or an outdated state;
- "missing": the summary does not say it.
For "supported", "quote" must be words copied exactly from the summary (one contiguous passage, at most \
200 characters) that show it; otherwise "quote" is "".
Answer with one JSON object and nothing else:
{{"facts": [{{"id": "<fact id>", "verdict": "supported|contradicted|missing", "quote": "..."}}]}}

<summary>
{summary}
</summary>

<facts>
{facts}
</facts>
"""


def judge_messages(summary: str, facts: Sequence[Fact]) -> tuple[Message, ...]:
    listed = json.dumps([{"id": f.id, "fact": f.statement} for f in facts], indent=1)
    return (Message.system(JUDGE_SYSTEM), Message.user(JUDGE_PROMPT.format(summary=summary, facts=listed)))


@dataclass
class JudgeResult:
    verdicts: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """Why the judge's report cannot be trusted (then ``verdicts`` means nothing)."""

    @property
    def valid(self) -> bool:
        return not self.problems

    def unsupported(self) -> list[str]:
        return [f"{fid} ({v})" for fid, v in self.verdicts.items() if v != "supported"]


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[*_`#>]", "", text).lower().split())


def check_judge_report(response: ChatResponse, facts: Sequence[Fact], summary: str) -> JudgeResult:
    """The judge's verdicts, or the problems that make its report unusable."""
    result = JudgeResult()
    if response.finish_reason != "stop":
        result.problems.append(f"the judge's answer did not finish (finish_reason {response.finish_reason!r})")
        return result
    text = (response.message.content or "").strip()
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start:end + 1]) if start >= 0 else None
    except ValueError:
        data = None
    items = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        result.problems.append("the judge's answer is not the requested JSON object")
        return result
    expected = {f.id for f in facts}
    seen: set[str] = set()
    haystack = _normal(summary)
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            result.problems.append(f"malformed entry {item!r}")
            continue
        fid, verdict, quote = item["id"], item.get("verdict"), item.get("quote", "")
        first = fid not in seen
        seen.add(fid)
        if fid not in expected:
            result.problems.append(f"unknown fact id {fid!r}")
        elif not first:
            result.problems.append(f"fact {fid!r} judged twice")
        elif verdict not in VERDICTS or not isinstance(quote, str):
            result.problems.append(f"fact {fid!r}: invalid verdict {verdict!r}")
        elif verdict == "supported" and (len(_normal(quote)) < MIN_QUOTE_CHARS or _normal(quote) not in haystack):
            result.problems.append(f"fact {fid!r}: the quote is not in the summary: {quote[:80]!r}")
        else:
            result.verdicts[fid] = verdict
    missing = sorted(expected - seen)
    if missing:
        result.problems.append(f"facts not judged: {missing}")
    return result


@dataclass
class CompactionOutcome:
    rounds: list[tuple[str, JudgeResult]] = field(default_factory=list)
    negatives: list[tuple[str, str, JudgeResult]] = field(default_factory=list)
    control: JudgeResult | None = None
    error: str | None = None
    tokens: int = 0
    requests: int = 0
    seconds: float = 0.0


async def _judge(provider: Provider, summary: str, facts: Sequence[Fact], outcome: CompactionOutcome) -> JudgeResult:
    response = await provider.chat(ChatRequest(judge_messages(summary, facts)))
    _count(outcome, response.usage)
    return check_judge_report(response, facts, summary)


def _count(outcome: CompactionOutcome, usage: Usage | None) -> None:
    outcome.requests += 1
    if usage is not None:
        outcome.tokens += usage.total_tokens or (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)


async def run_compaction_acceptance(provider: Provider, judge: Provider | None = None) -> CompactionOutcome:
    """Compact three times with ``provider`` (each part of the conversation added in turn), judge
    each summary with ``judge`` (default: ``provider`` itself), then the negative cases and the control."""
    judge = judge or provider
    outcome = CompactionOutcome()
    started = time.monotonic()
    history: list[Message] = []
    checkpoint: Checkpoint | None = None
    budget = Budget(context_window=200_000, reserve=16_000, keep_recent=1)  # keep only the newest unit
    try:
        for part, facts in zip(PARTS, FACTS):
            history += part
            result = await compact(provider, history, checkpoint, budget=budget, original_task=None, tools=(),
                                   memory=None)
            if result is None:
                outcome.error = f"compaction {len(outcome.rounds) + 1} found nothing to compact"
                break
            for usage in result.usages:
                _count(outcome, usage)
            checkpoint = result.checkpoint
            outcome.rounds.append((checkpoint.summary, await _judge(judge, checkpoint.summary, facts, outcome)))
        else:
            for name, summary, target in NEGATIVES:
                outcome.negatives.append((name, target, await _judge(judge, summary, FACTS[2], outcome)))
            outcome.control = await _judge(judge, REFERENCE[2], FACTS[2], outcome)
    except Exception as e:  # noqa: BLE001 - the report says what broke; the verdict fails
        outcome.error = f"{type(e).__name__}: {e}"
    outcome.seconds = time.monotonic() - started
    return outcome


def compaction_verdict(outcome: CompactionOutcome) -> Verdict:
    v = Verdict()
    if outcome.error is not None:
        v.reasons.append(outcome.error)
    for number, (_summary, judged) in enumerate(outcome.rounds, start=1):
        if not judged.valid:
            v.reasons.append(f"compaction {number}: the judge's report is unusable: {judged.problems[:2]}")
        elif judged.unsupported():
            v.reasons.append(f"compaction {number}: facts not kept: {', '.join(judged.unsupported())}")
        else:
            v.notes.append(f"compaction {number}: {len(judged.verdicts)} facts checked, all kept")
    if outcome.control is not None and (not outcome.control.valid or outcome.control.unsupported()):
        v.reasons.append("the judge rejects the correct reference summary: the negative cases prove nothing "
                         f"({outcome.control.problems[:1] or outcome.control.unsupported()})")
    for name, target, judged in outcome.negatives:
        if not judged.valid:
            v.reasons.append(f"negative case '{name}': the judge's report is unusable: {judged.problems[:2]}")
        elif judged.verdicts.get(target) == "supported":
            v.reasons.append(f"negative case '{name}' accepted: the judge found {target!r} in a summary without it")
        else:
            v.notes.append(f"negative case '{name}' rejected ({target}: {judged.verdicts.get(target)})")
    v.require(len(outcome.rounds) == len(PARTS) or outcome.error is not None, "fewer than three compactions")
    return v
