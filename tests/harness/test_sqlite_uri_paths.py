"""A vault whose path holds URI characters: the read-only opens of the entity cache
(harness/llm_entities.Cache.get) and of the hooks index (harness/hooks_index.reading) built
`file:{path}?mode=ro` from the raw path, so "#" began a fragment, "?" a query and "%41" was
read as "A". Before (PLUG6, session 32): SQLite opened the cut path read-write, creating an
empty file BESIDE the vault (a vault folder "a#b" gave a file "a" next to it), found no
table there, and a re-ingest with entities = "llm" ended in a traceback (recall found
nothing). Now the path is a percent-encoded URI: the cache answers, recall finds the note,
nothing appears outside."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.extraction import prepare
from harness.hooks_index import refresh, search
from tests.harness.llm_stub_endpoint import ChatEndpoint, Reply
from vault import Vault

from .test_llm_entities_hostile import TEXTS, entities, setup

NAMES = ["a#b", "a?b", "a%41b", "a%b", "a?mode=rw#x", "a b&c=d"]


@pytest.mark.parametrize("name", NAMES)
def test_the_entity_cache_answers_in_a_vault_of_any_name(tmp_path: Path, name: str) -> None:
    base = tmp_path / name
    base.mkdir()
    with ChatEndpoint(lambda n, b: Reply(text='["Bob", "Carla", "Dmitri"]')) as ep:
        cfg, root, convs = setup(base, ep.url)
        first, _, _ = prepare(cfg, root, convs)
        again, _, report = prepare(cfg, root, convs)
        assert ep.count == len(TEXTS)  # the second ingest sent nothing
    assert report["cached"] == len(TEXTS) and entities(again) == entities(first)
    assert sorted(p.name for p in base.iterdir()) == ["v"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@pytest.mark.parametrize("name", NAMES)
def test_recall_reads_the_hooks_index_in_a_vault_of_any_name(tmp_path: Path,
                                                             name: str) -> None:
    base = tmp_path / name
    base.mkdir()
    root = base / "v"
    with Vault.init(root) as v:
        v.write("kayak.md", "We repaired the kayak at the lake.\n")
        v.sync()
        refresh(v)
    assert [r.path for r in search(root, ["kayak"], 5)] == ["kayak.md"]
    assert sorted(p.name for p in base.iterdir()) == ["v"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
