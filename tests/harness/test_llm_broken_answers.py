"""An endpoint that is reached but breaks off its answer (a body cut short, the connection
closed before any answer, bytes that are no HTTP status line) is named as such (PLUG5,
session 31): each was "cannot reach URL", which sent the user to check a URL that works.
An endpoint that is not listening still says "cannot reach". Real `openai` client, real
sockets on loopback."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from harness.config import LlmSection
from harness.llm import Broker, LlmUnavailable

KEY = "sk-test-BROKEN-ANSWER-5c1d"
BODY = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "hello"}}]}).encode()
WHOLE = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(BODY)}"
         "\r\n\r\n").encode() + BODY
# what the endpoint writes before it closes the connection
BREAKS = {**{f"cut at {n}": WHOLE[:n] for n in (len(WHOLE) - 1, len(WHOLE) - len(BODY) // 2,
                                                len(WHOLE) - len(BODY))},
          "nothing": b"", "garbage": b"\x00\xff garbage\r\n\r\n",
          "key echoed": f"HTTP/1.1 {KEY}\r\n\r\n".encode(), "half a status line": b"HTTP/1.1 2"}


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        rest += conn.recv(65536)


class Endpoint:
    """A socket server on loopback that reads each request whole, writes `reply` and closes
    the connection; `count` is how many requests it read."""

    def __init__(self, reply: bytes) -> None:
        self.reply, self.count = reply, 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/v1"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:  # closed
                return
            with conn:
                _read_request(conn)
                self.count += 1
                conn.sendall(self.reply)

    def close(self) -> None:
        self._server.close()


@contextmanager
def endpoint(reply: bytes) -> Iterator[Endpoint]:
    ep = Endpoint(reply)
    try:
        yield ep
    finally:
        ep.close()


def call(url: str) -> str:
    """The LlmUnavailable message of one rlm_call to `url`."""
    section = LlmSection(base_url=url, model="m", api_key=KEY, retry_backoff_s=0.01)
    with Broker.from_config(section) as broker, pytest.raises(LlmUnavailable) as info:
        broker.call("slice", "question", broker.new_budget())
    return str(info.value)


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_an_answer_broken_off_is_named_not_cannot_reach(name: str) -> None:
    with endpoint(BREAKS[name]) as ep:
        said = call(ep.url)
        assert ep.count == 1 + LlmSection().max_retries  # each attempt reached it, counted
    assert "answered no whole HTTP response" in said and "cannot reach" not in said, said
    assert KEY not in said and said.endswith("(attempt 3)"), said


def test_an_endpoint_not_listening_cannot_be_reached() -> None:
    with endpoint(b"") as ep:
        url = ep.url
    said = call(url)  # closed: the port refuses connections
    assert said.startswith(f"cannot reach {url}"), said
    # the reason and where to look (REVIEW42, session 42: it said only "cannot reach URL")
    assert "(Connection refused: is the server running there? [llm] base_url" in said, said


def test_a_host_that_does_not_resolve_says_so() -> None:
    said = call("http://no-such-host.invalid:8080/v1")
    assert said.startswith("cannot reach http://no-such-host.invalid:8080/v1 ("), said
    assert "is the server running there? [llm] base_url" in said, said
