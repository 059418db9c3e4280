"""A loopback proxy in front of an S3 server that misbehaves as object stores do under load
(SPEC R49): for a fraction of requests it answers ``503 SlowDown`` without forwarding, drops
the connection before forwarding, or forwards the request and then drops the connection
instead of answering (the request took effect; the client never hears so). ``rewrite``
changes the answers it forwards (a store that misreports what it did).

Requests pass through byte for byte, the ``Host`` header included, so that the client's
SigV4 signature (which covers the host the client called) still verifies upstream. The
choice of fault is drawn from a seeded generator: a run is reproducible request for
request. ``injected`` counts what was done, so that a test can show its faults happened.
"""

from __future__ import annotations

import http.client
import random
import socket
import struct
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SLOWDOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)
# Hop-by-hop headers a proxy does not pass on (RFC 9110 7.6.1); the body is re-framed.
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}


class FaultyProxy:
    """``FaultyProxy(upstream, slowdown=..., drop=..., lost_answer=..., seed=...)``: each a
    fraction of requests; ``rewrite``: what it does to each answer's body it forwards;
    ``delay``: seconds each request waits before it is forwarded (a store far away).
    ``start()`` / ``stop()``; ``endpoint`` is what clients call."""

    def __init__(
        self,
        upstream: str,
        *,
        slowdown: float = 0.0,
        drop: float = 0.0,
        lost_answer: float = 0.0,
        seed: int = 0,
        rewrite: Callable[[bytes], bytes] | None = None,
        delay: float = 0.0,
    ) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.fractions = {"slowdown": slowdown, "drop": drop, "lost_answer": lost_answer}
        self.random = random.Random(seed)
        self.rewrite = rewrite
        self.delay = delay
        self.lock = threading.Lock()
        self.injected: Counter[str] = Counter()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FaultyProxy:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fault(self) -> str:
        """The fate of the next request: a fault's name or "forwarded"."""
        with self.lock:
            draw = self.random.random()
            for name, fraction in self.fractions.items():
                if draw < fraction:
                    self.injected[name] += 1
                    return name
                draw -= fraction
            self.injected["forwarded"] += 1
            return "forwarded"

    def forward(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> Any:
        """The upstream's answer: (status, reason, headers, body)."""
        connection = http.client.HTTPConnection(*self.upstream, timeout=60)
        try:
            connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for name, value in headers:
                if name.lower() not in HOP and name.lower() != "content-length":
                    connection.putheader(name, value)
            connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            answer = connection.getresponse()
            return answer.status, answer.reason, answer.getheaders(), answer.read()
        finally:
            connection.close()


def _handler(proxy: FaultyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: a test's output is for its failures."""

        def _drop(self) -> None:
            """Close the connection without a word (the client sees a reset or EOF)."""
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()

        def _serve(self) -> None:
            body = read_body(self)
            fate = proxy.fault()
            if fate == "drop":
                self._drop()
                return
            if fate == "slowdown":
                self.send_response(503, "Slow Down")
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(SLOWDOWN)))
                self.end_headers()
                self.wfile.write(SLOWDOWN)
                return
            time.sleep(proxy.delay)
            status, reason, headers, answer = proxy.forward(
                self.command, self.path, list(self.headers.items()), body
            )
            if fate == "lost_answer":
                self._drop()
                return
            if proxy.rewrite is not None:
                answer = proxy.rewrite(answer)
            relay(self, status, reason, headers, answer)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _serve

    return Handler


def read_body(handler: BaseHTTPRequestHandler) -> bytes:
    """A request's body, by its Content-Length or in HTTP chunks."""
    if handler.headers.get("Transfer-Encoding", "").lower() != "chunked":
        return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    chunks = []
    while size := int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16):
        chunks.append(handler.rfile.read(size))
        handler.rfile.readline()
    while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
        pass  # trailers
    return b"".join(chunks)


def relay(
    handler: BaseHTTPRequestHandler,
    status: int,
    reason: str,
    headers: list[tuple[str, str]],
    answer: bytes,
) -> None:
    """Send the upstream's answer on; a HEAD's Content-Length is the object's, kept."""
    handler.send_response(status, reason)
    head = handler.command == "HEAD"
    for name, value in headers:
        if name.lower() not in HOP and (head or name.lower() != "content-length"):
            handler.send_header(name, value)
    if not head:
        handler.send_header("Content-Length", str(len(answer)))
    handler.end_headers()
    handler.wfile.write(answer)
