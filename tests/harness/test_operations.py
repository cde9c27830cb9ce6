"""The operation table and the three surfaces derived from it: names, parameters, bounds, help."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from harness.config import LlmSection
from harness.errors import map_exception
from harness.llm import Broker
from harness.mcp import SCHEMA_MAX_LENGTH, SESSION_TOOLS, TOOLS, mcp_methods
from harness.mcp_sessions import HANDLED_TOOLS
from harness.methods import Harness, method_table
from harness.operations import OPERATIONS, Operation
from harness.rlm_tools import RlmTools
from harness.tools import build_functions, conversation_functions, vault_functions
from harness.validate import REQUIRED, Param, signature_text
from rpc import Dispatcher
from sandbox import HostFunction, Sandbox, SandboxConfig


@pytest.fixture
def repl_table(harness: Harness) -> Iterator[dict[str, HostFunction]]:
    with Broker.from_config(LlmSection()) as broker:
        yield build_functions(vault_functions(harness.ops), conversation_functions(harness.ops),
                              RlmTools(broker).functions(harness.ops))


def rpc(h: Harness, method: str, params: Any) -> Any:
    d = Dispatcher({**method_table(h), **mcp_methods(h)}, map_exception=map_exception)
    frame = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
    out = anyio.run(d.dispatch, frame.encode())
    assert out is not None
    return json.loads(out)


def on(surface: str) -> list[Operation]:
    return [op for op in OPERATIONS if getattr(op, surface) is not None]


def test_names_are_unique_and_control_stays_off_the_repl() -> None:
    for surface in ("rpc", "mcp", "repl"):
        names = [getattr(op, surface) for op in on(surface)]
        assert len(names) == len(set(names)), surface
    assert len({op.name for op in OPERATIONS}) == len(OPERATIONS)
    assert not [op.name for op in OPERATIONS if op.part == "control" and op.repl is not None]


def test_each_operation_runs_a_method_taking_its_parameters_by_name(harness: Harness) -> None:
    """`run` names a method of the part's target; called by name with every declared
    parameter, it accepts them all (and nothing else is required)."""
    for bound in harness.bound():
        op = bound.op
        sig = inspect.signature(bound.method)
        assert bound.method.__name__ == op.run, op.name
        sig.bind(**{p.name: None for p in op.params})  # TypeError: a parameter it lacks
        required = {n for n, p in sig.parameters.items() if p.default is inspect.Parameter.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        assert required <= {p.name for p in op.params}, op.name
        if op.writes is not None:
            names = [p.name for p in op.params]
            assert op.writes.note in names and op.writes.content in names, op.name


def test_each_rpc_method_takes_the_declared_parameters(harness: Harness) -> None:
    table = method_table(harness)
    assert set(table) == {op.rpc for op in on("rpc")} | {"ping"}
    for op in on("rpc"):
        params = inspect.signature(table[str(op.rpc)]).parameters
        assert [(p.name, p.default) for p in params.values()] == [
            (p.name, inspect.Parameter.empty if p.required else p.default) for p in op.params]


def test_each_mcp_tool_schema_is_its_declaration() -> None:
    tools = {t["name"]: t for t in TOOLS}
    assert set(tools) == {op.mcp for op in on("mcp")} | SESSION_TOOLS
    for op in on("mcp"):
        schema = tools[str(op.mcp)]["inputSchema"]
        assert schema["additionalProperties"] is False
        handle = ["session"] if op.mcp in HANDLED_TOOLS else []  # harness.mcp_sessions
        assert list(schema["properties"]) == [p.name for p in op.params] + handle
        assert schema["required"] == [p.name for p in op.params if p.required]
        for p in op.params:
            prop = schema["properties"][p.name]
            assert prop.get("default") == (None if p.default is REQUIRED else p.default)
            assert prop.get("minimum") == p.minimum and prop.get("maximum") == p.maximum
            if p.kind == "string" and p.choices is None:  # a long bound is left out
                long = p.max_length is not None and p.max_length >= SCHEMA_MAX_LENGTH
                assert prop.get("maxLength") == (None if long else p.max_length)
            elif p.choices is not None:
                assert prop["enum"] == list(p.choices) and "maxLength" not in prop
        hints = tools[str(op.mcp)]["annotations"]
        assert hints == {"readOnlyHint": op.read_only,
                         "destructiveHint": op.destructive, "idempotentHint": op.idempotent,
                         "openWorldHint": op.open_world}
        assert op.title and tools[str(op.mcp)]["title"] == op.title
        # a tool that records usage for learning says so, precisely, in its description
        learns = "logged for learning" in tools[str(op.mcp)]["description"]
        assert learns is op.learns, op.name


def test_json_rpc_and_mcp_take_the_same_parameters() -> None:
    tools = {t["name"]: t for t in TOOLS}
    for op in on("mcp"):
        if op.rpc is not None:
            handle = ["session"] if op.mcp in HANDLED_TOOLS else []
            assert list(tools[str(op.mcp)]["inputSchema"]["properties"]) == [
                p.name for p in op.params] + handle
    assert "conversation" in tools["context"]["inputSchema"]["properties"]
    assert "deadline_s" in tools["exec"]["inputSchema"]["properties"]


def test_each_repl_function_has_the_declared_signature(
    repl_table: dict[str, HostFunction]
) -> None:
    assert set(repl_table) == {op.repl for op in on("repl")}
    for op in on("repl"):
        fn = repl_table[str(op.repl)]
        assert fn.signature == signature_text(op.params, op.returns)
        params = inspect.signature(fn.fn).parameters
        assert [(p.name, p.default) for p in params.values()] == [
            (p.name, inspect.Parameter.empty if p.required else p.default) for p in op.params]


def test_help_text_is_a_clean_signature_and_docstring(
    repl_table: dict[str, HostFunction]
) -> None:
    assert repl_table["read"].signature == "(note: str) -> dict"
    # issue 14 added explain; issue 13 as_of / learn (keyword-only: positional calls unchanged)
    assert repl_table["search"].signature == (
        "(query: str, k: int = 10, explain: bool = False, *, as_of: float | None = None, "
        "learn: bool = True, history: bool = False) -> list[dict]")
    assert repl_table["rlm_call"].signature == (
        "(slice, question: str, *, max_words: int | None = None) -> str")
    for op in on("repl"):
        fn = repl_table[str(op.repl)]
        first, *rest = fn.doc.split("\n\n", 1)
        assert first == op.summary and "\n" not in first
        assert rest == ([op.doc] if op.doc else [])
        assert f"{op.repl}(" not in fn.doc and "->" not in first


def test_help_inside_the_sandbox_shows_the_signature_once(harness: Harness) -> None:
    sb = Sandbox(SandboxConfig(lint=False), vault_functions(harness.ops))
    try:
        out = sb.exec("help(read)")
    finally:
        sb.close()
    assert out.ok, out.error
    assert "read(note: str) -> dict" in out.stdout and "readread" not in out.stdout
    assert "Read one note: text, frontmatter, tags and links." in out.stdout


def bad_values(p: Param) -> list[Any]:
    """Values the declaration of `p` rejects."""
    if p.kind == "integer":
        out: list[Any] = ["1", True]
        out += [p.minimum - 1] if p.minimum is not None else []
        return out + ([p.maximum + 1] if p.maximum is not None else [])
    if p.kind == "boolean":
        return ["true", 1]
    if p.kind in ("string", "date"):
        out = [3] + (["nope"] if p.choices is not None else [])
        out += [] if p.blank_ok else [""]
        return out + ([" " + "x" * p.max_length] if p.max_length is not None else [])
    return []


def minimal(op: Operation) -> dict[str, Any]:
    samples = {"string": "Alpha", "integer": 1, "date": "2024-01-01", "json": "{}", "any": "x"}
    return {p.name: p.choices[0] if p.choices else samples[p.kind]
            for p in op.params if p.required}


@pytest.mark.parametrize("op", on("mcp"), ids=lambda op: op.name)
def test_schema_and_both_surfaces_reject_the_same_arguments(harness: Harness,
                                                            op: Operation) -> None:
    jsonschema = pytest.importorskip("jsonschema")  # installed with the mcp dev dependency
    schema = next(t["inputSchema"] for t in TOOLS if t["name"] == op.mcp)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(minimal(op))
    cases = [(p.name, {**minimal(op), p.name: v}) for p in op.params for v in bad_values(p)]
    cases += [(p.name, {k: v for k, v in minimal(op).items() if k != p.name})
              for p in op.params if p.required]
    cases.append(("nope", {**minimal(op), "nope": 1}))
    for param, args in cases:
        value, bound = args.get(param), next((p.max_length for p in op.params
                                              if p.name == param), None)
        past_long_bound = (isinstance(value, str) and bound is not None
                           and bound >= SCHEMA_MAX_LENGTH and len(value) > bound)
        # a bound the MCP schema leaves out (harness.mcp.compact) is the server's alone
        assert validator.is_valid(args) is past_long_bound, (param, args)
        if op.rpc is not None:
            err = rpc(harness, op.rpc, args)["error"]
            assert err["code"] == -32602 and err["data"]["param"] == param, (param, err)
        tool = rpc(harness, "tools/call", {"name": op.mcp, "arguments": args})["result"]
        assert tool["isError"] is True, (param, tool)
        assert tool["structuredContent"]["error"]["param"] == param
        assert param in tool["content"][0]["text"]


def test_repl_rejects_what_the_other_surfaces_reject(
    repl_table: dict[str, HostFunction]
) -> None:
    from sandbox import HostFunctionError

    for op in on("repl"):
        for p in op.params:
            for value in bad_values(p):
                with pytest.raises(HostFunctionError) as caught:
                    repl_table[str(op.repl)].fn(**{**minimal(op), p.name: value})
                assert caught.value.type_name == "ValueError"
                assert caught.value.message.startswith(p.name + ":")


def test_repl_search_keeps_its_projection(harness: Harness) -> None:
    full = rpc(harness, "vault.search", {"query": "Beta", "k": 2})["result"]["hits"]
    short = vault_functions(harness.ops)["search"].fn("Beta", k=2)
    assert [h["note"] for h in short] == [h["note"] for h in full]
    assert short == full  # compact on every surface: the REPL shows what JSON-RPC returns
    assert all(set(h) == {"note", "title", "score", "id", "snippet"} for h in short)
    assert all("Beta" in h["snippet"] for h in short[:1])
