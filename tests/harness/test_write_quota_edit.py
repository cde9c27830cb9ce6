"""`edit` is a writer: its new text counts against the write quota like `write`'s content; a
writer's arguments are checked once (the charge and the write read the same checked values);
only an operation's own host function can be charged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import harness.operations
import harness.validate
from harness.tools import build_functions, vault_functions
from harness.vault_ops import VaultCalls
from harness.write_quota import WRITERS, WriteLimits, WriteQuota
from sandbox import HostFunction, HostFunctionError
from tests.harness.vault_calls import vault_calls


@pytest.fixture
def calls(tmp_path: Path) -> Iterator[VaultCalls]:
    (tmp_path / "v").mkdir()
    with vault_calls(tmp_path / "v") as calls:
        yield calls


def test_edit_is_charged_its_text(calls: VaultCalls, tmp_path: Path) -> None:
    assert "edit" in WRITERS and "write" in WRITERS
    quota = WriteQuota(WriteLimits(session_bytes=12))
    fns = quota.wrap(build_functions(vault_functions(calls)))
    fns["write"].fn("a", "12345")  # 5 bytes
    fns["edit"].fn("a", "append", text="6")  # the note after it: "12345\n6", 7 bytes
    assert quota.report()["session_bytes"] == 12
    with pytest.raises(HostFunctionError) as refused:
        fns["edit"].fn("a", "append", "x")
    assert refused.value.type_name == "QuotaExceeded"
    assert (tmp_path / "v" / "a.md").read_text("utf-8") == "12345\n6"
    assert quota.report()["session_bytes"] == 12


def test_a_writer_binds_its_arguments_once(calls: VaultCalls,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    binds: list[Any] = []
    real = harness.validate.bind

    def counted(*a: Any) -> dict[str, Any]:
        binds.append(a)
        return real(*a)

    monkeypatch.setattr(harness.operations, "bind", counted)
    fns = WriteQuota(WriteLimits()).wrap(build_functions(vault_functions(calls)))
    fns["write"].fn("b", content="hello")
    assert len(binds) == 1
    with pytest.raises(HostFunctionError) as bad:  # refused by the one bind, charged nothing
        fns["write"].fn("", "x")
    assert bad.value.type_name == "ValueError" and len(binds) == 2


def test_only_an_operations_own_function_is_charged() -> None:
    def write(note: str, content: str) -> dict[str, Any]:
        return {"note": note}

    with pytest.raises(TypeError):
        WriteQuota(WriteLimits()).wrap({"write": HostFunction(write, "Write.", "(note, content)")})
