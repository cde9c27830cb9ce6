"""Hostile values a JSON frame can carry, in every parameter of every JSON-RPC method and MCP
tool: the answer is a typed error or a result, never -32603 (an internal error: a bug the
client cannot act on) and never a traceback.

Generated (hypothesis) over the operation table: numbers past the float range (`1` and 400
zeros decodes to an int that `float()` and `math.isfinite` raise OverflowError on), numbers
near the 4,300-digit limit of int-to-str, arrays nested near and past the decoder's recursion
limit, and the same as JSON *text* inside a string (what `vault.ingest` decodes itself).
Before ADVRPC (session 26): `vault.search` with `as_of` = 10**400 and `vault.ingest` of
`[[[…` 3,000 deep or of a 5,000-digit number were -32603 (MCP: `isError` kind "internal").
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.errors import map_exception
from harness.mcp import mcp_methods
from harness.methods import Harness, method_table
from harness.operations import OPERATIONS, Operation
from rpc import Dispatcher

# operations that run code in the sandbox: its own tests (tests/sandbox) cover cells
SKIP = frozenset({"exec", "reset"})
CASES = [(op, p.name) for op in OPERATIONS if op.name not in SKIP
         and (op.rpc is not None or op.mcp is not None) for p in op.params]
SAMPLES = {"string": "Alpha", "integer": 1, "number": 1.0, "boolean": True,
           "date": "2024-01-01", "json": "{}", "any": "Alpha"}
HOLE = "@@HOSTILE@@"


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# raw JSON fragments (spliced into the frame as they are)
RAW = st.one_of(
    st.integers(300, 4299).map(lambda n: "1" + "0" * n),
    st.integers(300, 4299).map(lambda n: "-9" + "0" * n),
    st.sampled_from(["1e400", "-1e400", "-0", "-0.0", "5e-324", "1.7976931348623157e308"]),
    st.integers(1, 3000).map(_nested),
    st.integers(1, 1200).map(lambda n: '{"a":' * n + "1" + "}" * n),
)
# JSON text inside a JSON string: what a parameter that decodes JSON itself receives
TEXT = st.one_of(
    st.integers(4200, 6000).map(lambda n: "1" * n),
    st.integers(900, 4000).map(_nested),
    st.integers(900, 4000).map(lambda n: '{"messages":' + _nested(n) + "}"),
    st.integers(900, 4000).map(lambda n: '{"type":"user","sessionId":"s","message":'
                               + _nested(n) + "}"),
    st.sampled_from(["NaN", "[Infinity]", '{"a": -Infinity}', "[1e400]"]),
).map(json.dumps)


def _frame(op: Operation, param: str, fragment: str, mcp: bool) -> bytes:
    args: dict[str, Any] = {p.name: p.choices[0] if p.choices else SAMPLES[p.kind]
                            for p in op.params if p.required}
    args[param] = HOLE
    if mcp:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": op.mcp, "arguments": args}}
    else:
        msg = {"jsonrpc": "2.0", "id": 1, "method": op.rpc, "params": args}
    return json.dumps(msg).replace(json.dumps(HOLE), fragment).encode()


def _answer(harness: Harness, frame: bytes) -> Any:
    d = Dispatcher({**method_table(harness), **mcp_methods(harness)},
                   map_exception=map_exception)
    out = anyio.run(d.dispatch, frame)
    assert out is not None
    return json.loads(out)


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(CASES), fragment=st.one_of(RAW, TEXT), mcp=st.booleans())
@example(case=next(c for c in CASES if c[1] == "as_of"), fragment="1" + "0" * 400, mcp=False)
@example(case=next(c for c in CASES if c[1] == "as_of"), fragment="-1" + "0" * 400, mcp=True)
@example(case=next(c for c in CASES if c[1] == "conversation"),
         fragment=json.dumps(_nested(3000)), mcp=False)
@example(case=next(c for c in CASES if c[1] == "conversation"),
         fragment=json.dumps("1" * 5000), mcp=False)
@example(case=next(c for c in CASES if c[1] == "conversation"),
         fragment=json.dumps('{"type":"user","sessionId":"s"}\n' + _nested(3000)), mcp=False)
def test_no_hostile_value_is_an_internal_error(harness: Harness, case: tuple[Operation, str],
                                               fragment: str, mcp: bool) -> None:
    op, param = case
    if (op.mcp if mcp else op.rpc) is None:
        return
    out = _answer(harness, _frame(op, param, fragment, mcp))
    text = json.dumps(out)
    assert "Traceback" not in text, text[:500]
    if "error" in out:
        assert out["error"]["code"] != -32603, (op.name, param, fragment[:80], out)
    elif mcp and out["result"].get("isError"):
        error = out["result"]["structuredContent"]["error"]
        assert error["kind"] != "internal", (op.name, param, fragment[:80], error)
