"""A method named like an MCP notification, sent with an id, is refused -32601 and not run.

JSON-RPC 2.0: a message with an id is a request. MCP defines every `notifications/*` method
only as a notification; the official Python SDK (mcp 2.3.0, `server/runner.py`) looks a
request's method up among its request handlers, finds none, and answers -32601 "Method not
found" without running the notification's handler. rmh refused only `notifications/cancelled`
so (PROTO3); `notifications/initialized` with an id was run and answered `result: null`, other
names -32601 without saying why (PROTO4, session 30). Sent without an id, each is handled as a
notification and answered by nothing.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from rpc import Dispatcher, InFlight

# The client notifications MCP defines (the SDK's SPEC_CLIENT_NOTIFICATION_METHODS), the
# server's, and names MCP does not define.
NOTIFICATIONS = ("notifications/initialized", "notifications/progress",
                 "notifications/roots/list_changed", "notifications/cancelled",
                 "notifications/message", "notifications/resources/updated",
                 "notifications/tools/list_changed", "notifications/x", "notifications/")
IDS = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=6),
                st.floats(allow_nan=False, allow_infinity=False, width=32))


@settings(max_examples=60, deadline=None)
@given(method=st.sampled_from(NOTIFICATIONS), rid=IDS, batch=st.booleans(),
       params=st.sampled_from([None, {}, {"requestId": 1}, {"progressToken": "t"}]))
def test_a_notification_sent_with_an_id_is_refused_and_not_run(
        method: str, rid: Any, batch: bool, params: Any) -> None:
    ran: list[str] = []

    def handler(name: str) -> Any:
        async def run(**_ignored: Any) -> None:
            ran.append(name)
        return run

    async def ping() -> str:
        return "pong"

    table = {name: handler(name) for name in NOTIFICATIONS if name != "notifications/cancelled"}
    dispatcher = Dispatcher({**table, "ping": ping})
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": rid}
    if params is not None:
        message["params"] = params
    ping_id = f"p{rid}"
    frame = [message, {"jsonrpc": "2.0", "method": "ping", "id": ping_id}] if batch else message

    async def main() -> Any:
        return await dispatcher.dispatch(json.dumps(frame).encode(), InFlight())

    out = anyio.run(main)
    answers = json.loads(out)
    answers = answers if batch else [answers]
    mine = [a for a in answers if a["id"] == rid and a["id"] != ping_id]
    assert len(mine) == 1, answers
    assert mine[0]["error"]["code"] == -32601, mine
    assert mine[0]["error"]["data"]["method"] == method
    assert "without an id" in mine[0]["error"]["data"]["reason"]
    assert ran == []
    if batch:
        assert [a["result"] for a in answers if a["id"] == ping_id] == ["pong"]

    notification = {k: v for k, v in message.items() if k != "id"}

    async def as_notification() -> Any:
        return await dispatcher.dispatch(json.dumps(notification).encode(), InFlight())

    assert anyio.run(as_notification) is None
    assert ran == ([method] if method in table else [])
