"""Conversation files holding what no note can hold (vault/conversation/formats.py `text_only`):
a NUL (`\\u0000`) and a lone surrogate (`\\ud83d`, an emoji cut from its pair, as agent
transcripts carry when a tool truncates text). Before: a lone surrogate stopped the ingest with
a UnicodeEncodeError traceback (spaCy, then the UTF-8 encoder) and nothing was ingested; a NUL
wrote a note the index skips as binary, and stopped the ingest there. Now both are U+FFFD on
every loader, and every note an ingest writes is a searchable note."""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.vault.conversation.transcript_fixtures import claude_lines
from vault import Vault, ingest_conversations, load_transcript

BAD = ["\x00", "\ud83d", "\ude00", "a\x00", "\udfff\ud800"]


def _spoil(rng: random.Random, text: str) -> str:
    """`text` with a bad character at a word boundary (so the words stay searchable)."""
    cuts = [0, len(text), *(i for i, c in enumerate(text) if c == " ")]
    at = rng.choice(cuts)
    return text[:at] + rng.choice(BAD) + text[at:]


def simple_file(rng: random.Random) -> str:
    turns = [{"speaker": _spoil(rng, "Sarah") if rng.random() < 0.3 else "Sarah",
              "text": _spoil(rng, f"I live in Paris with {w} zebrafinch{i}"), "role": "user"}
             for i, w in enumerate(["Tom", "my cat", "Ana"])]
    return json.dumps({"format": "rmh-conversation/1",
                       "id": _spoil(rng, "conv") if rng.random() < 0.3 else "conv",
                       "sessions": [{"id": _spoil(rng, "s1") if rng.random() < 0.3 else "s1",
                                     "date": "2024-05-01T10:00", "turns": turns}]})


def claude_file(rng: random.Random) -> str:
    exchanges = [("user", _spoil(rng, f"fix the zebrafinch{i} build"), ()) for i in range(2)]
    return "\n".join(claude_lines([exchanges[0], ("assistant", "ok", ()), exchanges[1]],
                                  noise=False))


def test_nul_and_lone_surrogates_never_reach_a_note(tmp_path: Path) -> None:
    for seed in range(12):
        rng = random.Random(seed)
        text = simple_file(rng) if seed % 2 == 0 else claude_file(rng)
        for conv in load_transcript(text).conversations:
            for value in [conv.conversation_id, *(s.session_id for s in conv.sessions),
                          *(f for t in conv.turns() for f in (t.turn_id, t.speaker, t.text))]:
                assert "\x00" not in value and value.encode("utf-8"), (seed, value)
        root = tmp_path / f"v{seed}"
        with Vault.init(root) as v:
            report = ingest_conversations(v, load_transcript(text).conversations)
            assert report.written
            v.sync()
            assert v.index.skipped() == {}, seed
            for path in report.written:
                assert b"\x00" not in (root / path).read_bytes()
            hits = [h.note for h in v.search("zebrafinch1", 10, learn=False).hits]
            assert hits, seed


def test_a_spoiled_conversation_ingested_again_writes_nothing(tmp_path: Path) -> None:
    """Speakers that differ only by what `slug` drops (`\\ude00Sarah` and `\\udfff\\ud800Sarah`,
    read as `\\ufffdSarah` and `\\ufffd\\ufffdSarah`: two entities, one entity note). Before,
    each re-ingest of the same bytes rewrote that note with the entity the last ingest had not
    left there, back and forth."""
    for speakers in (["Sarah", "Sarah"], ["\ude00Sarah", "\udfff\ud800Sarah"]):
        turns = [{"speaker": s, "text": f"I live in Paris, note {i}.", "role": "user"}
                 for i, s in enumerate(speakers)]
        text = json.dumps({"format": "rmh-conversation/1", "id": "conv", "sessions": [
            {"id": "s1", "date": "2024-05-01T10:00", "turns": turns}]})
        root = tmp_path / f"v{len(list(tmp_path.iterdir()))}"
        with Vault.init(root) as v:
            ingest_conversations(v, load_transcript(text).conversations, use_nlp=False)
            for _ in range(2):
                again = ingest_conversations(v, load_transcript(text).conversations,
                                             use_nlp=False)
                assert again.written == (), (speakers, again.written)
