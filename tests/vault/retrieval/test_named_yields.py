"""The named stage and PageRank's seeds take an ingest's entity note as named only where no
user's note holds the name (notes/generated_names.py `yielded`, per name the query holds;
REV38: "what does Maya own" ranked the user's `people/Maya Okafor.md` (alias Maya) below the
generated `entities/maya.md`, both counted as named)."""

from __future__ import annotations

import dataclasses

from vault.retrieval.pipeline import SearchEngine
from vault.storage.corpus import Corpus

from ..retrieval_fixtures import make_corpus

NOTES = [("Maya Okafor", "Staff engineer. She owns the ledger service and its runbooks."),
         ("maya", "Maya agreed to move the ledger to tiered storage and owns the migration."),
         ("ledger", "The ledger books every payment twice."),
         ("Onboarding", "Pair with Maya in the first week; read the ledger runbook."),
         ("Storage", "Tiered storage moves cold data to cheaper disks.")]
PATHS = ("people/Maya Okafor.md", "conversations/chat/entities/maya.md", "Ledger.md",
         "Onboarding.md", "Storage.md")


def corpus(paths: tuple[str, ...] = PATHS) -> Corpus:
    base = make_corpus(NOTES, aliases=[["Maya"], [], [], [], []])
    return dataclasses.replace(base, paths=paths)


def test_the_entity_note_yields_the_users_name_in_the_named_stage() -> None:
    got = SearchEngine.lexical().search(corpus(), "what does Maya own", 5)
    ids = [h.id for h in got.hits]
    assert ids.index(1) < ids.index(2), ids  # the user's note above the generated one
    assert "(1 named," in got.stages["named"], got.stages  # main: 2 named, the entity first


def test_without_a_users_note_the_entity_note_is_named() -> None:
    paths = ("people/Maya Okafor.md", *PATHS[1:])
    base = make_corpus(NOTES)  # no alias: no user's note holds "Maya"
    got = SearchEngine.lexical().search(dataclasses.replace(base, paths=paths),
                                        "what does Maya own", 5)
    assert 2 in [h.id for h in got.hits[:2]]
