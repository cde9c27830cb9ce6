"""Corrections that stay corrected (vault/conversation/corrections.py, issue 32 item 1):
against re-ingest, a grown conversation, another conversation saying the same, an index
rebuilt from the folder, and generated conversations."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault import (
    EditRefused,
    Vault,
    build_context,
    correct_fact,
    ingest_conversations,
    load_conversations,
    note_origin,
)

AT = "2026-12-03T10:00:00+00:00"
PARIS = "conversations/ab/facts/sarah lives in paris.md"


def conv(cid: str = "ab", extra: list[dict[str, Any]] | None = None) -> Any:
    sessions: list[dict[str, Any]] = [
        {"id": "s1", "date": "2024-05-01T10:00",
         "turns": [{"speaker": "Sarah", "text": "I live in Paris.", "role": "user"},
                   {"speaker": "Bot", "text": "Nice city.", "role": "assistant"},
                   {"speaker": "Sarah", "text": "I love hiking in the mountains.",
                    "role": "user"}]},
        {"id": "s2", "date": "2024-06-01T10:00",
         "turns": [{"speaker": "Sarah", "text": "I live in Paris, near the river.",
                    "role": "user"}]}]
    sessions += extra or []
    return load_conversations(json.dumps({"format": "rmh-conversation/1", "id": cid,
                                          "sessions": sessions}))


def hits(v: Vault, query: str, **kw: Any) -> list[str]:
    return [h.note for h in v.search(query, 20, learn=False, **kw).hits]


def test_a_rejected_fact_stays_rejected_across_reingest_growth_and_other_conversations(
        tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, conv())
        assert PARIS in hits(v, "sarah lives in paris")
        done = correct_fact(v, PARIS, "reject", by="user", at=AT, reason="never lived there")
        assert done.trust["state"] == "rejected" and not done.trust["current"]
        assert PARIS not in hits(v, "sarah lives in paris")
        history = hits(v, "sarah lives in paris", history=True)
        assert history[-1] == PARIS  # after every current hit
        # the same conversation again: nothing changes on disk
        before = (tmp_path / "v" / PARIS).read_bytes()
        assert ingest_conversations(v, conv()).written == ()
        # grown: Sarah says it again in a new session; still rejected, new evidence listed
        grown = ingest_conversations(v, conv(extra=[{
            "id": "s3", "date": "2024-07-01T10:00",
            "turns": [{"speaker": "Sarah", "text": "I live in Paris.", "role": "user"}]}]))
        assert PARIS in grown.written
        fm = v.read(PARIS).frontmatter
        assert fm["trust"] == "rejected" and fm["confirmations"] == 3
        assert (tmp_path / "v" / PARIS).read_bytes() != before
        # another conversation extracting the same triple: written as a tombstone
        ingest_conversations(v, conv("cd"))
        other = v.read("conversations/cd/facts/sarah lives in paris").frontmatter
        assert other["trust"] == "rejected" and "tombstone of" in other["trust_reason"]
        assert not any(p.endswith("sarah lives in paris.md")
                       for p in hits(v, "sarah lives in paris"))
        # only confirm brings it back
        correct_fact(v, PARIS, "confirm", by="user", at="2026-12-04T00:00:00+00:00")
        assert PARIS in hits(v, "sarah lives in paris")


def test_supersede_makes_the_new_value_current_and_context_says_so(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, conv())
        done = correct_fact(v, "sarah lives in paris", "supersede", value="Rome", by="agent:s9",
                            at=AT)
        rome = "conversations/ab/facts/sarah lives in rome.md"
        assert done.current == rome and done.written == (PARIS, rome)
        new = v.read(rome).frontmatter
        assert (new["trust"], new["value"], new["corrects"]) == (
            "confirmed", "rome", ["[[conversations/ab/facts/sarah lives in paris|paris]]"])
        assert v.read(PARIS).frontmatter["superseded_by"] == [
            "[[conversations/ab/facts/sarah lives in rome|rome]]"]
        found = hits(v, "where does sarah live")
        assert rome in found and PARIS not in found
        ctx = build_context(v, "where does sarah live in paris", 200)
        assert ctx.lines and all("superseded by" in ln.text for ln in ctx.lines
                                 if "Paris" in ln.text)
        assert ingest_conversations(v, conv()).written == ()  # re-ingest: still as corrected
        origin = note_origin(v, rome)
        assert origin["trust"]["corrects"] == [PARIS] and origin["source"].startswith(
            "correction by agent:s9")
        with pytest.raises(EditRefused):
            correct_fact(v, "conversations/ab/s1/ab s1-1", "reject", by="u", at=AT)
        with pytest.raises(EditRefused):
            correct_fact(v, rome, "supersede", value=" ROME ", by="u", at=AT)


def test_trust_survives_an_index_rebuilt_from_the_folder(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, conv())
        correct_fact(v, PARIS, "reject", by="user", at=AT)
    for f in (tmp_path / "v" / ".rmh").glob("index.sqlite*"):
        f.unlink()
    with Vault.open(tmp_path / "v") as v:
        assert PARIS not in hits(v, "sarah lives in paris")
        assert ingest_conversations(v, conv()).written == ()


def test_provenance_names_the_source_turns_and_what_derives_from_them(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, conv())
        fact = note_origin(v, PARIS)
        assert fact["kind"] == "fact" and fact["conversation"] == "ab"
        assert [(s["turn"], s["speaker"], s["text"]) for s in fact["sources"]] == [
            ("s1:1", "Sarah", "I live in Paris."), ("s2:1", "Sarah",
                                                    "I live in Paris, near the river.")]
        turn = note_origin(v, "conversations/ab/s1/ab s1-1")
        assert turn["kind"] == "turn" and PARIS in turn["derived"]
        entity = note_origin(v, "conversations/ab/entities/paris")
        assert {s["note"] for s in entity["sources"]} == {
            "conversations/ab/s1/ab s1-1.md", "conversations/ab/s2/ab s2-1.md"}


CITIES = ("paris", "rome", "lima", "oslo", "cairo", "quito")


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(said=st.lists(st.tuples(st.sampled_from(("Ann", "Bo")), st.sampled_from(CITIES)),
                     min_size=1, max_size=8),
       reject=st.lists(st.integers(0, 7), max_size=4))
def test_generated_conversations_never_bring_a_rejected_value_back(
        tmp_path: Path, said: list[tuple[str, str]], reject: list[int]) -> None:
    root = tmp_path / "gen"
    shutil.rmtree(root, ignore_errors=True)
    turns = [{"speaker": who, "text": f"I live in {city.title()}.", "role": "user"}
             for who, city in said]
    sessions: list[dict[str, Any]] = [
        {"id": f"s{i}", "date": f"2024-0{1 + i % 9}-01T10:00", "turns": [t]}
        for i, t in enumerate(turns)]
    doc: dict[str, Any] = {"format": "rmh-conversation/1", "id": "g", "sessions": sessions}
    with Vault.init(root) as v:
        ingest_conversations(v, load_conversations(json.dumps(doc)))
        facts = sorted(p for p in v.corpus().paths if "/facts/" in p)
        rejected = sorted({facts[i % len(facts)] for i in reject})
        for p in rejected:
            correct_fact(v, p, "reject", by="user", at=AT)
        assert ingest_conversations(v, load_conversations(json.dumps(doc))).written == ()
        doubled = dict(doc, sessions=sessions + [
            dict(s, id=f"again{s['id']}") for s in sessions])
        ingest_conversations(v, load_conversations(json.dumps(doubled)))
        for p in rejected:
            assert v.read(p).frontmatter["trust"] == "rejected"
        shown = {h.note for h in v.search("lives in", 50, learn=False).hits}
        assert not shown & set(rejected)


def test_the_incremental_stale_mask_equals_a_full_pass_after_every_change(
        tmp_path: Path) -> None:
    """retrieval/beliefs.py updates from corpus deltas: after each correction, edit, new note
    and removal, its mask is the one a fresh tracker computes from scratch."""
    from vault.retrieval.beliefs import StaleClaims

    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, conv())
        live = StaleClaims()
        facts = sorted(p for p in v.corpus().paths if "/facts/" in p)
        steps: list[Callable[[], object]] = [
                 lambda: correct_fact(v, facts[0], "reject", by="u", at=AT),
                 lambda: v.write("plain.md", "A plain note about Paris.\n"),
                 lambda: correct_fact(v, facts[1], "supersede", value="cycling", by="u", at=AT),
                 lambda: correct_fact(v, facts[0], "confirm", by="u", at=AT),
                 lambda: v.delete("plain.md"),
                 lambda: correct_fact(v, facts[0], "reject", by="u", at=AT)]
        for step in steps:
            step()
            corpus = v.corpus()
            got, want = live.mask(corpus), StaleClaims().mask(corpus)
            assert (got is None) == (want is None)
            if got is not None and want is not None:
                assert got.tolist() == want.tolist()
        final = live.mask(v.corpus())
        assert final is not None and int(final.sum()) == 2  # facts[0] rejected, facts[1] old
