"""A small respx-like router for httpx2 (respx mocks httpx only).

While a ``Router`` is installed (the ``router`` fixture of conftest.py), every request that
httpx2's real transports (``HTTPTransport``, ``AsyncHTTPTransport``) would put on the network is
answered by the first route matching its method and URL instead: the client under test — the
provider's own, with its headers and the reader thread — is the real one, and only the network
is replaced. The answer's body is handed over as a stream, as a transport's would be, so the
provider reads it as it reads a server's (``http.Response.iter_bytes``).

A route answers with ``return_value`` (a response) or ``side_effect``: an exception (raised), a
list of responses and exceptions (one per call, in turn) or a function of the request (for the
async client it may be a coroutine function). Each call is recorded on the route and the router.
A request no route matches fails the test.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any, NamedTuple

import httpx2
import pytest


class Call(NamedTuple):
    request: httpx2.Request
    response: httpx2.Response | None


class Calls(list[Call]):
    @property
    def last(self) -> Call:
        return self[-1]


class Route:
    def __init__(self, method: str | None, url: str | None, name: str | None) -> None:
        self.method, self.name = method, name
        self.url = httpx2.URL(url) if url is not None else None
        self.calls = Calls()
        self._return_value: httpx2.Response | None = None
        self._side_effect: Any = None
        self._next: Iterator[Any] | None = None

    @property
    def call_count(self) -> int:
        return len(self.calls)

    def mock(self, return_value: httpx2.Response | None = None, side_effect: Any = None) -> Route:
        self._return_value, self._side_effect = return_value, side_effect
        self._next = iter(side_effect) if isinstance(side_effect, (list, tuple)) else None
        return self

    def matches(self, request: httpx2.Request) -> bool:
        return (self.method is None or request.method == self.method) and (self.url is None or request.url == self.url)

    def result(self, request: httpx2.Request) -> Any:
        """The response (or, from an async side effect, a coroutine giving it); raises a scripted error."""
        effect = next(self._next) if self._next is not None else self._side_effect
        if isinstance(effect, type) and issubclass(effect, Exception):
            effect = effect("mocked")
        if isinstance(effect, Exception):
            if isinstance(effect, httpx2.RequestError):
                effect.request = request  # as a transport raises it
            raise effect
        if callable(effect):
            return effect(request)
        if effect is not None:
            return effect
        return self._return_value if self._return_value is not None else httpx2.Response(200)


class Router:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        """By name: ``route(name=…)``'s, or the method and URL."""
        self.calls = Calls()

    def route(self, method: str | None = None, url: str | None = None, *, name: str | None = None) -> Route:
        """A new route; one with the same name (or method and URL) is replaced in its place."""
        route = Route(method, url, name)
        self.routes[name or f"{method} {url}"] = route
        return route

    def get(self, url: str) -> Route:
        return self.route("GET", url)

    def post(self, url: str) -> Route:
        return self.route("POST", url)

    def reset(self) -> None:
        """Forget the calls recorded so far (the routes stay)."""
        self.calls.clear()
        for route in self.routes.values():
            route.calls.clear()

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def handle(transport: httpx2.HTTPTransport, request: httpx2.Request) -> httpx2.Response:
            request.read()
            route = self._find(request)
            try:
                given = route.result(request)
            except BaseException:
                self._record(route, Call(request, None))
                raise
            return self._respond(route, request, given)

        async def handle_async(transport: httpx2.AsyncHTTPTransport, request: httpx2.Request) -> httpx2.Response:
            await request.aread()
            route = self._find(request)
            try:
                given = route.result(request)
                if inspect.isawaitable(given):
                    given = await given
            except BaseException:
                self._record(route, Call(request, None))
                raise
            return self._respond(route, request, given)

        monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", handle)
        monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", handle_async)

    def _find(self, request: httpx2.Request) -> Route:
        for route in self.routes.values():
            if route.matches(request):
                return route
        raise AssertionError(f"no route for {request.method} {request.url}")

    def _respond(self, route: Route, request: httpx2.Request, given: object) -> httpx2.Response:
        assert isinstance(given, httpx2.Response), f"a route answered {given!r}"
        # A fresh response on the given one's stream: unread, as a transport's is (a response
        # made with content= is read at once, and one response may answer several calls).
        response = httpx2.Response(given.status_code, headers=given.headers, stream=given.stream,
                                   extensions=dict(given.extensions), request=request)
        self._record(route, Call(request, response))
        return response

    def _record(self, route: Route, call: Call) -> None:
        route.calls.append(call)
        self.calls.append(call)
