"""Edge cases of request validation and dispatch beyond the spec's examples."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from rpc import Dispatcher, RpcError, application_error, parse_frame
from rpc.errors import APPLICATION_CODES
from rpc.messages import MAX_BATCH

from .conftest import SPEC_METHODS


def call(dispatcher: Dispatcher, frame: bytes | str) -> Any:
    raw = frame.encode("utf-8") if isinstance(frame, str) else frame
    out = anyio.run(dispatcher.dispatch, raw)
    return None if out is None else json.loads(out)


def test_jsonrpc_1_0_is_invalid_request_with_its_id(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, '{"jsonrpc": "1.0", "method": "get_data", "id": 7}')
    assert out["error"]["code"] == -32600 and out["id"] == 7


def test_missing_jsonrpc_member_is_invalid(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, '{"method": "get_data", "id": 1}')
    assert out["error"]["code"] == -32600


@pytest.mark.parametrize("rid", ["abc", 0, -5, 2**70, 1.5, None, "", "\u2028x"])
def test_valid_odd_ids_are_echoed_exactly(dispatcher: Dispatcher, rid: Any) -> None:
    out = call(dispatcher, json.dumps({"jsonrpc": "2.0", "method": "get_data", "id": rid}))
    assert out == {"jsonrpc": "2.0", "result": ["hello", 5], "id": rid}
    assert type(out["id"]) is type(rid)


@pytest.mark.parametrize("rid", [True, False, [1], {"a": 1}])
def test_invalid_id_types_are_refused_with_null_id(dispatcher: Dispatcher, rid: Any) -> None:
    out = call(dispatcher, json.dumps({"jsonrpc": "2.0", "method": "get_data", "id": rid}))
    assert out["error"]["code"] == -32600 and out["id"] is None


def test_params_must_be_structured(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, '{"jsonrpc": "2.0", "method": "echo", "params": 3, "id": 1}')
    assert out["error"]["code"] == -32600 and out["id"] == 1


def test_unknown_method_names_it(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, '{"jsonrpc": "2.0", "method": "rpc.discover", "id": 1}')
    assert out["error"] == {
        "code": -32601, "message": "Method not found", "data": {"method": "rpc.discover"}
    }


def test_bad_params_name_the_parameter(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, '{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1},"id":1}')
    assert out["error"]["code"] == -32602 and out["error"]["data"]["param"] == "subtrahend"
    out = call(dispatcher, '{"jsonrpc":"2.0","method":"get_data","params":{"zz":1},"id":2}')
    assert out["error"]["code"] == -32602 and out["error"]["data"]["param"] == "zz"


def test_internal_errors_leak_no_text(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, '{"jsonrpc":"2.0","method":"explode","id":1}')
    assert out == {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"},
                   "id": 1}


def test_notification_of_failing_method_gets_no_answer(dispatcher: Dispatcher) -> None:
    assert call(dispatcher, '{"jsonrpc":"2.0","method":"explode"}') is None
    assert call(dispatcher, '{"jsonrpc":"2.0","method":"nope"}') is None


@pytest.mark.parametrize(
    "frame, reason",
    [
        (b"\xff\xfe{}", "invalid UTF-8"),
        (b'{"jsonrpc":"2.0","method":"echo","params":[NaN],"id":1}', "invalid JSON"),
        (b"Content-Length: 41", "a Content-Length header: this server reads one JSON message "
         "per line (newline-delimited, as MCP's stdio transport), not LSP framing"),
        (b" content-length:12", "a Content-Length header: this server reads one JSON message "
         "per line (newline-delimited, as MCP's stdio transport), not LSP framing"),
        (b'{"jsonrpc":"2.0","method":"echo","id":1}{"jsonrpc":"2.0","method":"echo","id":2}',
         "more than one JSON value on the line: write one message per line"),
        (b'{"jsonrpc":"2.0","method":"echo","id":1}Content-Length: 41',
         "more than one JSON value on the line: write one message per line"),
        (b'[] 1', "more than one JSON value on the line: write one message per line"),
        (b"Content-Type: application/json", "invalid JSON"),
        (b'{"jsonrpc":"2.0"', "invalid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nesting too deep"),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "nesting too deep"),
    ],
)
def test_parse_errors(dispatcher: Dispatcher, frame: bytes, reason: str) -> None:
    out = call(dispatcher, frame)
    assert out["error"]["code"] == -32700 and out["id"] is None
    assert out["error"]["data"]["reason"] == reason


def test_response_objects_are_not_requests(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, '{"jsonrpc":"2.0","method":"echo","result":1,"id":1}')
    assert out["error"]["code"] == -32600


def test_oversize_response_becomes_an_error_for_its_id() -> None:
    small = Dispatcher(SPEC_METHODS, max_frame=100)
    out = call(small, json.dumps({"jsonrpc": "2.0", "method": "echo", "params": ["x" * 200],
                                  "id": 9}))
    assert out["id"] == 9 and out["error"]["code"] == APPLICATION_CODES["response_too_large"][0]


def test_domain_errors_map_through_the_hook() -> None:
    class Missing(Exception):
        code_name = "note_not_found"

    async def fails() -> None:
        raise Missing()

    def mapper(exc: Exception) -> RpcError | None:
        return application_error("note_not_found", {"note": "x"}) if isinstance(exc, Missing) \
            else None

    d = Dispatcher({"fails": fails}, map_exception=mapper)
    out = call(d, '{"jsonrpc":"2.0","method":"fails","id":1}')
    assert out["error"] == {"code": -32003, "message": "Note not found",
                            "data": {"kind": "note_not_found", "note": "x"}}


def test_application_codes_are_unique_and_in_range() -> None:
    codes = [c for c, _ in APPLICATION_CODES.values()]
    assert len(codes) == len(set(codes))
    assert all(-32099 <= c <= -32000 for c in codes)


def test_blank_frame_parses_to_invalid_json() -> None:
    assert parse_frame(b"   ").error is not None


def test_a_batch_over_its_element_cap_is_one_error_and_runs_nothing() -> None:
    """MAX_BATCH elements are answered one by one; one more is one error with id null (as an
    empty batch), before any element is looked at: a frame of 2.8 million `{}` cost ~1.7 GB
    and ~60 s of CPU in per-element work and error answers (REV-B)."""
    ran: list[int] = []

    async def count(n: int) -> int:
        ran.append(n)
        return n

    d = Dispatcher({"count": count}, max_frame=64 << 20)
    item = '{"jsonrpc":"2.0","method":"count","params":[1],"id":%d}'
    whole = call(d, "[" + ",".join(item % i for i in range(MAX_BATCH)) + "]")
    assert len(whole) == MAX_BATCH and len(ran) == MAX_BATCH
    ran.clear()
    over = call(d, "[" + ",".join(item % i for i in range(MAX_BATCH + 1)) + "]")
    assert over["id"] is None and over["error"]["code"] == -32600
    assert over["error"]["data"]["reason"] == (
        f"batch too large ({MAX_BATCH + 1} elements; at most {MAX_BATCH})")
    assert ran == []
    huge = call(d, b"[" + b",".join([b"{}"] * 2_800_000) + b"]")
    assert huge["error"]["code"] == -32600 and huge["id"] is None
