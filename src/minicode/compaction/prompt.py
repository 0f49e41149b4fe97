"""The summariser's prompts (our own) and the summary message the model sees afterwards.

Pure text assembly. ``summary_request_messages`` builds the messages of one summary call:
the first summary of a conversation, or an update that folds more conversation into an
existing summary (which must be updated, never replaced). ``summary_message`` is the
``<context-summary>`` user message that stands in for the summarised history.
"""

from __future__ import annotations

from functools import lru_cache

from minicode.provider.types import Message

__all__ = [
    "FIRST_SUMMARY_PROMPT",
    "SUMMARISER_SYSTEM",
    "UPDATE_SUMMARY_PROMPT",
    "prompt_overhead",
    "summary_message",
    "summary_request_messages",
]

SUMMARISER_SYSTEM = """\
You write the working memory of a coding agent. The agent's context window is full, so \
older conversation is replaced by your summary; anything you leave out is lost for good. \
You only write the summary: you call no tools and do not continue the task."""

_SECTIONS = """\
Write the summary in Markdown with exactly these sections:

## Goal
What the user wants, in their terms. Keep every requirement.
## Constraints and preferences
Every rule, limit, preference and instruction the user stated (quote them when short), \
and conventions of the project that were discovered.
## Progress
### Done
### In progress
### Blocked
## Key decisions
Decisions taken and why, including approaches tried and rejected.
## Next steps
The concrete next actions, in order.
## Critical context
Exact file paths, function and symbol names, commands and their outcomes, error messages, \
test names and results, values and identifiers the work depends on.

Be specific and factual: names, paths and numbers, not generalities. Do not invent \
anything that is not in the conversation. Answer with the summary only."""

FIRST_SUMMARY_PROMPT = (
    """\
Summarise the conversation between a user and a coding agent below. Tool calls appear \
as [tool call NAME id=ID] followed by their JSON arguments; results as \
[tool result for call ID].

<conversation>
{conversation}
</conversation>

"""
    + _SECTIONS
)

UPDATE_SUMMARY_PROMPT = (
    """\
Below is the existing summary of the earlier conversation between a user and a coding \
agent, followed by the conversation that came after it. Update the summary so that it \
covers both: keep every goal, constraint, preference, decision and critical detail of \
the existing summary unless the newer conversation explicitly changed or completed it; \
move finished work to Done; add what is new. Do not drop information just because the \
newer conversation does not mention it. Tool calls appear as [tool call NAME id=ID] \
followed by their JSON arguments; results as [tool result for call ID].

<existing-summary>
{previous}
</existing-summary>

<newer-conversation>
{conversation}
</newer-conversation>

"""
    + _SECTIONS
)


def summary_request_messages(previous: str | None, conversation: str) -> tuple[Message, ...]:
    """Messages of one summary request: first summary, or update of ``previous``."""
    if previous is None:
        prompt = FIRST_SUMMARY_PROMPT.format(conversation=conversation)
    else:
        prompt = UPDATE_SUMMARY_PROMPT.format(previous=previous, conversation=conversation)
    return (Message.system(SUMMARISER_SYSTEM), Message.user(prompt))


def prompt_overhead(previous: str | None) -> str:
    """The request text apart from the conversation itself, for sizing chunks."""
    return "".join(m.content or "" for m in summary_request_messages(previous, ""))


@lru_cache(maxsize=8)
def summary_message(summary: str, original_task: str | None, todo: str = "") -> Message:
    """The user message standing in for the summarised history.

    It repeats the session's original task verbatim so the goal survives any number of
    compactions, and the task list (``todo``: "" for none) as it stood when the checkpoint was made. Memoised so that every request of a turn reuses one object (cheap to
    estimate and to recognise in a calibration).
    """
    parts = [
        "<context-summary>",
        "The earlier part of this session was compacted into the summary below. "
        "Continue the work from where it stands; the recent messages follow verbatim.",
    ]
    if original_task is not None:
        parts += [
            "",
            "The user's original task, verbatim:",
            "<original-task>",
            original_task,
            "</original-task>",
        ]
    if todo:
        parts += ["", "Your task list when this summary was made (a later todo call replaces it):",
                  "<task-list>", todo, "</task-list>"]
    parts += ["", "Summary of the earlier conversation:", summary, "</context-summary>"]
    return Message.user("\n".join(parts))
