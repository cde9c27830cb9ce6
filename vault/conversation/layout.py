"""Where conversation notes live and what their frontmatter holds (both directions).

Layout, per conversation `cid` (names slugged: characters outside letters, digits, space, "'",
".", "_" and "-" become "-"):

    conversations/<cid>/<cid> <session>.md                  L1 session note
    conversations/<cid>/<session>/<cid> <turn>.md           L0 turn note (one per turn)
    conversations/<cid>/entities/<key>.md                   one per entity row
    conversations/<cid>/facts/<sentence>.md                 L2 fact / L3 rule (see fact_notes)
    conversations/<cid>/episodes/<cid> <session> episode <n>.md   episodic (episode_notes)
    conversations/<cid>/working/<session>/<title>.md        working memory (working)

Turn frontmatter: tier "L0", conversation, session, turn, speaker, role, date (ISO), tick,
entities (wiki-links), dates ([{expr, start, end}]), references, omega, previous/next
(wiki-links). The body is "Speaker: text". `items_from_corpus` reads them back for context,
together with episode notes (kind "episode": tick = the episode's last turn, text = its
summary) and live working notes (kind "working": tick -1, text = the body).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from ..storage.corpus import Corpus
from .formats import Conversation, Session
from .items import Item
from .per_corpus import kept

ROOT = "conversations"
_UNSAFE = re.compile(r"[^\w '._-]+")


def slug(text: str) -> str:
    """A file-name-safe form of `text` (never empty, no leading dot)."""
    s = _UNSAFE.sub("-", text).strip(" .-") or "x"
    return s[:120]


def turn_path(cid: str, session: str, turn: str) -> str:
    return f"{ROOT}/{slug(cid)}/{slug(session)}/{slug(cid)} {slug(turn)}.md"


def session_path(cid: str, session: str) -> str:
    return f"{ROOT}/{slug(cid)}/{slug(cid)} {slug(session)}.md"


def entity_path(cid: str, key: str) -> str:
    return f"{ROOT}/{slug(cid)}/entities/{slug(key)}.md"


def entity_paths(cid: str, keys: Sequence[str]) -> dict[str, str]:
    """key -> note path, unique within the conversation: keys whose slugs clash ("c++" and
    "c#"; two sharing their first 120 characters) get "<key> (2)"... in key order (CONV7: both
    rows were written to one file, one entity lost)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for key in sorted(keys):
        path, n = entity_path(cid, key), 1
        while unicodedata.normalize("NFC", path).casefold() in used:
            n += 1
            path = entity_path(cid, f"{key[:100]} ({n})")
        used.add(unicodedata.normalize("NFC", path).casefold())
        out[key] = path
    return out


def fact_path(cid: str, title: str) -> str:
    return f"{ROOT}/{slug(cid)}/facts/{slug(title)}.md"


def link(path: str, label: str) -> str:
    """A path wiki-link ("[[folder/Note|label]]"), unambiguous across conversations. The
    label keeps no "|", "[" or "]": a speaker or session named "[[x]]" made "[[x))" of it,
    and the scanner read a link to "x))" inside the alias (a dangling link per mention)."""
    target = path[:-3] if path.endswith(".md") else path
    return f"[[{target}|{label.replace('|', '-').replace(']', ')').replace('[', '(')}]]"


def as_date(value: Any) -> date | None:
    """A frontmatter date (YAML date, datetime or ISO text: a date, or a date and time, its
    day as written, whatever its offset, as a datetime's) as a date; None if it is not one.
    ISO text with a time ("2023-02-28T23:30:00-05:00", "...Z") was None: a fact note so
    dated was no fact, and `rmh lifecycle` never judged it."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(str(value)).date()
    except ValueError:
        return None


def _memory_item(path: str, fm: Mapping[str, Any], body: str) -> Item | None:
    """An episode or working note as an Item; None if it is not readable."""
    try:
        when = datetime.fromisoformat(str(fm["date"]))
    except (KeyError, TypeError, ValueError):
        return None
    tier = fm.get("tier")
    text = body.strip()
    if tier == "episodic":
        _, _, summary = text.partition("## Summary")
        text = summary.strip() or str(fm.get("goal", ""))
        last = fm.get("last_tick")
        tick = last if isinstance(last, int) and not isinstance(last, bool) else -1
    else:
        tick = -1
    keys = [str(e) for e in fm.get("entity_keys", []) or []]
    kind = "episode" if tier == "episodic" else "working"
    return Item(tick, str(fm.get("conversation", "")), str(fm.get("session", "")),
                path.rsplit("/", 1)[-1].removesuffix(".md"), "patterns" if kind == "episode"
                else "scratch", when, " ".join(text.split()), tuple(keys), (), 0.0, path, kind)


def item_from_note(path: str, fm: Mapping[str, Any], body: str) -> Item | None:
    """The context view of a turn, episode or working note; None if it is none of those."""
    if fm.get("tier") in ("episodic", "working"):
        return _memory_item(path, fm, body)
    if fm.get("tier") != "L0":
        return None
    try:
        when = datetime.fromisoformat(str(fm["date"]))
        tick = int(fm["tick"])
    except (KeyError, TypeError, ValueError):
        return None
    speaker = str(fm.get("speaker", ""))
    text = body.strip()
    if text.startswith(f"{speaker}: "):
        text = text[len(speaker) + 2:]
    keys = [str(e) for e in fm.get("entity_keys", []) or []]
    dates: list[tuple[str, date, date]] = []
    for d in fm.get("dates", []) or []:
        if isinstance(d, Mapping):
            s, e = as_date(d.get("start")), as_date(d.get("end"))
            if s is not None and e is not None:
                dates.append((str(d.get("expr", "")), s, e))
    omega = fm.get("omega", 0.0)
    return Item(
        tick, str(fm.get("conversation", "")), str(fm.get("session", "")),
        str(fm.get("turn", "")), speaker, when, text, tuple(keys), tuple(dates),
        float(omega) if isinstance(omega, (int, float)) else 0.0, path,
    )


def items_from_corpus(corpus: Corpus, conversation: str | None = None) -> tuple[Item, ...]:
    """Every turn note of the corpus (optionally of one conversation), in (conversation, tick)
    order, with their corpus positions; kept while `corpus` is the current one
    (per_corpus.py)."""
    return kept(("items", conversation), corpus, lambda: _items(corpus, conversation))


def _items(corpus: Corpus, conversation: str | None) -> tuple[Item, ...]:
    found: list[Item] = []
    for i in range(len(corpus)):
        if corpus.archived[i]:
            continue
        it = item_from_note(corpus.paths[i], corpus.frontmatter[i], corpus.bodies[i])
        if it is not None and (conversation is None or it.conversation == conversation):
            found.append(it)
    return tuple(sorted(found, key=lambda it: (it.conversation, it.tick, it.note)))


# the folders of a conversation's other notes: a session of one of these names put its turn
# notes among them ("facts": every turn counted, and corrected, as a fact)
_FOLDERS = ("entities", "facts", "episodes", "working")


def _name_key(text: str) -> str:
    """What two names share a file under, on any file system (case-folding, normalising)."""
    return unicodedata.normalize("NFC", slug(text)).casefold()


def _plain(name: str) -> str:
    """`name` with its brackets round: a name is written as it is in frontmatter, headings and
    summaries, where "[[x]]" is a link to "x" (CONV: a dangling link per mention)."""
    return name.replace("[", "(").replace("]", ")")


def _fresh(name: str, used: set[str]) -> str:
    """`_plain(name)`, or "<it> 2", "<it> 3"...: the first whose file name is not in `used`."""
    name = _plain(name)
    n, out = 1, name
    while _name_key(out) in used:
        n += 1  # the name cut so that its slug keeps the number (`slug` keeps 120 characters)
        out = f"{name[:100]} {n}"
    used.add(_name_key(out))
    return out


def distinct(convs: Sequence[Conversation]) -> list[Conversation]:
    """`convs` with each conversation, session and turn whose notes would share a file with an
    earlier one's (the same id twice, "a/b" and "a-b", "S1" and "s1") renamed "<id> 2",
    "<id> 3"..., no session named as a conversation folder, and ids and speakers `_plain`.
    CONV: the later note was written over the earlier, a turn lost without a word (two
    conversations: rewritten in turn by every ingest of the file)."""
    out: list[Conversation] = []
    used_c: set[str] = set()
    for conv in convs:
        sessions: list[Session] = []
        used_s = {_name_key(f) for f in _FOLDERS}
        for s in conv.sessions:
            used_t: set[str] = set()
            turns = tuple(replace(t, turn_id=_fresh(t.turn_id, used_t), speaker=_plain(t.speaker))
                          for t in s.turns)
            sessions.append(Session(_fresh(s.session_id, used_s), s.when, turns, s.title))
        out.append(Conversation(_fresh(conv.conversation_id, used_c), tuple(sessions)))
    return out
