"""The CA bundle the provider's HTTPS connections trust, checked at start and loaded once.

httpx2's rule, applied to the environment minicode is given: ``SSL_CERT_FILE`` (a file of PEM
certificates), else ``SSL_CERT_DIR`` (a directory of them), else the system's CA certificates
as httpx2 finds them (``httpx2.create_ssl_context``: OpenSSL's paths, truststore on macOS and
Windows) — the store the MCP client's connections trust too (``SSLKEYLOGFILE`` is the standard
library's). ``check`` runs at start-up, before any request:
a variable that names nothing readable is a configuration error (exit 2, naming the variable)
instead of a connection failure retried for seconds and blamed on the server. ``context``
builds the SSL context for the HTTP client and for ``--doctor``'s own handshake (the same
verdict on a certificate); a readable file that holds no certificate is a configuration error
there. Standard library, and httpx2 for the system's store.
"""

from __future__ import annotations

import os
import ssl
import stat
from typing import Mapping

from minicode.errors import ConfigError

__all__ = ["check", "context"]

_FIX = "point it at your CA certificates, or unset it to trust the system's"


def check(env: Mapping[str, str]) -> None:
    """ConfigError unless the variable that picks the bundle names a readable file (or directory)."""
    source = _source(env)
    if source is None:
        return
    name, path = source
    want_dir = name == "SSL_CERT_DIR"
    kind = "directory" if want_dir else "file"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ConfigError(f"{name} is set to {path}, which does not exist; {_FIX}") from None
    except OSError as e:
        raise ConfigError(f"{name} is set to {path}, which cannot be read ({e.strerror}); {_FIX}") from e
    if want_dir != stat.S_ISDIR(mode):
        other = " (SSL_CERT_FILE is for a file)" if want_dir else " (SSL_CERT_DIR is for a directory)"
        raise ConfigError(f"{name} is set to {path}, which is not a {kind}{other}; {_FIX}")
    if not os.access(path, os.R_OK | (os.X_OK if want_dir else 0)):
        raise ConfigError(f"{name} is set to {path}, a {kind} minicode may not read; {_FIX}")


def context(env: Mapping[str, str]) -> ssl.SSLContext:
    """The SSL context that verifies servers against the bundle ``env`` picks (``check`` it first:
    its messages say what is wrong with a path)."""
    source = _source(env)
    if source is None:
        import httpx2  # its own reading of SSL_CERT_* is off: ``env`` is the environment here

        return httpx2.create_ssl_context(trust_env=False)
    name, path = source
    try:
        if name == "SSL_CERT_DIR":
            return ssl.create_default_context(capath=path)
        return ssl.create_default_context(cafile=path)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"{name} is set to {path}, which holds no CA certificate minicode can load "
                          f"({getattr(e, 'reason', None) or e}); {_FIX}") from e


def _source(env: Mapping[str, str]) -> tuple[str, str] | None:
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        if env.get(name):
            return name, env[name]
    return None
