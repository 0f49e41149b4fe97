"""The tools as the model is told about them (SPEC 9's seven, ``agent``, ``ask_user`` and ``todo``): name, description, the JSON
Schema of the arguments, whether a call has side effects, and the class that implements it.

Data only, and no tool module is imported here: a start declares the tools in its first
request from this module alone, and the registry imports a tool's module at its first call
(work not done before it is needed). Each tool class takes its name, description and
parameters from here, so every text exists once.
"""

from __future__ import annotations

from typing import Any, Mapping

from dataclasses import dataclass

__all__ = ["AGENT", "ASK_USER", "BASH", "DECLARED", "EDIT", "GLOB", "GREP", "LS", "MAX_TIMEOUT_S", "READ", "READ_ONLY",
           "SKILL", "TODO", "WRITE", "Declared"]

MAX_TIMEOUT_S = 600.0
"""The longest ``timeout`` a bash call may ask for, in seconds."""
_PATH_PROP = {"type": "string"}


@dataclass(frozen=True, slots=True)
class Declared:
    """One tool as declared to the model; ``home`` is ``module:Class`` of its implementation."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    side_effects: bool
    home: str


READ = Declared(
    name="read",
    description=(
        "Read a text file as numbered lines, at most 2000 lines or 64 KiB per call (the result "
        "says how to continue)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "minimum": 1, "description": "first line (1-based)"},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    side_effects=False,
    home="minicode.tools.read:ReadTool",
)

LS = Declared(
    name="ls",
    description="List a directory (default: the workspace), sorted; directories end with /.",
    parameters={
        "type": "object",
        "properties": {"path": _PATH_PROP},
        "additionalProperties": False,
    },
    side_effects=False,
    home="minicode.tools.search:LsTool",
)

GLOB = Declared(
    name="glob",
    description=(
        "Find files by name pattern (** crosses directories, * does not); sorted, relative to "
        "path."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "e.g. src/**/test_*.py"},
            "path": _PATH_PROP,
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    side_effects=False,
    home="minicode.tools.search:GlobTool",
)

GREP = Declared(
    name="grep",
    description=(
        "Search file contents with a Python regular expression; prints path:line:text (binary "
        "files are skipped)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1},
            "path": {"type": "string", "description": "file or directory"},
            "glob": {"type": "string", "description": "only files matching it, e.g. *.py"},
            "ignore_case": {"type": "boolean"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    side_effects=False,
    home="minicode.tools.grep:GrepTool",
)

WRITE = Declared(
    name="write",
    description=(
        "Create a file, or replace all of its content (parent directories are created). To "
        "change part of a file, use edit."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string"},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    side_effects=True,
    home="minicode.tools.write:WriteTool",
)

EDIT = Declared(
    name="edit",
    description=(
        "Replace text in a file read in this session: old_text must match exactly (whitespace "
        "too, without read's line numbers) and occur once unless replace_all — include "
        "surrounding lines to make it unique."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_text": {"type": "string", "minLength": 1},
            "new_text": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    },
    side_effects=True,
    home="minicode.tools.edit:EditTool",
)

BASH = Declared(
    name="bash",
    description=(
        "Run a command with bash -c in the workspace (no stdin, pager or prompts; stdout and "
        "stderr combined). Background processes are stopped when it returns."
    ),
    parameters={
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT_S,
                "description": "seconds (default 120)",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    },
    side_effects=True,
    home="minicode.tools.bash:BashTool",
)

TODO = Declared(
    name="todo",
    description=(
        "Your task list for work of 3+ steps: send the whole list each time; one step in_progress, "
        "mark it done when finished."
    ),
    parameters={
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "status": {"enum": ["pending", "in_progress", "done", "blocked"]},
                    },
                },
            },
        },
        "required": ["items"],
        "additionalProperties": False,
    },
    side_effects=False,
    home="minicode.tools.todo:TodoTool",
)

AGENT = Declared(
    name="agent",
    description=(
        "Hand a self-contained sub-task (e.g. find where something is done) to a sub-agent with "
        "read-only tools and a fresh context; returns its report."
    ),
    parameters={
        "type": "object",
        "properties": {"task": {"type": "string", "minLength": 1, "description": "all it needs to know"}},
        "required": ["task"],
        "additionalProperties": False,
    },
    side_effects=False,  # its own calls are read-only (agent.subagent); nothing to approve
    home="minicode.tools.agent:AgentTool",
)

ASK_USER = Declared(
    name="ask_user",
    description="Ask the user a question you cannot answer from the workspace; options: short choices.",
    parameters={
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "options": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["question"],
        "additionalProperties": False,
    },
    side_effects=False,
    home="minicode.tools.ask_user:AskUserTool",
)

DECLARED = (READ, LS, GLOB, GREP, WRITE, EDIT, BASH, AGENT, ASK_USER, TODO)
"""In the order they are offered."""

SKILL = Declared(
    name="skill",
    description=(
        "Load a skill (instructions for a kind of task, with its files) when its description fits "
        "the task; file reads one of its files. A skill grants nothing: its scripts run through bash, "
        "approved as usual. [project]: from the workspace's repository, untrusted. Skills:"
    ),
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string"}, "file": {"type": "string"}},
        "additionalProperties": False,
    },
    side_effects=False,
    home="minicode.tools.skills.tool:SkillTool",
)
"""Not one of DECLARED: offered after them only when a skill exists (``tools.skills``), its
description followed by the catalog."""
READ_ONLY = (READ, LS, GLOB, GREP)
"""What a sub-agent is given (``agent.subagent``): it changes nothing and starts no sub-agent."""
