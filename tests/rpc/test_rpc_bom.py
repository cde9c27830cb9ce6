"""A UTF-8 byte order mark before a frame's JSON is skipped (RFC 8259 section 8.1 lets a parser
ignore it); it was a -32700 "invalid JSON" with id null, so the request it began was lost."""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from rpc import Dispatcher

from .conftest import SPEC_METHODS

BOM = b"\xef\xbb\xbf"
IDS = st.one_of(st.integers(), st.text(max_size=8), st.none())
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                      lambda kids: st.lists(kids, max_size=3), max_leaves=6)


def answer(frame: bytes) -> Any:
    out = anyio.run(Dispatcher(SPEC_METHODS).dispatch, frame)
    return None if out is None else json.loads(out)


@settings(max_examples=60, deadline=None)
@given(rid=IDS, value=VALUES, batch=st.booleans())
def test_a_frame_after_a_byte_order_mark_is_answered_as_without_it(
    rid: Any, value: Any, batch: bool,
) -> None:
    request: Any = {"jsonrpc": "2.0", "method": "echo", "params": [value], "id": rid}
    frame = json.dumps([request] if batch else request).encode()
    got = answer(BOM + frame)
    assert got == answer(frame)
    assert got == ([{"jsonrpc": "2.0", "result": value, "id": rid}] if batch
                   else {"jsonrpc": "2.0", "result": value, "id": rid})


def test_a_notification_after_a_byte_order_mark_gets_no_answer() -> None:
    assert answer(BOM + b'{"jsonrpc":"2.0","method":"echo","params":[1]}') is None


def test_a_byte_order_mark_alone_or_twice_is_still_a_parse_error() -> None:
    for frame in (BOM, BOM + BOM + b'{"jsonrpc":"2.0","method":"echo","id":1}'):
        assert answer(frame)["error"]["code"] == -32700
