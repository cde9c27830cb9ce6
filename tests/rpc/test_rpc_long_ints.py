"""An integer of more digits than Python converts is valid JSON, answered for what it is.

Before (MCPRPC2, session 29; PROTO3, session 30): a frame holding an integer of more than
4,300 digits (`sys.get_int_max_str_digits()`) anywhere was -32700 "invalid JSON" with id null,
the frame's other requests unanswered. Now such an id is -32600 saying so (id null: it cannot
be echoed), such a value in params is -32602 naming the member, echoing the id, a batch's other
elements are answered, and a notification's is answered by nothing.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rpc import Dispatcher

from .conftest import SPEC_METHODS

LIMIT = sys.get_int_max_str_digits()


def literal(digits: int, negative: bool) -> str:
    return ("-" if negative else "") + "7" + "3" * (digits - 1)


def nest(value: str, depth: int) -> str:
    """`value` inside `depth` alternating arrays and objects."""
    for level in range(depth):
        value = f"[{value}]" if level % 2 else f'{{"k":{value}}}'
    return value


def dispatch(frame: str) -> Any:
    import anyio

    out = anyio.run(Dispatcher(SPEC_METHODS).dispatch, frame.encode())
    return None if out is None else json.loads(out)


@settings(max_examples=60, deadline=None)
@given(digits=st.integers(LIMIT + 1, 3 * LIMIT), negative=st.booleans(),
       where=st.sampled_from(["id", "params"]), depth=st.integers(0, 6),
       batch=st.booleans(), notification=st.booleans(), rid=st.sampled_from([1, "a", None]))
def test_a_long_integer_is_named_not_a_parse_error(
        digits: int, negative: bool, where: str, depth: int, batch: bool, notification: bool,
        rid: Any) -> None:
    big = literal(digits, negative)
    if where == "id":
        element = f'{{"jsonrpc":"2.0","method":"echo","params":[1],"id":{big}}}'
    else:
        id_part = "" if notification else f',"id":{json.dumps(rid)}'
        element = (f'{{"jsonrpc":"2.0","method":"echo","params":{{"value":{nest(big, depth)}}}'
                   f'{id_part}}}')
    sibling = '{"jsonrpc":"2.0","method":"echo","params":["sib"],"id":"s"}'
    answer = dispatch(f"[{element},{sibling}]" if batch else element)
    answers = answer if batch else ([] if answer is None else [answer])
    if batch:
        assert answers[-1] == {"jsonrpc": "2.0", "result": "sib", "id": "s"}
        answers = answers[:-1]
    if where == "params" and notification:
        assert answers == []  # a notification is never answered, its errors neither
        return
    (mine,) = answers
    error = mine["error"]
    assert error["code"] == (-32600 if where == "id" else -32602), mine
    reason = error["data"]["reason"]
    assert f"{digits} digits" in reason and str(LIMIT) in reason
    if where == "id":
        assert mine["id"] is None
    else:
        assert mine["id"] == rid and error["data"]["param"] == "value"


@settings(max_examples=10, deadline=None)
@given(negative=st.booleans(), as_id=st.booleans())
def test_an_integer_of_the_limit_is_read(negative: bool, as_id: bool) -> None:
    big = literal(LIMIT, negative)
    if as_id:
        answer = dispatch(f'{{"jsonrpc":"2.0","method":"echo","params":[1],"id":{big}}}')
        assert answer["result"] == 1 and answer["id"] == int(big)
    else:
        answer = dispatch(f'{{"jsonrpc":"2.0","method":"echo","params":[{big}],"id":1}}')
        assert answer["result"] == int(big)
