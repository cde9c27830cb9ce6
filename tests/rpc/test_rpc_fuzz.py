"""Fuzzing whole frames: the dispatcher answers correctly or not at all, and never raises."""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rpc import Dispatcher

from .conftest import SPEC_METHODS

DISPATCHER = Dispatcher(SPEC_METHODS)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids,
                                                              max_size=3),
    max_leaves=10,
)
request_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2.0, None]),
        "method": st.sampled_from(list(SPEC_METHODS)) | st.text(max_size=6) | json_values,
        "params": json_values,
        "id": json_values,
    },
)


def check_response(r: Any) -> None:
    assert isinstance(r, dict) and r.get("jsonrpc") == "2.0"
    assert "id" in r and ("result" in r) != ("error" in r)
    if "error" in r:
        assert isinstance(r["error"]["code"], int) and isinstance(r["error"]["message"], str)
        assert "secret" not in json.dumps(r)


def run(frame: bytes) -> Any:
    out = anyio.run(DISPATCHER.dispatch, frame)
    if out is None:
        return None
    assert out.endswith(b"\n") and out.count(b"\n") == 1
    return json.loads(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes_never_crash(frame: bytes) -> None:
    out = run(frame)
    if out is not None:
        for r in out if isinstance(out, list) else [out]:
            check_response(r)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request_like | st.lists(request_like | json_values, max_size=5) | json_values)
def test_request_shaped_frames_answer_each_request_once(message: Any) -> None:
    out = run(json.dumps(message).encode())
    items = message if isinstance(message, list) and message else [message]
    answers = out if isinstance(out, list) else ([] if out is None else [out])
    for r in answers:
        check_response(r)
    # every element with a valid id and a valid shape is answered exactly once, by its id
    ids = [i.get("id") for i in items if isinstance(i, dict) and i.get("jsonrpc") == "2.0"
           and isinstance(i.get("method"), str) and "id" in i
           and isinstance(i.get("params", []), (list, dict))
           and (i["id"] is None or type(i["id"]) in (str, int, float))]
    answered = [r["id"] for r in answers]
    for rid in ids:
        assert rid in answered
    if isinstance(message, list) and message:
        assert out is None or isinstance(out, list)
