"""`correct` writes notes too, and is charged for them (harness/write_quota.py). Before, it
was no writer: one REPL cell of 260 `correct(..., "supersede", value=...)` calls made 260
new fact notes past the 200-notes-per-exec cap, and repeated confirms grew one note's
trust_history without limit, none of it counted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.tools import build_functions, vault_functions
from harness.vault_ops import VaultCalls
from harness.write_quota import WriteLimits, WriteQuota
from sandbox import HostFunctionError
from tests.harness.vault_calls import vault_calls

FACT = "---\ntier: L2\nconversation: c\nsubject: sarah\nkey: city\nvalue: paris\n---\nfact\n"


@pytest.fixture
def calls(tmp_path: Path) -> Iterator[VaultCalls]:
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "f.md").write_text(FACT)
    with vault_calls(tmp_path / "v") as calls:
        yield calls


def notes_on_disk(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*.md") if ".rmh" not in p.parts}


def test_supersedes_count_the_notes_they_make(calls: VaultCalls, tmp_path: Path) -> None:
    quota = WriteQuota(WriteLimits(session_notes=3))
    fns = quota.wrap(build_functions(vault_functions(calls)))
    fns["correct"].fn("f", "supersede", value="rome")  # f.md and the new value's note
    assert quota.report()["session_notes"] == 2
    before = notes_on_disk(tmp_path / "v")
    with pytest.raises(HostFunctionError) as refused:  # f.md again, and one more new note
        for n in range(5):
            fns["correct"].fn("f", "supersede", value=f"city {n}")
    assert refused.value.type_name == "QuotaExceeded"
    assert len(notes_on_disk(tmp_path / "v")) <= len(before) + 1
    assert quota.report()["session_notes"] <= 3


def test_confirms_are_charged_the_bytes_of_the_note_they_rewrite(calls: VaultCalls,
                                                                tmp_path: Path) -> None:
    quota = WriteQuota(WriteLimits(session_bytes=4_000))
    fns = quota.wrap(build_functions(vault_functions(calls)))
    with pytest.raises(HostFunctionError) as refused:
        for _ in range(100):
            fns["correct"].fn("f", "confirm", reason="r" * 200)
    assert refused.value.type_name == "QuotaExceeded"
    charged = quota.report()["session_bytes"]
    assert 0 < charged <= 4_000 + (tmp_path / "v" / "f.md").stat().st_size
