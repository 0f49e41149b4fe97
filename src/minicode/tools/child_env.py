"""The environment a command or hook runs with: minicode's own, minus every secret.

Its own module so that opening a session (which computes it once) does not load the bash
tool and the command guard before a command runs.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from minicode.redact import contains_secret

__all__ = ["child_environment"]


def child_environment(
    environ: Mapping[str, str], secret_names: Iterable[str], secret_values: Iterable[str]
) -> dict[str, str]:
    """``environ`` without the secret variables and without any variable whose value contains
    a secret (``Authorization=Bearer sk-…`` too, not only an exact copy); secrets shorter than
    ``redact.MIN_SECRET_LENGTH`` are ignored, as everywhere."""
    names = set(secret_names)
    values = tuple(secret_values)
    return {k: v for k, v in environ.items() if k not in names and not contains_secret(v, values)}
