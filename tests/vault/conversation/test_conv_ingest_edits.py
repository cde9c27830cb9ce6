"""A generated note edited by hand is never lost to a re-ingest (vault/conversation/ingest.py,
generated.py). Before, re-ingesting a conversation wrote every turn, session, entity and
episode note whose bytes differed from the rendering back as generated, with no copy
anywhere: a user's edit made since was gone. Seeded generated edits (text appended, a
frontmatter field added or changed, a line deleted) of random notes of an ingested
conversation, fact notes among them (before session 25 a fact note's edit went to the trash),
then the same or a grown transcript ingested again, with and without `regenerate`; the
invariant: every version a user wrote is still a file (the note or a copy in `.rmh/trash/`),
and every note nobody edited is byte-identical to what a fresh ingest of the same transcript
writes. Notes moved, renamed, copied or deleted: test_conv_ingest_follow.py."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault import Vault, ingest_conversations, load_conversations

WORDS = ("pottery", "Lisbon", "bike", "garden", "piano", "Carla", "teacher", "book club")


def conv_json(n_turns: int) -> str:
    rng = random.Random(5)  # the same turns in the same order: a grown transcript extends
    turns = [{"speaker": ("Alice", "Bob")[i % 2],
              "text": f"I like the {rng.choice(WORDS)} and {rng.choice(WORDS)}, day {i}.",
              "role": ("user", "assistant")[i % 2]} for i in range(n_turns)]
    sessions = [{"id": f"s{k}", "date": f"2024-05-0{k + 1}T10:00", "turns": turns[k * 6:k * 6 + 6]}
                for k in range((n_turns + 5) // 6)]
    return json.dumps({"format": "rmh-conversation/1", "id": "ab", "sessions": sessions})


def conv(n_turns: int) -> Any:
    (c,) = load_conversations(conv_json(n_turns))
    return c


def notes_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.relative_to(root).parts}


def trash_of(root: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted((root / ".rmh" / "trash").rglob("*.md"))]


def edit(rng: random.Random, v: Vault, path: str, n: int) -> dict[str, bytes | None]:
    """One edit a user might make: {vault path: its bytes now (None: gone from there)}."""
    root = v.root
    file = root / path

    def field(lines: list[str]) -> None:  # a field of its own, or a generated one's value
        at = rng.randrange(1, lines.index("---", 1))
        lines.insert(at, f"mine: edit {n}") if rng.random() < 0.5 else lines.__setitem__(
            at, lines[at].split(":", 1)[0] + f": changed {n}")

    file.write_text(edited(rng, file.read_text(encoding="utf-8"), n, field), encoding="utf-8")
    return {path: file.read_bytes()}


def edited(rng: random.Random, text: str, n: int, field: Callable[[list[str]], None]) -> str:
    """`text` after one edit a user might make: words appended, its frontmatter changed by
    `field` (in place, on its lines), or a line of its body deleted."""
    lines = text.split("\n")
    kind = rng.choice(("append", "frontmatter", "delete"))
    if kind == "append":
        return text + f"My own words {n}: {rng.choice(WORDS)}.\n"
    if kind == "frontmatter":
        field(lines)
    else:
        body = [i for i, ln in enumerate(lines) if ln.strip() and i > lines.index("---", 1)]
        del lines[rng.choice(body)]
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(8))
def test_no_hand_edit_is_lost_and_untouched_notes_match_a_fresh_ingest(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root, fresh = tmp_path / "v", tmp_path / "fresh"
    small, grown = conv(10), conv(rng.choice((10, 16)))  # the same transcript, or grown
    regenerate = rng.random() < 0.4
    with Vault.init(root) as v:
        ingest_conversations(v, small, use_nlp=False)
        candidates = list(notes_of(root))
        user: dict[str, bytes | None] = {}  # each note a user changed: its last version
        for n, path in enumerate(rng.sample(candidates, rng.randint(1, 5))):
            user.update(edit(rng, v, path, n))
        report = ingest_conversations(v, grown, use_nlp=False, regenerate=regenerate)
        again = ingest_conversations(v, grown, use_nlp=False, regenerate=regenerate)
    with Vault.init(fresh) as f:
        ingest_conversations(f, grown, use_nlp=False)
    now, trash, expected = notes_of(root), trash_of(root), notes_of(fresh)
    for where, data in user.items():  # every version a user made is a file still
        assert data is None or now.get(where) == data or data in trash, (seed, where)
    for path, data in expected.items():  # untouched notes: as a fresh ingest writes them
        if path not in user or regenerate:
            assert now[path] == data, (seed, path)
    kept = set(report.kept)
    assert (kept == set(user) and not regenerate) or (not kept and regenerate), seed
    assert all(now[p] == user[p] for p in kept)
    assert not again.written and not again.trashed and set(again.kept) == kept
    assert all(t in user.values() for t in trash)  # no bytes of the ingest's own: no noise
    assert len(report.trashed) == len(trash)


def test_a_vault_ingested_before_the_record_loses_no_edit(tmp_path: Path) -> None:
    """Notes with no record (ingested by an older rmh, the record file gone): each that differs
    from its rendering is written with its bytes first copied to the trash (the ingest cannot
    tell a hand edit from its own older bytes), and is recorded from then on."""
    root = tmp_path / "v"
    with Vault.init(root) as v:
        ingest_conversations(v, conv(10), use_nlp=False)
        for f in (root / ".rmh" / "generated").iterdir():
            f.unlink()
        session = root / "conversations/ab/ab s1.md"
        session.write_text(session.read_text("utf-8") + "mine\n", "utf-8")
        edited = session.read_bytes()
        report = ingest_conversations(v, conv(16), use_nlp=False)
        # unknown: each note the grown transcript changes, the edited one among them
        assert "conversations/ab/ab s1.md" in dict(report.trashed)
        assert set(dict(report.trashed)) == set(report.written) - {
            p for p in report.written if not (root / ".rmh/trash" / p).exists()}
        assert edited in trash_of(root) and session.read_bytes() != edited
        session.write_text(session.read_text("utf-8") + "mine again\n", "utf-8")
        later = ingest_conversations(v, conv(10), use_nlp=False)  # now recorded: kept
        assert later.kept == ("conversations/ab/ab s1.md",)
        assert session.read_text("utf-8").endswith("mine again\n")
