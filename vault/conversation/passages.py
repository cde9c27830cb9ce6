"""Search hits -> context items: which hits connect to the question, and ordinary notes as
dated passages.

The seed's rule (NDM step 6) is that a turn enters the depiction only through what it shares
with the question. `vault.search` fuses more than words (the link graph, the turn before and
after, dense similarity), so a hit's score alone can connect a turn that shares nothing with
the question: through a served vault, "Last month I sold my bike." was a hit for "When was
Alice's vase praised?" (its neighbour's link). `shares_terms` is the gate: a hit gives its
score as `lex` only when its text holds a content term of the query (no stop word: "She said it
was my best work." shares only "was" with that question) that is not the name of a speaker
of the turn's own conversation (speakers are hubs, as in the collision count; of their own
conversation only). Terms are compared by their stems, as the search compares them: "What
is Jon's favorite style of dance?" connects "I love all dances".

Ordinary notes (no conversation `tier`, outside ``conversations/``) that the search finds,
sharing a content term with the query in their title, an alias or the passage, or lying in
the time a query asks about and nothing else (`in_time_asked`), are items of kind "note": the
hit's best passage as text, the note's path, dated by its frontmatter (`date`, `updated`,
`created`, in that order, read as search reads them: retrieval/when.py `value_day`), else by a
YYYY-MM-DD in its file name (daily notes, as search dates them), else by the file's
modification time (UTC, from the index: data, never the clock). So `context` on a vault
with no conversations still returns budgeted, dated passages of the most relevant notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..notes.text import content_stems, content_terms, stems, tokenize
from ..notes.times_asked import topicless, untimed_asked
from ..retrieval.when import DATE_KEYS, name_day, value_day
from .items import Item
from .layout import ROOT, items_from_corpus

if TYPE_CHECKING:
    from ..core import Vault


def query_terms(query: str, speakers: Iterable[str]) -> frozenset[str]:
    """The query's content terms (search tokens less stop words) outside its date
    expressions (notes/times_asked.py `untimed_asked`), less the words of speakers'
    names, as stems; none for a query that asks for a time and nothing else (`topicless`:
    "What did we talk about on 8 May?" is no question about talking)."""
    if topicless(query):
        return frozenset()
    hubs = {w for s in speakers for w in tokenize(s)}
    words = content_terms(tokenize(untimed_asked(query)))
    return frozenset(stems(t for t in words if t not in hubs))


def shares_terms(text: str, terms: frozenset[str]) -> bool:
    """Whether `text` holds one of `terms` (`query_terms`: stems of content terms)."""
    return bool(terms) and not terms.isdisjoint(content_stems(text))


def in_time_asked(receipt: Mapping[str, Any]) -> bool:
    """Whether a hit lies in the time a query asks about and nothing else (its receipt's
    time channel, retrieval/topicless.py: t = 1): the time is what it shares with the query
    ("What happened on 8 May 2024?" shares no word with the notes of that day)."""
    time = receipt.get("signals", {}).get("time") or {}
    return float(time.get("raw", 0.0)) >= 1.0


def is_plain_note(path: str, frontmatter: Mapping[str, Any]) -> bool:
    """A note that is no conversation note (turn, session, entity, fact, episode, working)."""
    return not path.startswith(f"{ROOT}/") and "tier" not in frontmatter


def note_date(frontmatter: Mapping[str, Any], mtime_ns: int, path: str = "") -> datetime:
    """The note's date: the first readable of `DATE_KEYS`, else a YYYY-MM-DD in its file
    name (a daily note, retrieval/when.py name_day), else its mtime (naive UTC)."""
    for key in DATE_KEYS:
        value = frontmatter.get(key)
        if isinstance(value, datetime):
            return value.replace(tzinfo=None)
        d = value_day(value)
        if d is not None:
            return datetime(d.year, d.month, d.day)
    named = name_day(path)
    if named is not None:
        return datetime(named.year, named.month, named.day)
    return datetime.fromtimestamp(mtime_ns / 1e9, UTC).replace(tzinfo=None)


def note_item(path: str, title: str, passage: str, when: datetime) -> Item:
    """An ordinary note's passage as a context item (kind "note", no tick, no entities, no
    speaker: a note has none, and its path as one was a speaker to match the query by)."""
    return Item(-1, "", "", title, "", when, " ".join(passage.split()), (), (), 0.0, path,
                "note")


def vault_turns(
    vault: Vault, query: str, k: int, conversation: str | None = None, *, decline: bool = False,
    now: date | None = None,
) -> tuple[tuple[Item, ...], npt.NDArray[np.float64], int]:
    """The vault's turn notes, and the ordinary notes among the top `k` hits as dated
    passages (`passages`; not when `conversation` names one), with their lex: the
    `vault.search` score of a hit that shares a query term (`passages.shares_terms`), else 0
    (a turn not hit, or hit through links or dense similarity alone); and how many hits were
    used (0 with `decline` when the search found nothing relevant); `now`, the day the query
    is asked on, is the search's (default: the vault's clock)."""
    turns = items_from_corpus(vault.corpus(), conversation)
    pos = {it.note: i for i, it in enumerate(turns)}
    # a speaker's name is a hub of its own conversation only (CONV5: the speakers of every
    # conversation were taken out of the question, so a Discord nickname "tea" kept "Does Al
    # like tea?" from connecting Al's "I like tea." in another chat)
    speakers: dict[str, set[str]] = {}
    for it in turns:
        if it.kind == "turn":
            speakers.setdefault(it.conversation, set()).add(it.speaker)
    by_conversation = {c: query_terms(query, names) for c, names in speakers.items()}
    every = query_terms(query, {name for names in speakers.values() for name in names})
    result = vault.search(query, k, now=now)
    # With `decline`, a search that found nothing relevant lends no turn or passage its score
    # (only named entities shared with the question can still connect a turn).
    hits = result.hits if result.relevant or not decline else ()
    scored: dict[int, float] = {}
    notes: list[tuple[Item, float]] = []
    for h in hits:
        i = pos.get(h.note)
        if i is not None:
            if shares_terms(turns[i].text, by_conversation.get(turns[i].conversation, every)):
                scored[i] = max(scored.get(i, 0.0), h.score)
            continue
        row = None if conversation is not None else vault.index.note(h.id)
        if row is None or not (shares_terms(" ".join([h.title, *row.aliases, h.snippet]), every)
                               or in_time_asked(h.receipt)):
            continue  # a note found by its title or an alias shares what names it
        if is_plain_note(row.path, row.frontmatter):
            when = note_date(row.frontmatter, row.mtime_ns, row.path)
            notes.append((note_item(row.path, row.title, h.snippet or row.body[:400], when),
                          h.score))
    items = turns + tuple(it for it, _ in notes)
    lex = np.zeros(len(items))
    for i, score in scored.items():
        lex[i] = score
    for j, (_, score) in enumerate(notes):
        lex[len(turns) + j] = score
    return items, lex, len(hits)
