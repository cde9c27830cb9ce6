"""A note that repeats one link many times (`[[x]]` x 10^6 fits in a 5 MB note) costs one
resolution of that link, not one per occurrence (vault/storage/snapshot.py, increment.py).
Before, every new process advanced its snapshot over such a note by resolving each
occurrence: `rmh search` took 17 s on a vault of two notes, every time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vault import Vault
from vault.notes.links import Resolver

REPEATS = 20_000


def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = Resolver.resolve

    def resolve(self: Resolver, link: Any, source: str) -> int | None:
        calls.append(1)
        return real(self, link, source)

    monkeypatch.setattr(Resolver, "resolve", resolve)
    return calls


@pytest.mark.parametrize("reopen", [False, True])
def test_a_repeated_link_is_resolved_once_per_note(tmp_path: Path, reopen: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    hub = "[[x]] " * REPEATS + "[x](x.md) " * REPEATS + "[[y|alias]] " * REPEATS + "\n"
    with Vault.init(root) as v:
        v.write("other.md", "zebra\n")
        v.search("zebra", 3, learn=False)  # a saved base without the hub
        calls = counted(monkeypatch)
        v.write("hub.md", hub)
        v.write("x.md", "the x note\n")  # the hub's links resolve anew (increment.advance)
        assert [h.note for h in v.search("zebra", 3, learn=False).hits] == ["other.md"]
        if reopen:
            v.close()
            v = Vault.open(root)  # a new process: its snapshot advances over the hub
            v.search("zebra", 3, learn=False)
        links = v.links("hub")
        assert v.backlinks("x") == ["hub.md"]
        v.close()
    assert len(links) == 3 * REPEATS
    assert len(calls) < 1_000, len(calls)
