"""The one dispatch path, as a pure frame -> frame function: ids, batches, binding, slots, caps.

The same cases run through the served path in `test_rpc_server.py` (in-process server) and
`tests/harness/test_server_protocol.py` (a real `rmh serve`).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rpc import Dispatcher, InFlight

from .conftest import SPEC_METHODS


def call(d: Dispatcher, frame: bytes | str, flight: InFlight | None = None) -> Any:
    raw = frame.encode("utf-8") if isinstance(frame, str) else frame
    out = anyio.run(d.dispatch, raw, flight)
    if out is None:
        return None
    assert out.endswith(b"\n") and out.count(b"\n") == 1
    return json.loads(out)


def req(method: str, rid: Any, *params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": list(params), "id": rid}


def test_repeated_id_in_a_batch_runs_the_first_and_refuses_the_rest(
    dispatcher: Dispatcher,
) -> None:
    out = call(dispatcher, json.dumps([req("echo", 1, "a"), req("echo", 1, "b"),
                                       req("echo", "1", "c"), req("echo", 1, "d")]))
    assert out[0] == {"jsonrpc": "2.0", "result": "a", "id": 1}
    assert out[2] == {"jsonrpc": "2.0", "result": "c", "id": "1"}  # "1" is not 1
    for dup in (out[1], out[3]):
        assert dup["id"] == 1 and dup["error"]["code"] == -32600
        assert dup["error"]["data"]["reason"] == "duplicate id in flight"


def _blocking() -> tuple[anyio.Event, Dispatcher]:
    """A dispatcher whose method `block` answers "released" once the event is set."""
    release = anyio.Event()

    async def block() -> str:
        await release.wait()
        return "released"

    return release, Dispatcher({"block": block, **SPEC_METHODS})


def test_an_id_in_flight_in_another_frame_is_refused_then_free_again() -> None:
    release, d = _blocking()
    answers: list[Any] = []

    async def main() -> None:
        flight = InFlight()

        async def first() -> None:
            answers.append(json.loads(await d.dispatch(json.dumps(req("block", 7)).encode(),
                                                       flight) or b"null"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.sleep(0.01)
            dup = await d.dispatch(json.dumps(req("echo", 7, "x")).encode(), flight)
            answers.append(json.loads(dup or b"null"))
            release.set()
        again = await d.dispatch(json.dumps(req("echo", 7, "y")).encode(), flight)
        answers.append(json.loads(again or b"null"))

    anyio.run(main)
    assert answers[0]["id"] == 7 and answers[0]["error"]["code"] == -32600
    assert answers[1] == {"jsonrpc": "2.0", "result": "released", "id": 7}
    assert answers[2] == {"jsonrpc": "2.0", "result": "y", "id": 7}


@pytest.mark.parametrize("rid", [b"1e400", b"-1e400", b"1E999", b"true", b"[1]", b'{"a":1}'])
def test_ids_that_are_not_finite_numbers_strings_or_null_are_invalid(
    dispatcher: Dispatcher, rid: bytes
) -> None:
    alone = call(dispatcher, b'{"jsonrpc":"2.0","method":"echo","params":[1],"id":' + rid + b"}")
    assert alone["id"] is None and alone["error"]["code"] == -32600
    batch = call(dispatcher, b'[{"jsonrpc":"2.0","method":"echo","params":[1],"id":' + rid
                 + b'},{"jsonrpc":"2.0","method":"echo","params":[2],"id":2},'
                 b'{"jsonrpc":"2.0","method":"echo","params":[3],"id":3}]')
    assert batch[0]["id"] is None and batch[0]["error"]["code"] == -32600
    assert batch[1:] == [{"jsonrpc": "2.0", "result": 2, "id": 2},
                         {"jsonrpc": "2.0", "result": 3, "id": 3}]


def test_nan_id_is_not_json(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, b'[{"jsonrpc":"2.0","method":"echo","id":NaN}]')
    assert out["error"]["code"] == -32700 and out["id"] is None


@pytest.mark.parametrize("params, param", [
    ('{"value": "\\ud800"}', "value"),
    ('["ok \\udfff"]', "value"),
    ('{"value": {"nested": ["a", "\\ud83d"]}}', "value"),
    ('{"value": {"\\udc00key": 1}}', "value"),
])
def test_lone_surrogates_are_invalid_params_naming_the_parameter(
    dispatcher: Dispatcher, params: str, param: str
) -> None:
    out = call(dispatcher, '{"jsonrpc":"2.0","method":"echo","params":' + params + ',"id":1}')
    assert out["id"] == 1 and out["error"]["code"] == -32602
    assert out["error"]["data"]["param"] == param


def test_a_surrogate_pair_is_fine(dispatcher: Dispatcher) -> None:
    out = call(dispatcher, '{"jsonrpc":"2.0","method":"echo","params":["\\ud83d\\ude00"],"id":1}')
    assert out["result"] == "\U0001f600"


@given(length=st.integers(1, 3_000_000))
@settings(max_examples=25, deadline=None)
@example(length=5_000_000)
def test_an_unexpected_parameter_is_named_within_a_bound(length: int) -> None:
    """ADVRPC: the key was echoed whole (twice), so a 5 MB one was `response_too_large`."""
    out = call(Dispatcher({"f": positional_only}, max_frame=8 * 1024 * 1024),
               json.dumps({"jsonrpc": "2.0", "method": "f", "id": 1,
                           "params": {"c": 1, "k" * length: 2}}))
    assert out["error"]["code"] == -32602, out["error"]
    assert out["error"]["data"]["param"] == "k" * min(length, 200)
    assert out["error"]["data"]["reason"] == "unexpected parameter"


async def positional_only(a: int, /, b: int = 0, *, c: int) -> int:
    return a + b + c


@pytest.mark.parametrize("params, param", [
    ([1, 2, 3], "params"),  # too many positional values
    ([1], "c"),  # keyword-only, required
    ({"a": 1, "c": 2}, "a"),  # positional-only given by name
    ({"c": 2}, "a"),  # missing positional-only
])
def test_binding_names_the_parameter_from_the_signature(params: Any, param: str) -> None:
    d = Dispatcher({"f": positional_only})
    out = call(d, json.dumps({"jsonrpc": "2.0", "method": "f", "params": params, "id": 1}))
    assert out["error"]["code"] == -32602 and out["error"]["data"]["param"] == param
    assert "positional_only" not in json.dumps(out)  # no TypeError text passed through


def test_control_methods_and_unknown_methods_never_wait_for_a_slot() -> None:
    release = anyio.Event()
    started = anyio.Event()

    async def block() -> str:
        started.set()
        await release.wait()
        return "released"

    async def ping() -> dict[str, Any]:
        return {}

    d = Dispatcher({"block": block, "ping": ping, "echo": SPEC_METHODS["echo"]},
                   control=("ping",))
    seen: list[Any] = []

    async def main() -> None:
        flight = InFlight(max_running=1)

        async def send(message: Any) -> None:
            seen.append(json.loads(await d.dispatch(json.dumps(message).encode(), flight)
                                   or b"null"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(send, req("block", "slow"))
            await started.wait()
            tg.start_soon(send, req("echo", "queued", 1))  # waits for the one slot
            with anyio.fail_after(5):
                await send(req("ping", "p"))
                await send(req("nope", "n"))
                await send({"jsonrpc": "2.0", "method": "$/cancelRequest",
                            "params": {"id": "queued"}, "id": "c"})
            release.set()

    anyio.run(main)
    ids = [a["id"] for a in seen]
    assert ids[:3] == ["p", "n", "c"] and sorted(ids[3:]) == ["queued", "slow"]
    assert seen[0]["result"] == {} and seen[1]["error"]["code"] == -32601
    assert seen[2]["result"] is None
    queued = next(a for a in seen if a["id"] == "queued")
    assert queued["error"]["code"] == -32800  # cancelled while it waited for the slot


def test_cancel_earlier_in_the_same_batch() -> None:
    async def slow() -> str:
        await anyio.sleep(30)
        return "late"

    d = Dispatcher({"slow": slow})
    out = call(d, json.dumps([req("slow", 1),
                              {"jsonrpc": "2.0", "method": "$/cancelRequest",
                               "params": {"id": 1}}]))
    assert len(out) == 1 and out[0]["id"] == 1 and out[0]["error"]["code"] == -32800


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))


@settings(max_examples=60, deadline=None)
@given(method=st.sampled_from(["$/cancelRequest", "notifications/cancelled"]),
       params=st.one_of(
           st.dictionaries(st.sampled_from(["reason", "ID", "request_id", "requestid", "_meta"]),
                           JSON_SCALARS, max_size=3),
           st.lists(JSON_SCALARS, max_size=3)),
       wrong_key=st.booleans(), notification=st.booleans())
@example(method="$/cancelRequest", params={}, wrong_key=False, notification=True)
@example(method="notifications/cancelled", params={"reason": "x"}, wrong_key=False,
         notification=True)
def test_a_cancel_that_names_no_request_cancels_none(
        method: str, params: Any, wrong_key: bool, notification: bool) -> None:
    """A cancel without the member naming the id (`id` for `$/cancelRequest`, `requestId`
    for MCP's, the other one given instead, or params an array) leaves every request alone,
    the one with id null too (before: the missing member was read as null and cancelled it)."""
    async def quick() -> str:
        await anyio.sleep(0)
        return "done"

    if wrong_key and isinstance(params, dict):
        params = {**params, ("requestId" if method == "$/cancelRequest" else "id"): None}
    cancel: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notification:
        cancel["id"] = "c"
    out = call(Dispatcher({"quick": quick}), json.dumps([req("quick", None), cancel]))
    assert out[0] == {"jsonrpc": "2.0", "result": "done", "id": None}, out


def test_after_close_requests_are_answered_shutting_down(dispatcher: Dispatcher) -> None:
    flight = InFlight()
    flight.close()
    out = call(dispatcher, json.dumps(req("echo", 1, "x")), flight)
    assert out["id"] == 1 and out["error"]["data"]["kind"] == "server_shutting_down"


def test_a_result_that_is_not_json_fails_alone() -> None:
    async def bad() -> Any:
        return {"x": float("inf"), "y": object()}

    d = Dispatcher({"bad": bad, "echo": SPEC_METHODS["echo"]})
    out = call(d, json.dumps([req("bad", 1), req("echo", 2, "fine")]))
    assert out[0] == {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"},
                      "id": 1}
    assert out[1] == {"jsonrpc": "2.0", "result": "fine", "id": 2}


def test_oversize_batch_answers_refuse_the_largest_until_they_fit() -> None:
    async def repeat(text: str, times: int) -> str:
        return text * times

    d = Dispatcher({"repeat": repeat}, max_frame=1000)
    raw = json.dumps([req("repeat", 1, "a", 400), req("repeat", 2, "b", 700),
                      req("repeat", 3, "c", 10)]).encode()
    out = anyio.run(d.dispatch, raw)
    assert out is not None and len(out) <= 1000
    answers = json.loads(out)
    assert answers[0]["result"] == "a" * 400 and answers[2]["result"] == "c" * 10
    assert answers[1]["id"] == 2 and answers[1]["error"]["data"]["kind"] == "response_too_large"


@pytest.mark.parametrize("times", [990, 1_500, 50_000])
@pytest.mark.parametrize("batch", [False, True])
def test_an_oversize_result_of_an_oversize_method_is_its_substitute(times: int,
                                                                    batch: bool) -> None:
    """`oversize`: a method whose result is over the cap answers the result made for the
    limit (MCP tools/call: an isError result), other methods keep response_too_large."""
    async def repeat(text: str, times: int) -> str:
        return text * times

    d = Dispatcher({"repeat": repeat, "tool": repeat}, max_frame=1000,
                   oversize={"tool": lambda limit: {"isError": True, "limit": limit}})
    items = [req("tool", 1, "a", times), req("repeat", 2, "b", times)]
    out = anyio.run(d.dispatch, json.dumps(items if batch else items[0]).encode())
    assert out is not None and len(out) <= 1000
    answers = json.loads(out)
    tool = answers[0] if batch else answers
    assert tool == {"jsonrpc": "2.0", "result": {"isError": True, "limit": 1000}, "id": 1}
    if batch:
        assert answers[1]["error"]["data"]["kind"] == "response_too_large"
    single = anyio.run(d.dispatch, json.dumps(req("tool", 3, "c", 10)).encode())
    assert single is not None and json.loads(single)["result"] == "c" * 10


def test_a_batch_whose_errors_alone_overflow_gets_one_error() -> None:
    d = Dispatcher(SPEC_METHODS, max_frame=4096)
    out = anyio.run(d.dispatch, b"[" + b",".join([b"1"] * 500) + b"]")
    assert out is not None and len(out) <= 4096
    answer = json.loads(out)
    assert answer["id"] is None and answer["error"]["data"]["kind"] == "response_too_large"


def test_a_failing_exception_map_is_an_internal_error() -> None:
    async def fails() -> None:
        raise KeyError("secret")

    def mapper(exc: Exception) -> Any:
        raise RuntimeError("mapper bug")

    out = call(Dispatcher({"fails": fails}, map_exception=mapper),
               '{"jsonrpc":"2.0","method":"fails","id":1}')
    assert out == {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"},
                   "id": 1}


def test_a_batch_holds_no_more_than_its_cap_of_answers() -> None:
    """Each answer of a batch is encoded as it comes, and the largest are refused as soon as
    the array would pass the cap: a batch of 200 requests of 256 KiB answers each under a
    1 MiB cap used to hold all 200 (50 MiB; in `rmh serve`, 300 `vault.read` of a 4 MiB note
    in one 25 KB frame took 2.5 GB) to keep 3 of them."""
    import tracemalloc

    async def big(rid: int) -> str:
        return chr(ord("a") + rid % 26) * (256 << 10)

    d = Dispatcher({"big": big}, max_frame=1 << 20)
    raw = json.dumps([req("big", i, i) for i in range(200)]).encode()
    tracemalloc.start()
    try:
        out = anyio.run(d.dispatch, raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak >> 20} MiB"
    assert out is not None and len(out) <= 1 << 20
    answers = json.loads(out)
    kept = [a["id"] for a in answers if "result" in a]
    # as refusing the largest at the end would: the smallest frames (one-digit ids) are kept,
    # and of equal ones the first are refused
    assert kept == [7, 8, 9]
    assert all(a["error"]["data"]["kind"] == "response_too_large"
               for a in answers if "result" not in a)


RESULTS: list[Any] = [{}, None, 0, "x"]
RESPONSES = [
    *({"jsonrpc": "2.0", "result": result, "id": rid}
      for result in RESULTS for rid in (7, "7", 0, -3, 1.5, "")),
    *({"jsonrpc": "2.0", "error": {"code": code, "message": "m"}, "id": rid}
      for code in (-32600, -32700, 1) for rid in (7, "a", None)),
]
NOT_RESPONSES = [  # still -32600: not the shape of a response
    {"jsonrpc": "2.0", "result": 1, "error": {"code": 1, "message": "m"}, "id": 7},
    {"jsonrpc": "2.0", "result": 1, "id": None},
    {"jsonrpc": "2.0", "result": 1},
    {"jsonrpc": "2.0", "error": "boom", "id": 7},
    {"jsonrpc": "2.0", "error": {"code": "x", "message": "m"}, "id": 7},
    {"jsonrpc": "1.0", "result": 1, "id": 7},
    {"jsonrpc": "2.0", "result": 1, "id": True},
    {"jsonrpc": "2.0", "method": "echo", "result": 1, "id": 7},
    {"foo": "boo"},
]


@pytest.mark.parametrize("response", RESPONSES, ids=json.dumps)
def test_a_response_sent_to_the_server_is_answered_by_nothing(response: dict[str, Any]) -> None:
    """MCP is two-way and this server sends no requests: a response is to nothing of ours.
    Before (MCPRPC, session 28) it was answered -32600 under its id, while the client's own
    request of that id was in flight: two answers for one id."""
    release, d = _blocking()
    answers: list[Any] = []
    rid = response["id"] if response.get("id") is not None else 9

    async def main() -> None:
        flight = InFlight()

        async def own() -> None:
            out = await d.dispatch(json.dumps(req("block", rid)).encode(), flight)
            answers.append(json.loads(out or b"null"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(own)
            await anyio.sleep(0.01)
            answers.append(await d.dispatch(json.dumps(response).encode(), flight))
            batch = [response, req("echo", "b", "x"), response]
            answers.append(json.loads(await d.dispatch(json.dumps(batch).encode(), flight)
                                      or b"null"))
            answers.append(await d.dispatch(json.dumps([response]).encode(), flight))
            release.set()

    anyio.run(main)
    assert answers[0] is None and answers[2] is None, answers
    assert answers[1] == [{"jsonrpc": "2.0", "result": "x", "id": "b"}]
    assert answers[3] == {"jsonrpc": "2.0", "result": "released", "id": rid}


@pytest.mark.parametrize("frame", NOT_RESPONSES, ids=json.dumps)
def test_what_only_looks_like_a_response_is_an_invalid_request(frame: dict[str, Any]) -> None:
    out = call(Dispatcher(SPEC_METHODS), json.dumps(frame))
    assert out["error"]["code"] == -32600, out
