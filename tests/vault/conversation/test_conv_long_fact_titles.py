"""Two facts whose titles share their first 120 characters (a speaker named by a long
nickname, a long liked thing) get distinct fact notes, and the ingest ends (CONV7, session 33:
`fact_paths` numbered the clash as "<title> (2)", which `slug` cut back to the same 120
characters, so the ingest looped forever). Generated: speakers and values of many lengths."""

from __future__ import annotations

import random
import threading
from datetime import datetime
from pathlib import Path

import pytest

from vault import Vault, ingest_conversations
from vault.conversation.formats import Conversation, Session, Turn
from vault.conversation.ingest import notes_for


def _chat(seed: int) -> Conversation:
    rnd = random.Random(seed)
    speaker = rnd.choice(("X", "Åsa", "Bo🐍", "שרה")) * rnd.randint(30, 200)
    texts = ["I live in Rome.", "I like jazz.", "I work at Acme.", "I like chess."]
    turns = tuple(Turn(f"t{j}", speaker, text, datetime(2024, 5, 1, 10, j))
                  for j, text in enumerate(texts))
    return Conversation("c", (Session("s1", datetime(2024, 5, 1, 10, 0), turns),))


def _ingest_within(root: Path, conv: Conversation, seconds: float) -> list[str]:
    out: list[str] = []

    def run() -> None:
        with Vault.init(root) as v:
            out.extend(ingest_conversations(v, conv, use_nlp=False).written)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the ingest did not end"
    return out


@pytest.mark.parametrize("seed", range(8))
def test_long_fact_titles_get_distinct_notes_and_the_ingest_ends(tmp_path: Path,
                                                                   seed: int) -> None:
    written = _ingest_within(tmp_path / "v", _chat(seed), 60)
    facts = [p for p in written if "/facts/" in p]
    assert len(facts) == len(set(p.casefold() for p in facts)) >= 3
    assert all(len(Path(p).name) <= 130 for p in facts)


@pytest.mark.parametrize("pair", [("k" * 130 + " alpha", "k" * 130 + " beta"),
                                  ("Åsa" * 50 + " x", "A\u030asa" * 50 + " y"),
                                  ("c++", "c#"), ("[a]", "(a)")])
def test_entities_whose_paths_clash_get_distinct_notes(pair: tuple[str, str]) -> None:
    turns = tuple(Turn(f"t{j}", f"S{j}", "hello", datetime(2024, 1, 1, j), entities=(key,))
                  for j, key in enumerate(pair))
    conv = Conversation("c", (Session("s", datetime(2024, 1, 1), turns),))
    paths = [p.casefold() for p, _ in notes_for(conv)]
    assert len(paths) == len(set(paths))
