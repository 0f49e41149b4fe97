"""Removes the bytecode bundles minicode 0.2 left beside its own ``.pyc`` files.

Version 0.2 kept one file per distinct ``sys.path`` in ``minicode/__pycache__``
(``bundle.<cache tag>.<fingerprint>.bin``, ~3.7 MB each, written through a temporary
``bundle.….bin.<hex>.tmp``) and never removed them; nothing reads them any more. Each start
looks once — one directory listing, nothing else when there is none — and deletes what it
finds; a file that cannot be removed (a read-only install, another user's) is left, silently:
it costs disk, never a run.
"""

from __future__ import annotations

import os

__all__ = ["is_old_bundle", "remove"]


def is_old_bundle(name: str) -> bool:
    """Whether ``name`` is one of 0.2's bundle files or its temporaries."""
    return name.startswith("bundle.") and (name.endswith(".bin") or (".bin." in name and name.endswith(".tmp")))


def remove(package_dir: str) -> None:
    """Delete the old bundles in ``package_dir/__pycache__``; errors are ignored."""
    try:
        with os.scandir(os.path.join(package_dir, "__pycache__")) as entries:
            names = [entry.path for entry in entries if is_old_bundle(entry.name)]
    except OSError:  # no __pycache__ (a fresh install, PYTHONDONTWRITEBYTECODE): nothing to do
        return
    for path in names:
        try:
            os.unlink(path)
        except OSError:
            pass
