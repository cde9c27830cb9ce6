"""A bounded, seeded fuzz run over the served path: random and mutated frames into a real
`rmh serve`. Every frame that is a request gets exactly one answer, everything on stdout is a
well-formed JSON-RPC response, and the server is alive and correct at the end.

Frames are sent one at a time, each followed by a `ping` sentinel with a fresh id; the reader
collects answers until the sentinel's arrives (requests run concurrently, so the answer to a
frame may come after the sentinel's: expected ids are checked at the end). The run stops
after FRAMES frames or BUDGET_S seconds, whichever comes first.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

SEED = 20241201
FRAMES = 300
BUDGET_S = 90.0
METHODS = ["ping", "status", "vault.search", "vault.read", "vault.links", "vault.backlinks",
           "vault.neighbors", "tools/list", "nope.method", "repl.exec", "session.start", ""]
WEIRD = [None, True, 0, -1, 2**63, 1.5, "", "x" * 300, "\ud800", [], {}, [1, [2]], {"a": None}]


def _params(rng: random.Random, method: str) -> Any:
    if method == "vault.search":
        return {"query": rng.choice(["hiking", "auth Monday", "", "\u0000", "[[", "é" * 50]),
                "k": rng.choice([1, 5, 0, 101, "3", None])}
    if method.startswith("vault."):
        return {"note": rng.choice(["Caro", "Lunch", "../etc/passwd", "", "Nobody", 5]),
                "hops": rng.choice([1, 2, -1])}
    if method == "repl.exec":
        return {"code": rng.choice(["1 + 1", "search('noodle')[0]['note']", "x = [", "1/0"])}
    return rng.choice([None, {}, [], {"extra": 1}, rng.choice(WEIRD)])


def _frame(rng: random.Random, rid: str) -> tuple[bytes, list[str]]:
    """One frame and the ids that must be answered because of it."""
    kind = rng.random()
    method = rng.choice(METHODS)
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    params = _params(rng, method)
    if params is not None:
        msg["params"] = params
    if kind < 0.45:  # a well-formed request
        msg["id"] = rid
        return json.dumps(msg).encode() + b"\n", [rid]
    if kind < 0.55:  # a notification: never answered
        return json.dumps(msg).encode() + b"\n", []
    if kind < 0.65:  # a batch of requests and notifications
        items, want = [], []
        for j in range(rng.randint(1, 4)):
            m = dict(msg, method=rng.choice(["ping", "status", "nope"]))
            if rng.random() < 0.7:
                m["id"] = f"{rid}.{j}"
                want.append(m["id"])
            items.append(m)
        return json.dumps(items).encode() + b"\n", want
    if kind < 0.75:  # a request with odd members
        msg["id"] = rid
        msg[rng.choice(["jsonrpc", "method", "params"])] = rng.choice(WEIRD)
        return json.dumps(msg).encode() + b"\n", []
    raw = bytearray(json.dumps(dict(msg, id=rid)).encode())
    for _ in range(rng.randint(1, 6)):  # byte mutations: flips, cuts, insertions
        op, at = rng.random(), rng.randrange(len(raw))
        if op < 0.4:
            raw[at] = rng.randrange(256)
        elif op < 0.7:
            del raw[at:at + rng.randint(1, 8)]
        else:
            raw[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    raw = raw.replace(b"\n", b" ")
    return bytes(raw) + b"\n", []


def _check(msg: Any) -> None:
    assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", msg
    assert "id" in msg and ("result" in msg) != ("error" in msg), msg
    if "error" in msg:
        assert isinstance(msg["error"]["code"], int) and isinstance(msg["error"]["message"], str)


def test_served_fuzz_every_request_answered(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    server = Server(make_vault(tmp_path / "vault"), tmp_path)
    try:
        expected: set[str] = set()
        answered: list[Any] = []
        deadline = time.monotonic() + BUDGET_S
        sent = 0
        while sent < FRAMES and time.monotonic() < deadline:
            frame, want = _frame(rng, f"f{sent}")
            expected.update(want)
            server.send_raw(frame)
            server.send("ping", None, f"sync{sent}")
            while True:
                msg = server.recv()
                items = msg if isinstance(msg, list) else [msg]
                for item in items:
                    _check(item)
                    answered.append(item["id"])
                if isinstance(msg, dict) and msg.get("id") == f"sync{sent}":
                    break
            sent += 1
        assert sent >= 100 and len(expected) >= 100, (sent, len(expected), BUDGET_S)
        assert server.proc.poll() is None
        server.send("vault.search", {"query": "hiking", "k": 1}, "final")
        while True:  # late answers may still come first
            final = server.recv()
            if isinstance(final, dict) and final.get("id") == "final":
                break
        assert final["result"]["hits"][0]["note"] == "people/Caroline.md"
        assert server.finish() == 0
        answered = []
        for line in server.lines:  # everything the server wrote, late answers included
            msg = json.loads(line)
            for item in msg if isinstance(msg, list) else [msg]:
                _check(item)
                answered.append(item["id"])
        missing = expected - {str(a) for a in answered}
        assert not missing, sorted(missing)[:10]
        requests = [a for a in answered if isinstance(a, str) and a in expected]
        assert len(requests) == len(set(requests)), "a request was answered twice"
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
