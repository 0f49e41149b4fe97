"""The Provider protocol: the only thing the agent knows about a model endpoint."""

from __future__ import annotations

from typing import AsyncGenerator, Protocol

from minicode.provider.types import ChatRequest, ChatResponse, StreamEvent
from minicode.provider.wire import WireProfile

__all__ = ["ProbeableProvider", "Provider"]


class Provider(Protocol):
    """A chat model endpoint.

    Contract:
    - ``chat`` sends one non-streaming request and returns the complete response, or raises
      ``APIError`` (HTTP/in-body errors, network errors with their cause chained) or
      ``ProtocolError`` (an invalid history, refused locally before sending).
    - ``stream`` returns an async iterator of ``StreamEvent``s ending with exactly one
      ``StreamEnd`` carrying the validated response. Any failure raises ``APIError`` or
      ``ProtocolError`` from the iterator; a failed stream yields no ``StreamEnd``.
      The iterator must be closed by the consumer (``contextlib.aclosing``); closing it or
      cancelling the consuming task closes the connection at once.
    - Retries (SPEC 3.3) happen inside both methods; a stream that already yielded content
      is never re-sent.
    """

    model: str

    async def chat(self, request: ChatRequest) -> ChatResponse: ...

    def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]: ...

    async def aclose(self) -> None: ...


class ProbeableProvider(Provider, Protocol):
    """A ``Provider`` that also answers what ``minicode --doctor`` asks of an endpoint."""

    base_url: str

    async def list_models(self) -> object:
        """The parsed JSON of ``GET {base_url}/models``; raises ``APIError`` like ``chat``."""

    async def wire_profile(self) -> WireProfile:
        """The wire profile (SPEC 3.4) the next request will use."""
