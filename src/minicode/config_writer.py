"""Writing a new configuration file (``--init`` and the first-run questions): mode 0600 from
its creation, never over an existing file, validated by the same parser that reads it."""

from __future__ import annotations

import os
from pathlib import Path

from minicode.config import ENV_NAME, parse_config
from minicode.errors import ConfigError

__all__ = ["STARTER_MODE", "write_starter_config"]

STARTER_MODE = 0o600

_STARTER_HEADER = (
    "# minicode configuration, written by {origin}.\n"
    "# Options: `minicode --help`; every key: docs/config.md in the minicode repository.\n"
    "# This file may hold a secret: keep it out of version control.\n\n"
)


def write_starter_config(
    path: Path,
    *,
    base_url: str,
    model: str,
    api_key: str | None = None,
    api_key_env: str | None = None,
    origin: str = "`minicode --init`",
) -> Path:
    """Write a new config file with mode 0600; never overwrites (ConfigError if it exists).

    ``origin`` completes the header's "written by …" (the command or the first-run questions)."""
    if (api_key is None) == (api_key_env is None):
        raise ConfigError("give exactly one of an API key or the name of a variable holding it")
    if api_key_env is not None and not ENV_NAME.fullmatch(api_key_env):
        raise ConfigError("--api-key-env must be an environment variable name, e.g. OPENAI_API_KEY")
    table: dict[str, str] = {"base_url": base_url.strip(), "name": model.strip()}
    if api_key is not None:
        table["api_key"] = api_key
    else:
        table["api_key_env"] = api_key_env or ""
    # Validate before anything lands on disk; the variable need not be set yet.
    probe_env = {table.get("api_key_env", ""): "x"}
    parse_config(path, {"model": table}, probe_env)

    import tomli_w  # lazily: only --init and first-run setup write files

    text = _STARTER_HEADER.format(origin=origin) + tomli_w.dumps({"model": table})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # O_EXCL refuses an existing file (and a symlink); the mode is set at creation so the
        # secret is never readable by others, not even between open() and chmod().
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, STARTER_MODE)
    except FileExistsError:
        raise ConfigError(
            f"{path}: already exists; refusing to overwrite it (edit it, or move it away and run --init again)"
        ) from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot create the configuration file ({e.strerror})") from e
    try:
        os.fchmod(fd, STARTER_MODE)  # a restrictive umask must not leave it unreadable for us
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        path.unlink(missing_ok=True)  # no half-written config that would fail the next start
        raise ConfigError(f"{path}: cannot write the configuration file ({e.strerror})") from e
    return path
