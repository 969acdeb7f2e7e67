"""A real HTTP server on 127.0.0.1 for offline download tests.

Usage::

    from helpers.httpserver import Response, serve

    routes = {
        "/data.csv": b"a,b\\n1,2\\n",                          # 200 with this body
        "/flaky": [Response(status=500), Response(body=b"ok")],  # 500, then 200 ...
        "/cut": Response(body=b"0123456789", truncate_to=4),     # short body, full length
    }
    with serve(routes) as srv:
        url = srv.url("/flaky")
        ...
        assert srv.count("/flaky") == 2

A route key is either a path (``/a/b``) or a path with its query string
(``/a?x=1``); the path-with-query key wins when both match. A route value is
``bytes`` (200), a :class:`Response`, or a list of them served to consecutive
requests, the last one repeating. Unknown paths get a 404.

The server is a real :class:`http.server.ThreadingHTTPServer`, so the code
under test goes through sockets, headers and ``Content-Length`` exactly as it
would against a remote host; nothing is mocked.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence


@dataclasses.dataclass(frozen=True)
class Response:
    """How the server answers one request.

    Attributes
    ----------
    body : bytes
        The full body.
    status : int
        HTTP status code.
    headers : mapping
        Extra response headers.
    content_type : str
        Value of the ``Content-Type`` header.
    truncate_to : int, optional
        Advertise ``Content-Length: len(body)`` but send only the first
        ``truncate_to`` bytes, then close the connection (a cut transfer).
    delay : float
        Seconds to wait before answering (to provoke client timeouts).
    """

    body: bytes = b""
    status: int = 200
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    content_type: str = "application/octet-stream"
    truncate_to: int | None = None
    delay: float = 0.0


RouteSpec = bytes | Response | Sequence[Response | bytes]


@dataclasses.dataclass
class RequestLog:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]


class FixtureServer:
    """Handle on a running server: its URLs and the requests it saw."""

    def __init__(self, httpd: http.server.ThreadingHTTPServer):
        self._httpd = httpd
        host, port = httpd.server_address[:2]
        self.base_url = f"http://{host}:{port}"
        self.requests: list[RequestLog] = []

    def url(self, path: str) -> str:
        """Absolute URL of ``path`` on this server."""
        return self.base_url + path

    def count(self, path: str) -> int:
        """How many requests went to ``path`` (query string ignored unless given)."""
        if "?" in path:
            return sum(r.path == path for r in self.requests)
        return sum(r.path.split("?", 1)[0] == path for r in self.requests)


def _as_response(spec: Response | bytes) -> Response:
    return spec if isinstance(spec, Response) else Response(body=bytes(spec))


def _make_handler(routes: Mapping[str, RouteSpec], server: FixtureServer, lock: threading.Lock):
    counters: dict[str, int] = {}

    def pick(path: str) -> Response | None:
        key = path if path in routes else path.split("?", 1)[0]
        if key not in routes:
            return None
        spec = routes[key]
        if isinstance(spec, (bytes, bytearray, Response)):
            return _as_response(spec)
        with lock:
            i = counters.get(key, 0)
            counters[key] = i + 1
        seq = list(spec)
        return _as_response(seq[min(i, len(seq) - 1)])

    class Handler(http.server.BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection, so closing after a truncated
        # body is what the client sees as "connection closed early".
        protocol_version = "HTTP/1.0"

        def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
            pass

        def do_GET(self):  # noqa: N802 - name fixed by BaseHTTPRequestHandler
            with lock:
                server.requests.append(RequestLog("GET", self.path, dict(self.headers.items())))
            resp = pick(self.path)
            if resp is None:
                resp = Response(
                    body=b'{"message": "not found"}', status=404, content_type="application/json"
                )
            if resp.delay:
                time.sleep(resp.delay)
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.content_type)
            self.send_header("Content-Length", str(len(resp.body)))
            for k, v in resp.headers.items():
                self.send_header(k, v)
            self.end_headers()
            body = resp.body if resp.truncate_to is None else resp.body[: resp.truncate_to]
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)
                self.wfile.flush()
            if resp.truncate_to is not None:
                self.close_connection = True

    return Handler


@contextlib.contextmanager
def serve(routes: Mapping[str, RouteSpec]) -> Iterator[FixtureServer]:
    """Serve ``routes`` on 127.0.0.1 (a free port) for the ``with`` block.

    Parameters
    ----------
    routes : mapping
        Path (optionally with query) to ``bytes``, :class:`Response` or a
        sequence of them for consecutive requests.

    Yields
    ------
    FixtureServer
        ``base_url``, ``url(path)``, ``requests`` and ``count(path)``.
    """
    lock = threading.Lock()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    server = FixtureServer(httpd)
    httpd.RequestHandlerClass = _make_handler(routes, server, lock)
    httpd.daemon_threads = True
    # Do not wait for handler threads on close: a deliberately slow handler
    # must not slow the test suite down.
    httpd.block_on_close = False
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def closed_port_url(path: str = "/") -> str:
    """URL on 127.0.0.1 whose port has nothing listening (connection refused).

    A port is bound, read and released; nothing else in the test binds it in
    between, so connecting to it is refused immediately, which is how an
    unreachable host looks without waiting for a network timeout.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"
