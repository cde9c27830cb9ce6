"""`edit` is a writer: its new text counts against the write quota like `write`'s content."""

from __future__ import annotations

from typing import Any

import pytest

from harness.write_quota import WRITERS, WriteLimits, WriteQuota
from sandbox import HostFunction, HostFunctionError


def test_edit_is_charged_its_text() -> None:
    assert "edit" in WRITERS and "write" in WRITERS
    done: list[tuple[Any, ...]] = []

    def edit(note: str, kind: str, text: str = "") -> dict[str, Any]:
        done.append((note, kind, text))
        return {"note": note}

    quota = WriteQuota(WriteLimits(session_bytes=10))
    fn = quota.wrap({"edit": HostFunction(edit, "Edit.", "(note, kind, text)")})["edit"].fn
    fn("a", "append", "12345")
    fn("a", "append", text="12345")
    with pytest.raises(HostFunctionError) as refused:
        fn("a", "append", "x")
    assert refused.value.type_name == "QuotaExceeded" and len(done) == 2
    assert quota.report()["session_bytes"] == 10
