"""The JSON-RPC 2.0 protocol through a real `rmh serve` subprocess, with its real methods.

What runs here, and why it is honest: `rmh serve` exposes only rmh's methods; it has no
`subtract`, `sum` or `get_data`, and no hidden test hook adds them (a hook in the shipped
binary could be switched on by anyone). So
- every specification example whose answer does not depend on those methods' results runs
  unchanged: parse errors, invalid requests, the empty and invalid batches, a call to a
  missing method, and the notifications (to `update`, `foobar`, `notify_*`, which rmh lacks:
  a notification is never answered, found or not, so the spec's answer - none - is the same);
- the spec's mixed batch runs with its methods replaced by rmh's `ping` (the batch's shape,
  its invalid element, its missing method and its notification unchanged);
- the examples that compute (`subtract`, `sum`) run, with the full set, through the very same
  dispatch function in `tests/rpc/test_rpc_spec.py`.
"No answer" is checked by sending a `ping` right after: the next line must be its answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

EXAMPLES = json.loads(
    (Path(__file__).parents[1] / "rpc" / "spec_examples.json").read_text("utf-8")
)
COMPUTING = {"positional 1", "positional 2", "named 1", "named 2", "rpc call Batch"}
SERVED = [e for e in EXAMPLES if e["name"] not in COMPUTING]


def strip_data(message: Any) -> Any:
    if isinstance(message, list):
        return [strip_data(m) for m in message]
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        return {**message, "error": {k: v for k, v in message["error"].items() if k != "data"}}
    return message


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("served")
    srv = Server(make_vault(tmp / "vault"), tmp)
    yield srv
    assert srv.finish() == 0


def answer_to(srv: Server, frame: bytes, tag: str) -> Any:
    """The answer to `frame` (None: it got none), fenced by a ping tagged `tag`."""
    srv.send_raw(frame.replace(b"\n", b" ") + b"\n")
    srv.send("ping", None, tag)
    first = srv.recv()
    if isinstance(first, dict) and first.get("id") == tag:
        return None
    assert srv.recv() == {"jsonrpc": "2.0", "result": {}, "id": tag}
    return first


@pytest.mark.parametrize("example", SERVED, ids=[e["name"] for e in SERVED])
def test_spec_example_served(shared: Server, example: dict[str, Any]) -> None:
    out = answer_to(shared, example["request"].encode("utf-8"), f"fence {example['name']}")
    assert strip_data(out) == example["response"]


def test_spec_mixed_batch_served_with_ping(shared: Server) -> None:
    batch = [
        {"jsonrpc": "2.0", "method": "ping", "params": {}, "id": "1"},
        {"jsonrpc": "2.0", "method": "ping", "params": {}},
        {"jsonrpc": "2.0", "method": "ping", "params": {}, "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "ping", "id": "9"},
    ]
    out = answer_to(shared, json.dumps(batch).encode(), "fence batch")
    assert strip_data(out) == [
        {"jsonrpc": "2.0", "result": {}, "id": "1"},
        {"jsonrpc": "2.0", "result": {}, "id": "2"},
        {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": None},
        {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"},
        {"jsonrpc": "2.0", "result": {}, "id": "9"},
    ]


def test_repeated_id_in_a_batch_served(shared: Server) -> None:
    frame = json.dumps([{"jsonrpc": "2.0", "method": "ping", "id": 1},
                        {"jsonrpc": "2.0", "method": "ping", "id": 1}]).encode()
    first, second = answer_to(shared, frame, "fence dup")
    assert first == {"jsonrpc": "2.0", "result": {}, "id": 1}
    assert second["id"] == 1 and second["error"]["code"] == -32600
    assert second["error"]["data"]["reason"] == "duplicate id in flight"


def test_infinite_id_is_answered_and_never_silences_its_batch(shared: Server) -> None:
    bad, good = answer_to(shared, b'[{"jsonrpc":"2.0","method":"ping","id":1e400},'
                          b'{"jsonrpc":"2.0","method":"ping","id":2}]', "fence inf")
    assert bad["id"] is None and bad["error"]["code"] == -32600
    assert good == {"jsonrpc": "2.0", "result": {}, "id": 2}
    alone = answer_to(shared, b'{"jsonrpc":"2.0","method":"ping","id":1e400}', "fence inf 2")
    assert alone["id"] is None and alone["error"]["code"] == -32600


@pytest.mark.parametrize("method, params, param", [
    ("vault.search", {"query": "\ud800"}, "query"),
    ("vault.write", {"note": "inbox/S", "content": "bad \udfff"}, "content"),
])
def test_lone_surrogate_is_invalid_params_naming_it(
    shared: Server, method: str, params: dict[str, Any], param: str
) -> None:
    # json.dumps writes the lone surrogate as the JSON escape "\ud800": valid JSON text
    out = shared.call(method, params, rid=f"sur {param}")["error"]
    assert out["code"] == -32602 and out["data"]["param"] == param


def test_ping_and_status_overtake_work_waiting_for_a_slot(tmp_path: Path) -> None:
    srv = Server(make_vault(tmp_path / "v"), tmp_path, "--max-in-flight", "1")
    try:
        srv.send("repl.exec", {"code": "import time\ntime.sleep(60)"}, "loop")  # holds the slot
        srv.send("vault.search", {"query": "noodle"}, "queued")  # waits for it
        assert srv.call("ping", rid="p")["result"] == {}  # answered first, not after "queued"
        assert srv.call("status", rid="st")["result"]["index"]["notes"] == 3
        srv.send("$/cancelRequest", {"id": "loop"})
        answers = {a["id"]: a for a in (srv.recv(), srv.recv())}
        assert answers["loop"]["error"]["code"] == -32800
        assert answers["queued"]["result"]["hits"]
    finally:
        assert srv.finish() == 0


def test_answers_over_the_frame_cap_become_errors_for_their_id(tmp_path: Path) -> None:
    srv = Server(make_vault(tmp_path / "v"), tmp_path, "--max-frame", "4096")
    try:
        out = srv.call("repl.exec", {"code": "'x' * 10000"}, rid="big")["error"]
        assert out["data"] == {"kind": "response_too_large", "limit": 4096}
        assert srv.call("ping", rid="after")["result"] == {}
    finally:
        assert srv.finish() == 0
    assert all(len(line) <= 4096 for line in srv.lines)
