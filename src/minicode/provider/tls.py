"""The TLS trust store of the provider's HTTP client, loaded when it is first needed.

httpx builds its default SSL context eagerly, and parsing the CA bundle (~140 certificates)
costs more CPU than importing httpx itself — on the path to the first request, and wasted
entirely on a plain-http endpoint (Ollama, llama.cpp or vLLM on loopback). ``LazyTrustContext``
is configured like httpx's default (``ssl.create_default_context`` for server authentication;
the CA bundle from ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set, else certifi's; the
``SSLKEYLOGFILE`` key log) but loads the bundle on the first TLS handshake — or earlier, on a
background thread, through ``warm_in_background()`` (OpenSSL parses it without holding the
GIL, so it overlaps with the rest of start-up). Verification is never weakened: until the
bundle is loaded no handshake can start.

Standard library (+ certifi, which httpx brings) only; the environment is passed in.
"""

from __future__ import annotations

import ssl
import sys
import threading
from typing import Any, Mapping

__all__ = ["LazyTrustContext"]


class LazyTrustContext(ssl.SSLContext):
    """An ``ssl.SSLContext`` for verifying servers whose CA bundle loads on first use."""

    _cafile: str | None
    _capath: str | None

    def __new__(cls, env: Mapping[str, str]) -> "LazyTrustContext":
        return super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)

    def __init__(self, env: Mapping[str, str]) -> None:
        # What ssl.create_default_context(Purpose.SERVER_AUTH, cafile=...) sets up, minus the load.
        self.verify_mode = ssl.CERT_REQUIRED
        self.check_hostname = True
        if sys.version_info >= (3, 13):  # create_default_context became stricter in 3.13
            self.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
        keylog = env.get("SSLKEYLOGFILE")
        if keylog and not sys.flags.ignore_environment:
            self.keylog_filename = keylog
        # httpx's rule for verify=True with trust_env: SSL_CERT_FILE, else SSL_CERT_DIR, else certifi.
        self._cafile, self._capath = None, None
        if env.get("SSL_CERT_FILE"):
            self._cafile = env["SSL_CERT_FILE"]
        elif env.get("SSL_CERT_DIR"):
            self._capath = env["SSL_CERT_DIR"]
        self._lock = threading.Lock()
        self._loaded = False

    @property
    def loaded(self) -> bool:
        return self._loaded

    def warm(self) -> None:
        """Load the CA bundle now (idempotent, thread-safe). Raises what loading raises."""
        with self._lock:
            if self._loaded:
                return
            if self._cafile is None and self._capath is None:
                import certifi

                self._cafile = certifi.where()
            self.load_verify_locations(cafile=self._cafile, capath=self._capath)
            self._loaded = True

    def warm_in_background(self) -> None:
        """Start loading on a daemon thread; a failure shows again at the first handshake."""
        threading.Thread(target=self._warm_quietly, name="minicode-tls", daemon=True).start()

    def _warm_quietly(self) -> None:
        try:
            self.warm()
        except (OSError, ssl.SSLError):  # raised again, with its message, by wrap_socket
            pass

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self.warm()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self.warm()
        return super().wrap_bio(*args, **kwargs)
