"""Resolver rule 8 (notes/generated_names.py): an ingest's entity note yields a bare name a
user's note holds as file name or alias; with no such user note it resolves as before."""

from __future__ import annotations

import pytest

from vault.errors import AmbiguousNote
from vault.notes.links import Resolver

PATHS = {1: "people/Maya Okafor.md", 2: "conversations/c/entities/maya.md",
         3: "conversations/c/entities/ledger.md", 4: "a/very/long/folder/path/Ledger.md",
         5: "conversations/c/entities/bob.md"}


def test_entity_notes_yield_the_users_names() -> None:
    r = Resolver.build(PATHS, {1: ["Maya"]})
    assert r.resolve_wiki("Maya", "x.md") == 1  # the alias, not the entity's file name
    assert r.resolve_wiki("Ledger", "x.md") == 4  # the user's longer path
    assert r.resolve_wiki("bob", "x.md") == 5  # no user note holds it
    assert r.resolve_wiki("conversations/c/entities/maya", "x.md") == 2  # by path
    assert r.by_title("Maya", as_link=True) == 1
    with pytest.raises(AmbiguousNote):  # a destructive command never picks
        r.by_title("Maya")
    assert r.link_text(2) == "conversations/c/entities/maya"
    assert r.link_text(5) == "bob"


def test_without_user_notes_nothing_changes() -> None:
    r = Resolver.build({k: v for k, v in PATHS.items() if k in (2, 3, 5)}, {})
    assert [r.resolve_wiki(n, "x.md") for n in ("maya", "ledger", "bob")] == [2, 3, 5]
    assert r.by_title("maya") == 2


def test_the_generated_folder_is_the_one_ingest_writes() -> None:
    """generated_names.ROOT copies conversation/layout.py's (notes import nothing from there)."""
    from vault.conversation.layout import ROOT as INGEST_ROOT
    from vault.notes.generated_names import ROOT
    assert ROOT == INGEST_ROOT
