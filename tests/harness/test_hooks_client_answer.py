"""`daemon_request` never raises (its contract): an answer nested past the JSON parser's depth
is a bad answer, None, like any other (PLUG5, session 31: it raised RecursionError, a
traceback from the prompt hook of whatever held `.rmh/hooks.sock`)."""

from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path

import pytest

from harness.hooks_client import SOCKET, daemon_request

DEPTH = sys.getrecursionlimit() * 2
ANSWERS = {"deep array": b"[" * DEPTH + b"]" * DEPTH + b"\n",
           "deep object": b'{"a":' * DEPTH + b"1" + b"}" * DEPTH + b"\n",
           "not JSON": b"{\n", "a list": b"[1]\n"}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_a_bad_answer_is_none(tmp_path: Path, name: str) -> None:
    (tmp_path / ".rmh").mkdir()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(tmp_path / ".rmh" / SOCKET))
        server.listen(1)

        server.settimeout(60.0)  # a client that never asks fails the test, never hangs it
        asked: list[bytes] = []

        def answer() -> None:
            conn, _ = server.accept()
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    data += conn.recv(65536)
                asked.append(data)
                conn.sendall(ANSWERS[name])

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        assert daemon_request(tmp_path, {"event": "prompt", "prompt": "x"}, 30.0) is None
        thread.join(90.0)
        assert not thread.is_alive() and len(asked) == 1  # the daemon was asked, and answered
