"""minicode.bytecode_bundle: a module a run loaded the regular way is served from the bundle
the next run, exactly as the regular import makes it; a changed source, a new module where the
bundle's modules come from, a damaged bundle or a cache directory that cannot be written all
end in the regular import and a run that works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minicode import bytecode_bundle

DRIVER = textwrap.dedent("""
    import inspect, json, sys
    paths, package_dir, late = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
    sys.path[:0] = paths
    from minicode import bytecode_bundle
    bytecode_bundle.install(package_dir)
    import demo.mod
    if late:
        sys.path.insert(0, late)
    try:
        import late_mod
        found_late = late_mod.__file__
    except ImportError:
        found_late = None
    print(json.dumps({"value": demo.mod.VALUE, "loader": type(demo.mod.__loader__).__name__, "late": found_late,
                      "file": demo.mod.__file__, "cached": demo.mod.__cached__,
                      "package_path": list(demo.__path__), "source": inspect.getsource(demo.mod)}))
    bytecode_bundle.save()
""")


class Project:
    """A throwaway package ``demo`` (``demo.mod.VALUE``) and a bundle directory, run in a
    fresh isolated interpreter each time (``-I``: no PYTHON* variables, no working directory
    on the path)."""

    def __init__(self, root: Path) -> None:
        self.first = root / "first"  # an empty directory earlier on the path than the package
        self.lib = root / "lib"
        self.bundle_dir = root / "bundle-home"
        self.cwd = root / "elsewhere"
        for directory in (self.first, self.lib / "demo", self.bundle_dir, self.cwd):
            directory.mkdir(parents=True)
        (self.lib / "demo" / "__init__.py").write_text("")
        self.set_value("1")

    def set_value(self, value: str) -> None:
        module = self.lib / "demo" / "mod.py"
        before = module.stat().st_mtime_ns if module.exists() else 0
        module.write_text(f"VALUE = {value}\n")
        os.utime(module, ns=(before + 2_000_000_000, before + 2_000_000_000))  # a new second for sure

    def run(self, *flags: str, env: dict[str, str] | None = None, late: Path | None = None) -> dict[str, object]:
        """Import ``demo.mod`` (and ``late_mod``, found only when ``late`` is put first on the
        path during the run) in a fresh interpreter with the bundle installed."""
        done = subprocess.run(
            [sys.executable, "-I", *flags, "-c", DRIVER, json.dumps([str(self.first), str(self.lib)]),
             str(self.bundle_dir), str(late or "")],
            cwd=self.cwd, capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})})
        assert done.returncode == 0 and not done.stderr, done.stderr
        result: dict[str, object] = json.loads(done.stdout)
        return result

    def bundles(self) -> list[Path]:
        cache = self.bundle_dir / "__pycache__"
        return sorted(cache.glob("bundle.*.bin")) if cache.is_dir() else []


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_a_module_loaded_the_regular_way_is_served_from_the_bundle_the_next_run(project: Project) -> None:
    first = project.run()
    assert first["loader"] == "SourceFileLoader" and first["value"] == 1
    assert len(project.bundles()) == 1

    second = project.run()
    assert second["loader"] == "_BundledLoader"
    # the module looks as the regular import makes it
    for key in ("value", "file", "cached", "package_path", "source"):
        assert second[key] == first[key], key


def test_a_changed_source_is_loaded_the_regular_way_then_bundled_again(project: Project) -> None:
    project.run()
    project.set_value("2")

    changed = project.run()
    assert changed["value"] == 2 and changed["loader"] == "SourceFileLoader"
    again = project.run()
    assert again["value"] == 2 and again["loader"] == "_BundledLoader"


def test_a_module_added_earlier_on_the_path_wins_over_the_bundle(project: Project) -> None:
    project.run()
    (project.first / "demo").mkdir()
    (project.first / "demo" / "__init__.py").write_text("")
    (project.first / "demo" / "mod.py").write_text("VALUE = 99\n")

    shadowed = project.run()
    assert shadowed["value"] == 99 and shadowed["file"] == str(project.first / "demo" / "mod.py")


def test_a_module_found_on_a_path_the_run_changed_is_not_served_to_the_next(project: Project, tmp_path: Path) -> None:
    project.run()
    late = tmp_path / "late"
    late.mkdir()
    (late / "late_mod.py").write_text("")
    assert project.run(late=late)["late"] == str(late / "late_mod.py")
    assert project.run()["late"] is None  # not on this run's path: not importable, bundle or not
    assert project.run(late=late)["late"] == str(late / "late_mod.py")


def test_a_damaged_bundle_is_ignored_and_written_again(project: Project) -> None:
    project.run()
    [bundle] = project.bundles()
    bundle.write_bytes(b"minicode-bytecode-bundle-1\n" + b"\xff" * 64)

    damaged = project.run()
    assert damaged["value"] == 1 and damaged["loader"] == "SourceFileLoader"
    assert project.run()["loader"] == "_BundledLoader"


def test_damaged_code_in_a_bundle_falls_back_to_the_source_and_heals(project: Project) -> None:
    project.run()
    [bundle] = project.bundles()
    data = bytearray(bundle.read_bytes())
    data[-40:] = b"\x00" * 40  # the last module's code (mod.py's: loaded last)
    bundle.write_bytes(bytes(data))

    runs = [project.run() for _ in range(3)]
    assert [r["value"] for r in runs] == [1, 1, 1]
    assert runs[-1]["loader"] == "_BundledLoader"  # left out of the next bundle, then in again


def test_nothing_is_written_when_the_interpreter_writes_no_bytecode(project: Project) -> None:
    assert project.run("-B")["value"] == 1
    assert project.bundles() == []


def test_the_switch_turns_it_off(project: Project) -> None:
    project.run()
    off = project.run(env={bytecode_bundle.DISABLE_VARIABLE: "0"})
    assert off["loader"] == "SourceFileLoader" and off["value"] == 1


def test_a_cache_directory_that_cannot_be_written_leaves_the_run_alone(project: Project) -> None:
    (project.bundle_dir / "__pycache__").write_text("a file where the directory would be")
    assert project.run()["value"] == 1
    assert project.run()["loader"] == "SourceFileLoader"


def test_no_bundle_where_the_working_directory_decides_what_loads(tmp_path: Path) -> None:
    assert bytecode_bundle.bundle_path(str(tmp_path), ["", "/usr/lib/python3"]) is None
    assert bytecode_bundle.bundle_path(str(tmp_path), [os.getcwd(), "/usr/lib/python3"]) is None
    one = bytecode_bundle.bundle_path(str(tmp_path), ["/a", "/usr/lib/python3"])
    assert one is not None and one == bytecode_bundle.bundle_path(str(tmp_path), ["/a", "/usr/lib/python3"])
    assert one != bytecode_bundle.bundle_path(str(tmp_path), ["/b", "/usr/lib/python3"])
    assert Path(one).parent == tmp_path / "__pycache__"
