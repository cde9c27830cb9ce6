"""One error map, three surfaces: the same failure is classified the same way on each."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.config import load
from harness.errors import (
    BadArgument,
    BadShape,
    Refused,
    classify,
    map_exception,
    to_mcp,
    to_repl,
    to_rpc,
)
from harness.mcp import mcp_methods
from harness.methods import Harness, Repl, method_table
from harness.tools import vault_functions
from rpc import Dispatcher
from sandbox import HostFunction, HostFunctionError, SandboxError
from vault import NoteNotFound, NoteSkipped, Vault

# A host path that must never reach a client (built here: no machine's path in the repository).
SECRET = str(Path(tempfile.gettempdir()) / "someone" / "secret-token-123")


def no_tier(functions: Mapping[str, HostFunction]) -> Repl:
    raise SandboxError("no sandbox tier works here")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Alpha.md").write_text("Alpha.\n", encoding="utf-8")
    vault = Vault.init(root)
    h = Harness(load(vault=root, env={}), vault, repl_factory=no_tier)
    yield h
    anyio.run(h.shutdown)


def rpc(h: Harness, method: str, params: Any) -> Any:
    d = Dispatcher({**method_table(h), **mcp_methods(h)}, map_exception=map_exception)
    frame = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
    out = anyio.run(d.dispatch, frame.encode())
    assert out is not None
    return json.loads(out)


CASES: list[tuple[Exception, str, int, str]] = [
    (NoteNotFound("Gamma"), "domain", -32003, "NoteNotFound"),
    (NoteSkipped("b", "b.md", "binary"), "domain", -32015, "NoteSkipped"),
    (BadArgument("k", "must be between 1 and 100"), "bad_argument", -32602, "ValueError"),
    (BadShape("slice must be text"), "bad_shape", -32602, "TypeError"),
    (SandboxError("no sandbox tier works here"), "domain", -32020, "SandboxError"),
    (Refused("no_session", "call session.start first"), "domain", -32041, "Refused"),
    (RuntimeError(f"bug near {SECRET}"), "internal", -32603, "HostError"),
]


@pytest.mark.parametrize("exc, kind, code, repl_type", CASES,
                         ids=[type(c[0]).__name__ for c in CASES])
def test_one_classification_three_renderings(exc: Exception, kind: str, code: int,
                                             repl_type: str) -> None:
    assert classify(exc) == kind
    error = to_rpc(exc)
    assert error.code == code
    assert (map_exception(exc) is None) == (kind == "internal")
    tool = to_mcp(exc)
    assert tool["isError"] is True and same_error(tool, error.to_json(), kind)
    repl = to_repl(exc)
    assert repl.type_name == repl_type
    for text in (json.dumps(error.to_json()), json.dumps(tool), repl.message):
        assert SECRET not in text


def same_error(tool: dict[str, Any], err: dict[str, Any], kind: str = "") -> bool:
    """The MCP tool error carries the JSON-RPC error's code and data in the one structured
    form {"error": {"kind", "message", "code", ...data}}, mirrored as its text."""
    got = tool["structuredContent"]["error"]
    data = dict(err.get("data") or {})
    assert got["kind"] == data.pop("kind", kind) and got["code"] == err["code"]
    assert all(got[k] == v for k, v in data.items()) and got["message"]
    assert json.loads(tool["content"][0]["text"]) == tool["structuredContent"]
    return True


def test_note_not_found_on_every_surface(harness: Harness) -> None:
    err = rpc(harness, "vault.read", {"note": "Gamma"})["error"]
    assert err["code"] == -32003 and err["data"] == {"kind": "note_not_found", "note": "Gamma"}
    tool = rpc(harness, "tools/call", {"name": "read", "arguments": {"note": "Gamma"}})["result"]
    assert tool["isError"] is True and same_error(tool, err)
    with pytest.raises(HostFunctionError) as caught:
        vault_functions(harness.ops)["read"].fn("Gamma")
    assert caught.value.type_name == "NoteNotFound" and "Gamma" in caught.value.message


def test_bad_argument_on_every_surface(harness: Harness) -> None:
    err = rpc(harness, "vault.search", {"query": "a", "k": 0})["error"]
    assert err["code"] == -32602 and err["data"]["param"] == "k"
    args = {"name": "search", "arguments": {"query": "a", "k": 0}}
    tool = rpc(harness, "tools/call", args)["result"]
    assert tool["isError"] is True and same_error(tool, err, "bad_argument")
    assert tool["structuredContent"]["error"]["message"] == (
        "bad argument k: must be between 1 and 100")
    with pytest.raises(HostFunctionError) as caught:
        vault_functions(harness.ops)["search"].fn("a", k=0)
    assert caught.value.type_name == "ValueError" and caught.value.message.startswith("k:")


def test_sandbox_error_on_the_surfaces_that_exec(harness: Harness) -> None:
    err = rpc(harness, "repl.exec", {"code": "1"})["error"]
    assert err["code"] == -32020 and err["data"]["kind"] == "sandbox_error"
    tool = rpc(harness, "tools/call", {"name": "exec", "arguments": {"code": "1"}})["result"]
    assert tool["isError"] is True and same_error(tool, err)


def test_unexpected_exception_leaks_no_text(harness: Harness,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(note: str) -> dict[str, Any]:
        raise RuntimeError(f"bug near {SECRET}")

    monkeypatch.setattr(harness.ops, "read", broken)
    out = rpc(harness, "vault.read", {"note": "Alpha"})
    assert out["error"] == {"code": -32603, "message": "Internal error"}
    tool = rpc(harness, "tools/call", {"name": "read", "arguments": {"note": "Alpha"}})["result"]
    assert tool["isError"] is True and same_error(tool, out["error"], "internal")
    with pytest.raises(HostFunctionError) as caught:
        vault_functions(harness.ops)["read"].fn("Alpha")
    assert caught.value.type_name == "HostError"
    assert SECRET not in json.dumps([out, tool, caught.value.message])


def test_skipped_file_on_the_rpc_surface(harness: Harness) -> None:
    (harness.vault.root / "blob.md").write_bytes(b"\x00\x01")
    harness.vault.live.sync()
    err = rpc(harness, "vault.read", {"note": "blob.md"})["error"]
    assert err["code"] == -32015 and err["data"]["kind"] == "note_skipped"
    assert err["data"]["path"] == "blob.md" and "binary" in err["data"]["reason"]
