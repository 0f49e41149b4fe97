"""Strict reading of a TOML file into a dict, with errors that never echo the file's text.

Shared by the configuration (``config``) and the per-workspace permission rules
(``permissions.store``). A FIFO, a directory or a broken symlink is refused before it is
opened (``open()`` on a FIFO would block); syntax errors keep only their position, because
tomllib's message may quote the offending line, which may hold a secret. Standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from minicode.errors import ConfigError

__all__ = ["parse_toml", "read_toml"]


def read_toml(path: Path, what: str = "configuration file") -> dict[str, Any]:
    """The parsed file; ConfigError naming ``path`` and saying what is wrong otherwise."""
    if path.is_symlink() and not path.exists():
        raise ConfigError(f"{path}: {what} is a broken symbolic link")
    if path.is_dir():
        raise ConfigError(f"{path}: {what} path is a directory, not a file")
    if path.exists() and not path.is_file():
        raise ConfigError(f"{path}: {what} path is not a regular file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} ({e.strerror})") from e
    return parse_toml(data, path, what)


def parse_toml(data: bytes, path: Path, what: str = "configuration file") -> dict[str, Any]:
    """``data`` (the bytes of ``path``) parsed; ConfigError as ``read_toml`` says."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: {what} is not valid UTF-8") from None
    if text.startswith("\ufeff"):  # Notepad's "UTF-8 with BOM": tomllib only says "line 1, column 1"
        raise ConfigError(f"{path}: {what} starts with a byte-order mark (BOM), which TOML does not allow; "
                          "save it as UTF-8 without BOM")
    import tomllib  # here: `minicode --version` and --help import config but read no file

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        where = f" at line {m.group(1)}, column {m.group(2)}" if m else " at the end of the file"
        raise ConfigError(f"{path}: invalid TOML{where}") from None
