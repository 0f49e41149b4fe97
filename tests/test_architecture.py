"""The import rules of DESIGN.md, enforced by walking every module's AST.

The rules are data (the tables below); the checks are a few loops. Imports inside
``if TYPE_CHECKING:`` never run and are ignored. "Module level" means statements that run
when the module is imported (function bodies do not; class bodies and if/try blocks do).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "minicode"
HEAVY = ("prompt_toolkit", "rich", "httpx", "httpx2", "opentelemetry", "langfuse")

# Who may import what, anywhere in the module (lazy imports included).
ONLY_IMPORTED_BY: dict[str, tuple[str, ...]] = {
    "prompt_toolkit": ("minicode.cli.frontends.tui",),
    "rich": ("minicode.cli.frontends.tui",),
    # httpx2 is the one HTTP stack: nothing of minicode's imports httpx (0.2x loads click and rich
    # at import; langfuse still brings it for tracing)
    "httpx": (),
    "opentelemetry": ("minicode.telemetry.otel", "minicode.telemetry.langfuse"),
    "langfuse": ("minicode.telemetry.otel", "minicode.telemetry.langfuse"),
    "minicode.cli": ("minicode.cli", "minicode.__main__", "minicode.entry"),
    # the MCP SDK (and the anyio under it) load only where servers are configured
    "mcp": ("minicode.mcp_client",),
    "mcp_types": ("minicode.mcp_client",),
    "anyio": ("minicode.mcp_client",),
    # the one HTTP stack: the provider's HTTP module (the adapter and the reader thread go through
    # it), the context window's questions to a local server (/props, /api/show …), the system's CA
    # store as httpx2 finds it, and the MCP client
    "httpx2": ("minicode.provider.http", "minicode.provider.server_window", "minicode.provider.ca_bundle",
               "minicode.mcp_client"),
    "minicode.mcp_client": ("minicode.mcp_client", "minicode.session.mcp_setup", "minicode.session.session",
                            "minicode.cli"),
    # the ACP SDK only for `minicode --acp`; pydantic (under it and the MCP SDK) only beside them
    "acp": ("minicode.cli.frontends.acp",),
    "pydantic": ("minicode.cli.frontends.acp", "minicode.mcp_client"),
}

UI_AND_TRACING = ("prompt_toolkit", "rich", "opentelemetry", "langfuse")
"""What the pipe and one-shot modes (text and JSON) never load: only the full screen draws, and
tracing loads only when configured."""

# Modules whose import, *even indirectly at module level*, must not load these packages:
# --version/--help, --sessions/--export and the setup load nothing heavy; the pipe and
# one-shot frontends no UI or tracing library.
LIGHT_AT_IMPORT: dict[str, tuple[str, ...]] = {
    "minicode.cli.main": HEAVY,
    "minicode.cli.args": HEAVY,
    "minicode.cli.config_setup": HEAVY,
    "minicode.config": HEAVY,
    "minicode.config_writer": HEAVY,
    "minicode.permissions.store": HEAVY,
    "minicode.cli.added_rules": HEAVY,
    "minicode.trust.project_config": HEAVY,
    "minicode.cli.frontends.plain.frontend": UI_AND_TRACING,
    # --doctor loads httpx2 only when it builds the provider, and never the UI or tracing
    "minicode.cli.doctor_command": HEAVY,
    "minicode.doctor.diagnose": HEAVY,
    "minicode.cli.frontends.plain.driver": UI_AND_TRACING,
    "minicode.cli.session_list": HEAVY,  # --sessions reads files only
    "minicode.cli.session_export": HEAVY,  # --export too
    "minicode.cli.frontends.json.run": UI_AND_TRACING,
    "minicode.cli.frontends.json.event_json": HEAVY,
    "minicode.cli.frontends.json.deltas": HEAVY,
    # minicode's own imports (the ACP SDK itself asks for the OpenTelemetry API when installed: no-op spans)
    "minicode.cli.frontends.acp.run": UI_AND_TRACING,
    "minicode.cli.frontends.acp.agent": UI_AND_TRACING,
}

# Layering (arrows point down): a package must not import these.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "minicode.provider": ("minicode.tools", "minicode.session", "minicode.agent", "minicode.compaction",
                          "minicode.memory", "minicode.cli"),
    "minicode.tools": ("minicode.agent", "minicode.session", "minicode.compaction", "minicode.cli"),
    "minicode.compaction": ("minicode.agent", "minicode.session", "minicode.cli"),
    "minicode.agent": ("minicode.session", "minicode.cli"),
    "minicode.session": ("minicode.cli",),
    "minicode.telemetry": ("minicode.agent", "minicode.session", "minicode.cli"),
    "minicode.memory": ("minicode.agent", "minicode.session", "minicode.cli"),
    "minicode.instructions": ("minicode.agent", "minicode.session", "minicode.cli", "minicode.tools",
                              "minicode.compaction", "minicode.permissions"),
    "minicode.tokens": ("minicode.agent", "minicode.session", "minicode.cli"),
    "minicode.mcp_client": ("minicode.agent", "minicode.session", "minicode.cli", "minicode.provider",
                            "minicode.compaction", "minicode.memory"),
    # hooks: the config tables and running one hook (through tools.spawn); where they run is agent.hook_points
    "minicode.hooks": ("minicode.agent", "minicode.session", "minicode.cli", "minicode.provider",
                       "minicode.compaction", "minicode.memory", "minicode.telemetry", "minicode.config"),
    # the doctor probes an endpoint through the provider: no agent, session, tools or UI
    "minicode.doctor": ("minicode.agent", "minicode.session", "minicode.tools", "minicode.compaction",
                        "minicode.memory", "minicode.cli"),
    # Permission rules sit below the agent and the configuration: pure matching plus their
    # own small file; they know nothing of tools, providers, sessions or terminals.
    "minicode.permissions": ("minicode.agent", "minicode.session", "minicode.cli", "minicode.provider",
                             "minicode.tools", "minicode.compaction", "minicode.memory", "minicode.telemetry",
                             "minicode.config"),
    "minicode.tomlfile": ("minicode.agent", "minicode.session", "minicode.cli", "minicode.config",
                          "minicode.permissions"),
    # what minicode trusts (a project's config file, the workspace's rules file): below the
    # command line and the session, which ask it; the terminal's question is cli.config_question
    "minicode.trust": ("minicode.cli", "minicode.agent", "minicode.session", "minicode.tools", "minicode.provider",
                       "minicode.compaction", "minicode.telemetry"),
    # the frontends are side by side: the JSON frontend drives as the plain one does (plain.driver,
    # Printer), what more than one uses is in frontends.shared, and none calls back into cli.main
    "minicode.cli.frontends.plain": ("minicode.cli.frontends.json", "minicode.cli.frontends.tui",
                                     "minicode.cli.frontends.acp", "minicode.cli.main"),
    "minicode.cli.frontends.json": ("minicode.cli.frontends.tui", "minicode.cli.frontends.acp", "minicode.cli.main"),
    "minicode.cli.frontends.tui": ("minicode.cli.frontends.plain", "minicode.cli.frontends.json",
                                   "minicode.cli.frontends.acp", "minicode.cli.main"),
    "minicode.cli.frontends.acp": ("minicode.cli.frontends.plain", "minicode.cli.frontends.json",
                                   "minicode.cli.frontends.tui", "minicode.cli.main"),
    "minicode.cli.frontends.shared": ("minicode.cli.frontends.plain", "minicode.cli.frontends.json",
                                      "minicode.cli.frontends.tui", "minicode.cli.frontends.acp", "minicode.cli.main"),
}

# Only these read the process environment; everything else is handed `env`.
ENVIRON_READERS = ("minicode.config", "minicode.cli.main")
ENVIRON_NAMES = ("environ", "environb", "getenv", "getenvb", "putenv", "unsetenv")


def _name_of(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_name_of(p): p for p in sorted(PKG.rglob("*.py"))}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imported(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:  # relative: resolve against this module's package
        pkg = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            pkg = pkg.rpartition(".")[0]
        base = f"{pkg}.{base}" if base else pkg
    # `from a import b` may import the submodule a.b; record both.
    return [base, *(f"{base}.{a.name}" for a in node.names if a.name != "*")]


def _walk(nodes: list[ast.stmt], module: str, module_level: bool) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for node in nodes:
        if isinstance(node, ast.If) and _is_type_checking(node):
            found += _walk(node.orelse, module, module_level)
            continue
        if module_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [(n, node.lineno) for n in _imported(node, module)]
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                found += _walk([c for c in children if isinstance(c, ast.AST)], module, module_level)  # type: ignore[misc]
    return found


@cache
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"), str(MODULES[module]))


@cache
def imports(module: str, module_level: bool) -> tuple[tuple[str, int], ...]:
    body: list[ast.stmt] = list(_tree(module).body)
    return tuple(_walk(body, module, module_level))  # type: ignore[arg-type]


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def closure(module: str) -> dict[str, str]:
    """Every module loaded by importing `module` (module level, transitively) -> who imported it."""
    seen: dict[str, str] = {}
    todo = [(p, "(parent package)") for p in _parents(module)]
    while todo:
        name, by = todo.pop()
        if name in seen:
            continue
        seen[name] = by
        if name in MODULES:
            for imp, _ in imports(name, True):
                todo += [(p, name) for p in _parents(imp) if p in MODULES or not p.startswith("minicode")]
    return seen


def test_the_walk_sees_modules() -> None:
    assert {"minicode.config", "minicode.cli.main", "minicode.cli.args", "minicode.errors"} <= MODULES.keys()
    # Pins the walker itself: cli/main imports args at module level, the frontends only
    # lazily (inside functions), and its TYPE_CHECKING imports never.
    top = {n for n, _ in imports("minicode.cli.main", True)}
    anywhere = {n for n, _ in imports("minicode.cli.main", False)}
    assert "minicode.cli.args" in top and "minicode.cli.frontends.plain.frontend" not in top and "minicode.cli.prepared" not in top
    assert {"minicode.cli.frontends.plain.frontend", "minicode.cli.frontends.tui.app"} <= anywhere


@pytest.mark.parametrize("target", sorted(ONLY_IMPORTED_BY))
def test_only_allowed_modules_import(target: str) -> None:
    allowed = ONLY_IMPORTED_BY[target]
    bad = [
        f"{module}:{line} imports {name}"
        for module in MODULES
        for name, line in imports(module, False)
        if _within(name, target) and not any(_within(module, a) for a in allowed)
    ]
    assert bad == []


def test_plain_frontend_never_imports_ui_libraries() -> None:
    assert "minicode.cli.frontends.plain.frontend" in MODULES  # a rename must not make this pass vacuously
    bad = [n for n, _ in imports("minicode.cli.frontends.plain.frontend", False) if n.split(".")[0] in ("prompt_toolkit", "rich")]
    assert bad == []


@pytest.mark.parametrize("module", sorted(LIGHT_AT_IMPORT))
def test_light_modules_stay_light_at_import(module: str) -> None:
    assert module in MODULES, f"{module} is named in LIGHT_AT_IMPORT but does not exist"
    loaded = closure(module)
    bad = [f"{n} (via {by})" for n, by in loaded.items() if n.split(".")[0] in LIGHT_AT_IMPORT[module]]
    assert bad == []


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layering(package: str) -> None:
    bad = [
        f"{module}:{line} imports {name}"
        for module in MODULES if _within(module, package)
        for name, line in imports(module, False)
        if any(_within(name, f) for f in FORBIDDEN[package])
    ]
    assert bad == []


def test_only_config_and_cli_entry_read_the_environment() -> None:
    bad = []
    for module in MODULES:
        if module in ENVIRON_READERS:
            continue
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.Attribute) and node.attr in ENVIRON_NAMES and \
                    isinstance(node.value, ast.Name) and node.value.id == "os":
                bad.append(f"{module}:{node.lineno} os.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module == "os" and \
                    any(a.name in ENVIRON_NAMES for a in node.names):
                bad.append(f"{module}:{node.lineno} from os import ...")
    assert bad == []


def test_rules_catch_a_violation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks can fail: a fake module importing httpx2 at module level is reported."""
    fake = tmp_path / "fake.py"
    fake.write_text("import os\nif True:\n    from httpx2 import Client\nx = os.environ\n")
    monkeypatch.setitem(MODULES, "minicode.cli.fake", fake)
    _tree.cache_clear()
    imports.cache_clear()
    try:
        assert ("httpx2", 3) in imports("minicode.cli.fake", True)
        assert "httpx2" in closure("minicode.cli.fake")
        with pytest.raises(AssertionError):
            test_only_allowed_modules_import("httpx2")
        with pytest.raises(AssertionError):
            test_only_config_and_cli_entry_read_the_environment()
    finally:
        _tree.cache_clear()
        imports.cache_clear()


def import_graph() -> dict[str, dict[str, int]]:
    """minicode's modules -> the minicode modules each one imports (module level and inside
    functions; ``if TYPE_CHECKING:`` never runs) -> the line. Importing ``a.b.c`` runs the
    packages ``a`` and ``a.b`` too, so they count as imported — except a module's own packages,
    which have run before it (``telemetry/__init__`` may import ``telemetry.langfuse`` lazily)."""
    graph: dict[str, dict[str, int]] = {}
    for module in MODULES:
        edges = graph.setdefault(module, {})
        own_packages = set(_parents(module))
        for name, line in imports(module, False):
            for target in _parents(name):
                implicit = target != name
                if target in MODULES and target != module and not (implicit and target in own_packages):
                    edges.setdefault(target, line)
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[str]:
    """One cycle of each strongly connected group of ``graph``, as ``a:LINE -> b:LINE -> a``
    (Tarjan's algorithm without recursion: the graph has hundreds of modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return [_cycle_through(group, graph) for group in groups]


def _cycle_through(group: list[str], graph: dict[str, dict[str, int]]) -> str:
    """The shortest way from the group's first module back to itself, with each import's line."""
    start, members = group[0], set(group)
    came_from: dict[str, str] = {}
    todo = [start]
    while todo and start not in came_from:
        node = todo.pop(0)
        for target in sorted(graph[node]):
            if target in members and target not in came_from:
                came_from[target] = node
                todo.append(target)
    path = [start]
    while path[-1] != start or len(path) == 1:
        path.append(came_from[path[-1]])
    path.reverse()  # start -> ... -> start
    return " -> ".join(f"{a}:{graph[a][b]}" for a, b in zip(path, path[1:])) + f" -> {start}"


def test_no_import_cycles() -> None:
    """No module imports, even inside a function, a module that imports it back (directly or
    through others): what two modules share belongs in a third that both import."""
    graph = import_graph()
    assert "minicode.cli.frontends.plain.driver" in graph["minicode.cli.frontends.json.run"]  # the walk sees imports
    assert import_cycles(graph) == []


def test_the_cycle_check_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two fake modules that import each other, one of them only inside a function, are a cycle."""
    (tmp_path / "one.py").write_text("from minicode.fake_two import b\n")
    (tmp_path / "two.py").write_text("def b():\n    import minicode.fake_one\n")
    monkeypatch.setitem(MODULES, "minicode.fake_one", tmp_path / "one.py")
    monkeypatch.setitem(MODULES, "minicode.fake_two", tmp_path / "two.py")
    try:
        assert import_cycles(import_graph()) == ["minicode.fake_one:1 -> minicode.fake_two:2 -> minicode.fake_one"]
    finally:
        _tree.cache_clear()
        imports.cache_clear()


ARCHITECTURE_DOC = SRC.parent / "docs" / "architecture.md"


def _doc_module_list() -> dict[str, str]:
    """The modules docs/architecture.md's module list names, as paths under src/minicode -> the line.

    In its code block a line indented two spaces either starts a package (``  cli/frontends/json/``)
    or names a top-level module; every ``name.py`` after that belongs to that package, and a name
    with a slash (``trust/project_config.py``) is a path from src/minicode."""
    block = ARCHITECTURE_DOC.read_text(encoding="utf-8").split("## Modules", 1)[1].split("```", 2)[1]
    named: dict[str, str] = {}
    package = ""
    for line in block.splitlines():
        header = re.match(r"^  ((?:[a-z_]+/)+)(?=\s|$)", line)
        if header:
            package = header.group(1)
        elif line.startswith("  ") and not line.startswith("   "):
            package = ""
        for name in re.findall(r"(?<![\w/.])([a-z_]+(?:/[a-z_]+)*\.py)\b", line):
            named.setdefault(name if "/" in name else package + name, line.strip())
    return named


def _real_module_paths() -> set[str]:
    return {str(path.relative_to(PKG)) for path in MODULES.values() if path.is_relative_to(PKG)}


def test_the_module_list_names_real_modules() -> None:
    missing = {path: line for path, line in _doc_module_list().items() if path not in _real_module_paths()}
    assert missing == {}


def test_every_module_is_in_the_module_list() -> None:
    named = _doc_module_list()
    assert len(named) > 150  # the parse found the list
    unnamed = sorted(p for p in _real_module_paths() - named.keys() if not p.endswith("__init__.py"))
    assert unnamed == []


def test_every_source_path_the_architecture_doc_names_exists() -> None:
    """Anywhere on the page: ``cli/frontends/tui/app.py``, ``src/minicode/entry.py``, ``cli/frontends/``."""
    packages = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    paths = re.findall(r"(?<![\w./~-])(?:src/minicode/)?([a-z_]+(?:/[a-z_]+)*(?:\.py|/))", text)
    checked = [p for p in paths if p.split("/")[0] in packages]
    assert len(checked) > 10
    assert sorted({p for p in checked if not (PKG / p).exists()}) == []


def _package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_package_table_lists_what_each_package_imports() -> None:
    """Each row of "Packages and their arrows" says which of minicode's top-level packages and
    modules its packages import (a row like ``cli.frontends`` inside another is not checked)."""
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8").split("## Packages and their arrows", 1)[1].split("## Modules")[0]
    tops = {_package_of(m) for m in MODULES} - {"", "__main__"}
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| `")]
    in_table: set[str] = set()
    wrong = []
    for names, _owns, may in rows:
        packages = re.findall(r"`([a-z_.]+)`", names)
        in_table |= set(packages)
        if any("." in p for p in packages):
            continue
        listed = {re.split(r"[ .]", item.strip(), maxsplit=1)[0] for item in re.sub(r"\([^)]*\)", "", may).split(",")}
        for package in packages:
            used = {_package_of(target) for module, targets in import_graph().items()
                    if _package_of(module) == package for target in targets} - {"", package}
            if used - listed:
                wrong.append(f"{package} imports {sorted(used - listed)} (the table says {sorted(listed)})")
    assert wrong == []
    assert sorted(tops - in_table) == []


def test_version_imports_nothing_heavy() -> None:
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "minicode", "--version"],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 0, r.stderr
    names = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "minicode.cli.main" in names  # the -X importtime output was really parsed
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
    assert heavy == []


def _names(importtime: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in importtime.splitlines() if line.startswith("import time:")}


# What a one-shot run loads only when it needs it (work not done before it is needed). A run
# whose only tool call is a read must not load the bash checker (bash parser, command tables),
# the approval question's lines, the rule listing, the session catalog (a resume looks sessions
# up), /undo's planner, the summariser or the checks.
DEFERRED_IN_A_READ_RUN = (
    "minicode.permissions.policy", "minicode.permissions.bash_check", "minicode.permissions.bash_views",
    "minicode.permissions.shell_words", "minicode.permissions.wrappers", "minicode.permissions.listing",
    "minicode.cli.frontends.plain.line_approver", "minicode.session.catalog", "minicode.session.undo",
    "minicode.compaction.compact", "minicode.agent.checks", "minicode.tools.bash", "minicode.tools.live",
    "minicode.agent.text_calls",  # only for an answer without native calls that holds braces
)
BASH_CHECKER = ("minicode.permissions.policy", "minicode.permissions.bash_check")


def _one_shot_loads(tmp_path: Path, *replies: object) -> set[str]:
    """The modules a one-shot ``--yes`` run loaded by its end (written by an atexit hook:
    the interpreter runs them at its exit) while the scripted server answers with ``replies``."""
    sys.path.insert(0, str(SRC.parent))
    from tests.support.fake_openai import FakeOpenAI

    workspace = tmp_path / "project"
    (workspace / "config").mkdir(parents=True, exist_ok=True)
    (workspace / "notes.txt").write_text("a note\n")
    listing = tmp_path / "modules.txt"
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(listing)!r}, 'w').write(' '.join(sorted(sys.modules))))\n"
        "sys.argv = ['minicode', '--yes', 'go']\n"
        "from minicode.entry import run\n"
        "run()\n"
    )
    with FakeOpenAI() as server:
        server.script(*replies)  # type: ignore[arg-type]
        (workspace / "config" / "config.toml").write_text(
            f'[model]\nbase_url = "{server.base_url}"\nname = "m"\napi_key = "k"\n')
        r = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL, start_new_session=True,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(server.requests) == len(replies)
    return set(listing.read_text().split())


def test_a_read_only_one_shot_run_defers_what_it_does_not_use(tmp_path: Path) -> None:
    from tests.support.fake_openai import Reply

    loaded = _one_shot_loads(tmp_path, Reply.tool("read", path="notes.txt"), Reply.text("done"))
    assert {"minicode.agent.batch", "minicode.tools.read"} <= loaded  # the call really ran
    assert sorted(loaded & set(DEFERRED_IN_A_READ_RUN)) == []


def test_a_bash_call_loads_the_checker(tmp_path: Path) -> None:
    """The names above are the modules the checker really is: a bash call loads them."""
    from tests.support.fake_openai import Reply

    loaded = _one_shot_loads(tmp_path, Reply.tool("bash", command="echo hi"), Reply.text("done"))
    assert set(BASH_CHECKER) <= loaded
    assert {"minicode.tools.bash", "minicode.tools.live"} <= loaded
