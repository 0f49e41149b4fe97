"""One file with the bytecode of the modules a run loaded, so the next run loads them cheaper.

A one-shot or pipe run loads some 300 pure-Python modules (asyncio and what it pulls in,
minicode's own packages): importing them is most of such a run's CPU. Through the regular
import path each also costs more than its bytecode: the path finders run, the source and its
directory are looked up, the cached ``.pyc`` is opened, read and checked. Skipping that takes
7-8 % off the instructions of a ten-tool run (``bench/bundle.py``).
Here the finder at the front of ``sys.meta_path`` serves a module from one file read with
``pread``: the code object the interpreter itself compiled, checked against its source the way
a ``.pyc`` is (modification time and size, here to the nanosecond), and loaded by a
``SourceFileLoader``, so the module looks exactly as a regular import makes it (``__file__``,
``__cached__``, ``__spec__``, its loader's ``get_source`` for tracebacks).

When the bundle is used, and when it is not:
- It holds ``sys.path`` as it was when written and the modification time of every directory
  its modules came from (and of every ``sys.path`` directory): a different path, a file added,
  removed or renamed in one of those directories, and the whole bundle is left alone for this
  run — the regular import then finds whatever it would find.
- A module whose source changed since is loaded the regular way.
- A working directory on ``sys.path`` (``python -m minicode``, where the directory a run starts
  in decides what ``import x`` finds) turns it off, and so does ``MINICODE_BYTECODE_BUNDLE=0``.
- Written at a clean exit (``entry.leave``) when the run loaded modules the bundle lacked or
  had out of date: the ``.pyc`` files the regular import wrote are copied in, with the entries
  that were still good. Not written when the interpreter writes no bytecode
  (``PYTHONDONTWRITEBYTECODE``, ``-B``, ``PYTHONPYCACHEPREFIX``) or the directory is not
  writable; written to a temporary name, then renamed, so a reader never sees half a file.

It lives beside minicode's own ``.pyc`` files (``minicode/__pycache__``), with the same trust:
whoever can write there can change minicode's code anyway. Every failure here means "load the
regular way": this module only ever makes loading faster, never different or broken.
Imports only built-in modules: it runs before anything else is loaded.
"""

from __future__ import annotations

import _imp  # built in: SourceLoader's own helper
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import CodeType, ModuleType

__all__ = ["DISABLE_VARIABLE", "BundleFinder", "bundle_path", "install", "save"]

DISABLE_VARIABLE = "MINICODE_BYTECODE_BUNDLE"
"""Set to ``0`` to load every module the regular way (and write no bundle)."""
_FORMAT = b"minicode-bytecode-bundle-2\n"
_HEADER = len(_FORMAT) + 8  # the format line, then the index's length as 8 little-endian bytes
_external = sys.modules["_frozen_importlib_external"]  # importlib's path machinery, always loaded
_SourceFileLoader = _external.SourceFileLoader
_ModuleSpec = sys.modules["_frozen_importlib"].ModuleSpec
_CODE = type((lambda: None).__code__)  # (not compile(): its first call sets up the compiler, ~2 ms)

Entry = tuple[str, str, bool, int, int, int, int]
"""A bundled module: source path, its ``.pyc`` path, is a package, source mtime_ns, source size,
offset and length of its code."""
Fresh = tuple[str, str, bool, int, int, bytes]
"""A module for the next bundle: an ``Entry`` with its code in place of offset and length."""


class _BundledLoader(_SourceFileLoader):  # type: ignore[misc,valid-type]  # importlib's own class
    """A ``SourceFileLoader`` whose code comes from the bundle (once; the regular way after)."""

    def __init__(self, name: str, path: str, code: bytes, finder: BundleFinder) -> None:
        super().__init__(name, path)
        self._code: bytes | None = code
        self._finder = finder

    def get_code(self, fullname: str) -> CodeType:
        code, self._code = self._code, None
        try:
            loaded = marshal.loads(code) if code is not None and fullname == self.name else None
        except (ValueError, EOFError, TypeError):  # a damaged bundle: the regular way
            loaded = None
        if type(loaded) is not _CODE:
            if code is not None:
                self._finder.stale.add(self.name)  # damaged: the next bundle leaves it out
            return super().get_code(fullname)  # type: ignore[no-any-return]
        _imp._fix_co_filename(loaded, self.path)  # type: ignore[attr-defined]  # as SourceLoader does for a moved tree
        return loaded


class BundleFinder:
    """The meta-path finder serving a bundle's modules whose sources are unchanged."""

    def __init__(self, fd: int, base: int, modules: dict[str, Entry], search_path: list[str]) -> None:
        self._fd = fd
        self._base = base
        """Where the code starts in the file (entry offsets count from there)."""
        self._search_path = search_path
        """The ``sys.path`` the bundle was written for (one changed since: top-level names not served)."""
        self.modules = modules
        self.stale: set[str] = set()
        """Bundled modules this run found changed (loaded the regular way)."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        entry = self.modules.get(name)
        if entry is None or target is not None or (path is None and sys.path != self._search_path):
            return None  # not bundled, a reload, or a top-level name on a path changed since
        try:
            return self._spec(name, path, *entry)
        except Exception:  # noqa: BLE001 - a damaged entry: the regular way, and not bundled again
            self.stale.add(name)
            return None

    def _spec(self, name: str, path: Sequence[str] | None, origin: str, cached: str, is_package: bool,
              mtime_ns: int, size: int, offset: int, length: int) -> ModuleSpec | None:
        if path is not None and os.path.dirname(os.path.dirname(origin) if is_package else origin) not in path:
            return None  # the parent package looks somewhere else now
        try:
            status = os.stat(origin)
            unchanged = (status.st_mtime_ns, status.st_size) == (mtime_ns, size)
            code = os.pread(self._fd, length, self._base + offset) if unchanged else b""
        except OSError:
            code = b""
        if len(code) != length:
            self.stale.add(name)
            return None
        # The spec spec_from_file_location makes, without its look-ups: the .pyc path is known
        spec = _ModuleSpec(name, _BundledLoader(name, origin, code, self), origin=origin, is_package=is_package)
        spec.has_location = True
        spec.cached = cached
        if is_package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        return spec  # type: ignore[no-any-return]

    def invalidate_caches(self) -> None:
        """Nothing cached beyond the bundle, which checks every source it serves."""

    def code_of(self, name: str) -> bytes | None:
        """A bundled module's code as stored, for the next bundle."""
        entry = self.modules[name]
        try:
            code = os.pread(self._fd, entry[6], self._base + entry[5])
        except OSError:
            return None
        return code if len(code) == entry[6] else None


_finder: BundleFinder | None = None
_loaded_before: frozenset[str] = frozenset()
_path: str | None = None
_search_path: list[str] = []
"""``sys.path`` when the bundle was opened: the one it was found for, and written for."""


def bundle_path(package_dir: str, search_path: Sequence[str]) -> str | None:
    """Where the bundle for this interpreter and this ``sys.path`` lives, or None when there
    is to be none (a working directory on the path, no cache tag)."""
    tag = sys.implementation.cache_tag
    if tag is None or "" in search_path or os.getcwd() in search_path:
        return None
    return os.path.join(package_dir, "__pycache__", f"bundle.{tag}.{_fingerprint(search_path)}.bin")


def install(package_dir: str) -> None:
    """Put the bundle's finder first on ``sys.meta_path`` when the bundle is usable; remember
    what was loaded already (those are never the bundle's business). Never raises."""
    global _finder, _loaded_before, _path, _search_path
    _loaded_before = frozenset(sys.modules)
    if os.environ.get(DISABLE_VARIABLE, "").strip() == "0" or sys.pycache_prefix is not None:
        return
    try:
        _search_path = list(sys.path)
        _path = bundle_path(package_dir, _search_path)
        _finder = None if _path is None else _open(_path)
    except Exception:  # noqa: BLE001 - e.g. the working directory is gone: load the regular way
        _path = _finder = None
    if _finder is not None:
        sys.meta_path.insert(0, _finder)


def _open(path: str) -> BundleFinder | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        found = _read_index(fd)
    except Exception:  # noqa: BLE001 - any damage: this bundle is not used, the next is written
        found = None
    if found is None:
        os.close(fd)
        return None
    return BundleFinder(fd, *found, _search_path)


def _read_index(fd: int) -> tuple[int, dict[str, Entry]] | None:
    """The offset where the code starts and the bundled modules, or None when the bundle is
    not for this interpreter and path or a directory it relies on changed."""
    head = os.pread(fd, _HEADER, 0)
    if len(head) != _HEADER or not head.startswith(_FORMAT):
        return None
    size = int.from_bytes(head[len(_FORMAT):], "little")
    if size > os.fstat(fd).st_size - _HEADER:
        return None
    raw = os.pread(fd, size, _HEADER)
    if len(raw) != size:
        return None
    index = marshal.loads(raw)
    if index["magic"] != _external.MAGIC_NUMBER or index["path"] != _search_path:
        return None
    if any(_mtime_ns(directory) != mtime_ns for directory, mtime_ns in index["dirs"].items()):
        return None  # a module added, removed or renamed where the bundle's modules come from
    modules: dict[str, Entry] = index["modules"]
    return (_HEADER + size, modules) if type(modules) is dict else None


def _mtime_ns(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _fingerprint(search_path: Sequence[str]) -> str:
    """A short stable name for a ``sys.path`` (FNV-1a; ``hash`` of a str differs per process)."""
    value = 0xCBF29CE484222325
    for byte in "\0".join(search_path).encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return format(value, "016x")[:12]


def save() -> None:
    """At a clean exit: write a new bundle when this run loaded modules it lacked or had stale
    (never raises; a bundle that cannot be written is simply not there next time)."""
    if _path is None or sys.dont_write_bytecode or sys.path != _search_path:
        return  # (a run that changed its path loaded modules the next run's path may not find)
    try:
        fresh = _fresh_modules()
        if fresh or (_finder is not None and _finder.stale):
            _write(_path, fresh)
    except Exception:  # noqa: BLE001 - an optimisation must never turn an exit into a failure
        pass


def _fresh_modules() -> dict[str, Fresh]:
    """The modules this run loaded the regular way that the bundle can hold: from a source
    file whose ``.pyc`` is the one the interpreter checked (one it could not write is not
    counted, or every run would write the bundle again for it)."""
    fresh = {}
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if name in _loaded_before or type(getattr(spec, "loader", None)) is not _SourceFileLoader:
            continue
        origin, cached = getattr(spec, "origin", None), getattr(spec, "cached", None)
        if isinstance(origin, str) and origin.endswith(".py") and isinstance(cached, str):
            found = _from_pyc(origin, cached)
            if found is not None:
                fresh[name] = (origin, cached, getattr(spec, "submodule_search_locations", None) is not None, *found)
    return fresh


def _write(path: str, fresh: dict[str, Fresh]) -> None:
    modules: dict[str, Entry] = {}
    blob: list[bytes] = []
    offset = 0
    kept = _finder
    if kept is not None:
        for name, entry in kept.modules.items():
            code = None if name in kept.stale or name in fresh else kept.code_of(name)
            if code is not None:
                fresh.setdefault(name, (*entry[:5], code))
    for name, (origin, cached, is_package, mtime_ns, size, code) in fresh.items():
        modules[name] = (origin, cached, is_package, mtime_ns, size, offset, len(code))
        blob.append(code)
        offset += len(code)
    dirs = {os.path.dirname(entry[0]): 0 for entry in modules.values()}
    dirs.update({os.path.dirname(os.path.dirname(e[0])): 0 for e in modules.values() if e[2]})
    dirs.update({entry: 0 for entry in _search_path})  # missing ones too: one that appears may come first
    index = {"magic": _external.MAGIC_NUMBER, "path": _search_path, "modules": modules,
             "dirs": {directory: _mtime_ns(directory) for directory in dirs}}
    raw = marshal.dumps(index)
    _replace(path, [_FORMAT, len(raw).to_bytes(8, "little"), raw, *blob])


def _from_pyc(origin: str, cached: str) -> tuple[int, int, bytes] | None:
    """The source's mtime_ns and size and the code of its ``.pyc``, when that ``.pyc`` is the
    one the interpreter would load for this source now (timestamp-checked, this magic)."""
    try:
        status = os.stat(origin)
        with open(cached, "rb") as pyc:
            data = pyc.read()
    except OSError:
        return None
    if (data[:4] != _external.MAGIC_NUMBER or int.from_bytes(data[4:8], "little") != 0
            or int.from_bytes(data[8:12], "little") != int(status.st_mtime) & 0xFFFFFFFF
            or int.from_bytes(data[12:16], "little") != status.st_size & 0xFFFFFFFF):
        return None
    return status.st_mtime_ns, status.st_size, data[16:]


def _replace(path: str, parts: list[bytes]) -> None:
    """Write ``parts`` under a new temporary name, then rename it over ``path`` (not
    ``private_file.write_private``: a bundle is no secret, needs no fsync — a lost one is
    written again — and this module loads nothing that is not built in)."""
    try:
        os.mkdir(os.path.dirname(path))  # as the interpreter makes __pycache__ for a .pyc
    except FileExistsError:
        pass
    temporary = f"{path}.{os.urandom(6).hex()}.tmp"  # a new file: never one someone placed there
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    try:
        with open(fd, "wb") as out:
            for part in parts:
                out.write(part)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
