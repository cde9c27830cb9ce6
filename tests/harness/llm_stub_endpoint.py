"""A real HTTP server on loopback speaking the OpenAI chat-completions API with scripted replies.

It records every request body and header set, and measures how many requests it is serving at
once (`max_in_flight`). `hold_first=N` makes the first N requests wait until N are in flight
together (or `hold_timeout_s` passes), so a concurrency bound can be checked without timing.
"""

from __future__ import annotations

import json
import select
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """What the endpoint answers to one request."""

    text: str = "stub answer"
    status: int = 200
    delay_s: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5
    error_message: str = "scripted failure"
    raw: bytes | None = None  # the whole body of the answer, as it is (a hostile endpoint)
    headers: tuple[tuple[str, str], ...] = ()  # more headers (e.g. Content-Encoding)
    until_closed: bool = False  # answer nothing; hold until the client closes the connection


Script = Callable[[int, dict[str, Any]], Reply]


def echo_question(n: int, body: dict[str, Any]) -> Reply:
    """Answer with the last line of the user turn that starts with 'Question:'."""
    user = body["messages"][-1]["content"]
    lines = [ln for ln in user.splitlines() if ln.startswith("Question:")]
    return Reply(text=f"answer to {lines[-1][len('Question:'):].strip()}" if lines else "?")


class ChatEndpoint:
    """Run with `with ChatEndpoint(script) as ep:`; `ep.url` is the base URL (…/v1)."""

    def __init__(
        self, script: Script = echo_question, *, hold_first: int = 0, hold_timeout_s: float = 5.0
    ) -> None:
        self.script = script
        self.hold_first = hold_first
        self.hold_timeout_s = hold_timeout_s
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # each request's path, its query too
        self.in_flight = 0
        self.max_in_flight = 0
        self.closed_by_client = 0  # `until_closed` requests whose client closed the connection
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def count(self) -> int:
        with self._cond:
            return len(self.bodies)

    def wait_count(self, n: int, timeout_s: float = 120.0) -> int:
        """The number of requests seen, once it reaches `n` (or `timeout_s` passes): a request
        a client sent before giving up can still be in the socket's queue when the client's
        call returns, and is counted when a handler thread reads it."""
        with self._cond:
            self._cond.wait_for(lambda: len(self.bodies) >= n, timeout=timeout_s)
            return len(self.bodies)

    def wait_closed(self, n: int, timeout_s: float = 120.0) -> int:
        """`closed_by_client`, once it reaches `n` (or `timeout_s` passes)."""
        with self._cond:
            self._cond.wait_for(lambda: self.closed_by_client >= n, timeout=timeout_s)
            return self.closed_by_client

    def _hold_until_closed(self, conn: socket.socket) -> None:
        while not self._stop.is_set():
            readable, _, _ = select.select([conn], [], [], 0.1)
            try:
                if readable and conn.recv(1, socket.MSG_PEEK) == b"":
                    break
            except OSError:
                break
        else:
            return
        with self._cond:
            self.closed_by_client += 1
            self._cond.notify_all()

    def __enter__(self) -> ChatEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _serve(self, body: dict[str, Any], headers: dict[str, str], path: str) -> Reply:
        with self._cond:
            n = len(self.bodies)
            self.bodies.append(body)
            self.headers.append(headers)
            self.paths.append(path)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._cond.notify_all()
            if n < self.hold_first:
                self._cond.wait_for(
                    lambda: self.in_flight >= self.hold_first or self._stop.is_set(),
                    timeout=self.hold_timeout_s,
                )
        reply = self.script(n, body)
        if reply.delay_s:
            self._stop.wait(reply.delay_s)
        return reply

    def _done(self) -> None:
        with self._cond:
            self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.split("?")[0].endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "no such route"}})
                    return
                try:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    reply = endpoint._serve(body, headers, self.path)
                    if reply.until_closed:
                        endpoint._hold_until_closed(self.connection)
                        self.close_connection = True
                        return
                    if reply.status != 200:
                        err = {"message": reply.error_message, "type": "scripted"}
                        self._send(reply.status, {"error": err}, reply.raw, reply.headers)
                        return
                    self._send(200, _completion(body, reply), reply.raw, reply.headers)
                finally:
                    endpoint._done()

            def _send(self, status: int, payload: dict[str, Any], raw: bytes | None = None,
                      headers: tuple[tuple[str, str], ...] = ()) -> None:
                data = json.dumps(payload).encode() if raw is None else raw
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for name, value in headers:
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to deliver

        return Handler


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }
