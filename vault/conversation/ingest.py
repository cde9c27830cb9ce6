"""Conversation -> notes through `Vault.write` (see `layout` for paths and frontmatter).

One note per turn (L0: speaker, date, tick, session, entities, anchored dates, counted
references, DMF Ω, previous/next links), one per session (L1, `session_notes`: a
deterministic extractive summary, and the title a chat export gave the conversation), one
per entity row (kind, mentions, first and last seen, its trajectory and its strongest
Adamic–Adar ties, and the typed relations its facts state), one per L2 fact or L3
rule (`facts`, `fact_notes`: preferences, facts, relations and commitments found by pattern in
the users' turns, confirmed by repetition, conflicts side by side), one per episode (tier
"episodic": goal, steps tried, outcome, lesson by fixed patterns, `episodes`, `episode_notes`).
Numbers get no note.

A fact note keeps the trust a correction gave it (confirmed, rejected, superseded); a value
rejected anywhere in the vault is written rejected (`corrections.carry`).

Re-ingesting the same conversation is a no-op: a note is written only when its rendered text
differs from the file (compared by the sha256 the index keeps), so nothing changes on disk.
Each such write is a compare-and-swap against the bytes that decision (and the trust carried)
was based on, and a note the vault did not hold is created only if still absent: a note
another process changed or created since the ingest began (a correction made while the turns
were parsed; the same conversation ingested and corrected by another process) fails it, and
the ingest starts again from the vault as it is, up to `ATTEMPTS` times (then EditConflict or
NoteExists), so the change is carried, never overwritten.

A generated note edited by hand since the ingest wrote it is never lost (`generated` keeps the
hash of the bytes the ingest last wrote to each note, so it tells the two apart): by default a
turn, session, entity or episode note edited by hand is left as the user made it and listed
(`IngestReport.kept`); with `regenerate` it is written as generated, the user's version first
put in `.rmh/trash/` (`IngestReport.trashed`). A fact note follows the same rule; a correction
(`corrections.correct`: trust fields only) is no hand edit, since the record keeps the hash of a
fact note without them and the ingest carries them onto the note it writes. A note of which no
record is kept (ingested by an older rmh, or made by hand where the ingest writes) is written,
its bytes put in the trash first. A generated note the user moved or renamed is followed to
where it is and treated there the same way; one the user deleted is not written again unless
`regenerate` (`follow.py`, `IngestReport.left_deleted`).

What `rmh forget` erased stays erased (storage/forgotten.py): a turn whose speaker or text
holds a forgotten subject, or whose note was erased, is left out before anything is built
from it (no turn note, nor its words in a session summary, an entity, a fact or an episode),
and no note is written where one was erased or whose text still holds a forgotten subject
(`IngestReport.forgotten`: the turns left out).

A stop (`vault.cancellable`: `rmh serve`'s, at a cancel or the server's stop) is checked before
each conversation, turn parsed and note written: `IngestStopped`, the notes of the conversation
being written taken back (take_back.py) while fewer than half of its writes are made, else the
rest written first (either costs at most as many writes as the other would; a conflict in that
rest, which no other attempt follows once stopped, takes them back: whole or absent all the
same). Ctrl-C (KeyboardInterrupt) takes them back too. Ingesting again writes the rest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..cancel import IngestStopped, checkpoint
from ..errors import Cancelled, EditConflict, NoteExists, VaultError
from ..full_disk import is_disk_full
from ..notes.hashing import content_hash
from ..notes.note import render
from ..storage import forgotten
from ..storage.store import STATE_DIR
from .corrections import carry
from .entities import normalise
from .episode_notes import episode_notes
from .episodes import find_episodes
from .events import Event, build_events, incidence
from .fact_notes import entity_relation_fields, fact_notes
from .facts import build_facts
from .follow import Followed, follow, namer, unlink
from .formats import Conversation
from .generated import Record, is_fact, mark
from .ingest_done import Done as _Done
from .layout import distinct, entity_paths, link, turn_path
from .lifecycle import promotable
from .remembered import without_forgotten
from .session_notes import session_note
from .take_back import Landed, before_write, take_back

if TYPE_CHECKING:
    from ..core import Vault

TRAJECTORY_MAX = 50
TIES_MAX = 5
ATTEMPTS = 3  # ingests started again after a note changed under them (module docstring)


@dataclass(frozen=True)
class IngestReport:
    """What one ingest did: counts, and the notes written or left unchanged."""

    conversations: tuple[str, ...]
    turns: int
    sessions: int
    entities: int
    written: tuple[str, ...]
    unchanged: int
    notes: tuple[str, ...] = field(default=(), repr=False)
    facts: int = 0
    rules: int = 0
    episodes: int = 0
    kept: tuple[str, ...] = ()  # edited by hand since: left as the user made them
    trashed: tuple[tuple[str, str], ...] = ()  # (note, trash path) of a version rewritten
    forgotten: int = 0  # turns left out: erased by `rmh forget` (module docstring)
    left_deleted: tuple[str, ...] = ()  # generated paths of notes the user deleted (follow.py)

    def to_json(self) -> dict[str, Any]:
        return {
            "conversations": list(self.conversations), "turns": self.turns,
            "sessions": self.sessions, "entities": self.entities, "facts": self.facts,
            "rules": self.rules, "episodes": self.episodes,
            "written": len(self.written), "unchanged": self.unchanged,
            "written_notes": list(self.written[:50]),
            "kept_edited": list(self.kept),
            "trashed": [{"note": n, "trash": t} for n, t in self.trashed],
            "forgotten_turns": self.forgotten,
            "left_deleted": list(self.left_deleted),
        }


def _turn_note(ev: Event, prev: Event | None, nxt: Event | None,
               ent_paths: dict[str, str]) -> tuple[str, str]:
    path = turn_path(ev.conversation, ev.session, ev.turn_id)
    keys = [e for e in ev.entities if e.kind != "speaker"]
    # a speaker with no key ("." or "": nothing left to name) has no entity note (CONV: the
    # first entity was taken for it, an IndexError, or a link to the turn's first entity)
    own = normalise(ev.speaker)
    fm: dict[str, Any] = {
        "tier": "L0", "conversation": ev.conversation, "session": ev.session,
        "turn": ev.turn_id, "speaker": ev.speaker, "role": ev.role,
        "date": ev.when.isoformat(), "tick": ev.tick,
        "speaker_note": link(ent_paths[own], ev.speaker) if own in ent_paths else None,
        "entities": [link(ent_paths[e.key], e.key) for e in keys if e.key in ent_paths],
        "entity_keys": [e.key for e in keys],
        "dates": [{"expr": r.expr, "start": r.start.isoformat(), "end": r.end.isoformat()}
                  for r in ev.time_refs],
        "references": [r.to_json() for r in ev.references],
        "omega": round(ev.survival.omega, 4),
    }
    if fm["speaker_note"] is None:
        del fm["speaker_note"]
    for name, other in (("previous", prev), ("next", nxt)):
        if other is not None:
            fm[name] = link(turn_path(other.conversation, other.session, other.turn_id),
                            other.turn_id)
    return path, render(fm, f"{ev.speaker}: {ev.text}\n")


def notes_for(conv: Conversation) -> list[tuple[str, str]]:
    """Every (path, text) the conversation becomes, in a fixed order."""
    return _build(distinct([conv])[0])[0]


def _build(conv: Conversation, use_nlp: bool = True) -> tuple[list[tuple[str, str]], int]:
    """The notes and how many of the facts are L3 rules (`use_nlp`: parse with the NLP
    pipeline when it is installed; False: the rules alone, for entities and facts)."""
    events = build_events(conv, use_nlp=use_nlp)
    cid = conv.conversation_id
    inc = incidence(events)
    ent_paths = entity_paths(cid, [k for k, kind in zip(inc.keys, inc.kinds, strict=True)
                                   if kind != "number"])
    out: list[tuple[str, str]] = []
    for i, ev in enumerate(events):
        prev = events[i - 1] if i > 0 else None
        nxt = events[i + 1] if i + 1 < len(events) else None
        out.append(_turn_note(ev, prev, nxt, ent_paths))
    by_session: dict[str, list[Event]] = {}  # one pass (a scan per session: n sessions x n)
    for ev in events:
        by_session.setdefault(ev.session, []).append(ev)
    for s in conv.sessions:
        if s.session_id in by_session:
            out.append(session_note(s.session_id, by_session[s.session_id], s.title))
    records = build_facts(events, use_nlp=use_nlp)
    aa = inc.adamic_adar()
    for row, (key, kind) in enumerate(zip(inc.keys, inc.kinds, strict=True)):
        if kind == "number":
            continue
        ticks = inc.trajectory(key)
        r = aa.getrow(row).tocoo()
        ties = sorted(((inc.keys[int(j)], float(v)) for j, v in zip(r.col, r.data, strict=True)
                       if inc.kinds[int(j)] != "number"), key=lambda p: (-p[1], p[0]))[:TIES_MAX]
        fm = {
            "tier": "entity", "conversation": cid, "key": key, "kind": kind,
            "mentions": len(ticks), "first_seen": events[ticks[0]].when.isoformat(),
            "last_seen": events[ticks[-1]].when.isoformat(),
            **entity_relation_fields(records, key, ent_paths),
        }
        body = [f"# {key}", "", f"Mentioned in {len(ticks)} turn(s).", "", "## Trajectory", ""]
        body += [
            f"- {events[t].when.date().isoformat()} "
            + link(turn_path(cid, events[t].session, events[t].turn_id), events[t].turn_id)
            for t in ticks[:TRAJECTORY_MAX]
        ]
        if ties:
            body += ["", "## Tied to (Adamic–Adar)", ""]
            body += [f"- {link(ent_paths[k], k)} ({v:.3f})" for k, v in ties]
        out.append((ent_paths[key], render(fm, "\n".join(body) + "\n")))
    rules = sum(1 for r in records if promotable(r.fact))
    episodes = episode_notes(find_episodes(events, use_nlp=use_nlp), events)
    return out + fact_notes(cid, records, ent_paths) + episodes, rules


def ingest(vault: Vault, conversations: Conversation | Sequence[Conversation], *,
           use_nlp: bool = True, regenerate: bool = False) -> IngestReport:
    """Write the notes of one or more conversations; unchanged notes are not rewritten.
    `use_nlp` False: no parse, the rules alone (the harness's `[extract] entities = "rules"`).
    `regenerate`: a note edited by hand is written as generated, the edit kept in the trash
    (else it is left as edited and reported). EditConflict (or NoteExists) when notes kept
    changing under it `ATTEMPTS` times (module docstring)."""
    convs = distinct([conversations] if isinstance(conversations, Conversation)
                     else conversations)
    done = _Done()  # across attempts: what one wrote before a conflict counts
    try:
        for _ in range(ATTEMPTS - 1):
            try:
                return _ingest(vault, convs, use_nlp, regenerate, done)
            except (EditConflict, NoteExists):
                continue
        return _ingest(vault, convs, use_nlp, regenerate, done)
    except Cancelled:  # at a checkpoint: between two notes (module docstring)
        raise IngestStopped(tuple(done.written), len(convs), done.whole) from None


def verdict(current: str | None, ours: tuple[str, ...] | None, regenerate: bool,
            marked: str | None = None) -> str:
    """What the ingest does with a note whose rendered bytes differ from the file's: "write"
    (absent, or its bytes, sha256 `current`, are ones the ingest wrote: `ours`; for a fact note
    `marked`, `generated.mark` of them, may be), "trash" (write, the file's bytes put in the
    trash first) or "keep" (edited by hand: left as it is)."""
    if current is None or (ours is not None and (current in ours or marked in ours)):
        return "write"
    if ours is None or regenerate:  # unknown: cannot tell an edit from older bytes; asked
        return "trash"
    return "keep"


def _ingest(vault: Vault, convs: Sequence[Conversation], use_nlp: bool, regenerate: bool,
            done: _Done) -> IngestReport:
    paths: list[str] = []
    generated: list[str] = []  # the same notes by the paths the ingest gives them
    kept: dict[str, None] = {}
    deleted: list[str] = []
    unchanged = turns = sessions = entities = rules = left_out = done.whole = 0
    if done.stopped:  # an attempt stopped, then in conflict (its notes taken back): no other
        raise Cancelled()
    with vault.batch():  # its folder sync first: a note edited on disk is seen as edited
        corpus = vault.corpus()
        stored = dict(zip(corpus.paths, corpus.content_hashes, strict=True))
        gone = forgotten.load(vault.store.state)
        for conv in convs:
            checkpoint()
            if gone:
                kept_turns = without_forgotten(conv, gone)
                left_out += len(conv.turns()) - len(kept_turns.turns())
                conv = kept_turns
            notes, n_rules = _build(conv, use_nlp)
            if gone:
                notes = [(p, t) for p, t in notes if not (gone.path(p) or gone.names(t))]
            notes = carry(corpus, notes)  # corrections stay corrected (corrections.py)
            # entities whose names slug alike (`\ufffdSarah`, `\ufffd\ufffdSarah`) share a path:
            # its last note, as the writes in order leave it (the same bytes again: no write)
            notes = list(dict(notes).items())
            rules += n_rules
            found = Followed(notes)  # every note where the ingest put it: no record read
            if any(p not in stored for p, _ in notes):  # moved, deleted, or new (follow.py)
                found = follow(corpus, stored, Record(vault.store.state), notes,
                               regenerate, namer(vault))
            notes, deleted = found.notes, deleted + list(found.deleted)
            changed = [(p, t) for p, t in notes if stored.get(p) != content_hash(t)]
            # an unchanged transcript (a hook, every turn) reads no record; a followed note's
            # is kept current (where it is, the links `rmh move` rewrote to it: ours)
            if changed or found.origin or found.deleted:
                kept.update(dict.fromkeys(_write(vault, notes, changed, stored, regenerate,
                                                 done, gone, found)))
            # a note an earlier attempt wrote is written, not also unchanged
            unchanged += len({p for p, _ in notes} - {p for p, _ in changed}
                             - done.written.keys())
            paths += [p for p, _ in notes]
            generated += [found.origin.get(p, p) for p, _ in notes]
            turns += len(conv.turns())
            sessions += sum(1 for s in conv.sessions if s.turns)
            done.whole += 1
            if done.stopped:  # the stop that came while it was written (_write)
                raise Cancelled()
    entities = sum(1 for p in generated if "/entities/" in p)
    facts = sum(1 for p in generated if is_fact(p))
    episodes = sum(1 for p in generated if "/episodes/" in p)
    return IngestReport(tuple(c.conversation_id for c in convs), turns, sessions, entities,
                        tuple(done.written), unchanged, tuple(paths), facts, rules,
                        episodes, tuple(kept), tuple(done.trashed.items()), left_out,
                        tuple(deleted))


def _write(vault: Vault, notes: Sequence[tuple[str, str]], changed: Sequence[tuple[str, str]],
           stored: dict[str, str], regenerate: bool, done: _Done,
           gone: forgotten.Forgotten, found: Followed) -> list[str]:
    """Write the `changed` notes of one conversation (`notes`: all of them, where they are;
    `found`: where the user moved some, `follow.follow`) as `verdict` says, under the write
    lock, recording what is written (by generated path); returns the notes kept as edited.
    EditConflict when an `rmh forget` added to the record since `gone` was read (the notes
    were built from turns it erased: the attempt starts again), or when a note taken as moved
    or deleted is at its generated path again (another ingest wrote it since the vault was
    read: this one would have left it out)."""
    with vault.locked():
        if forgotten.load(vault.store.state) != gone:
            raise EditConflict(f"{STATE_DIR}/{forgotten.NAME}", "read before the build", None)
        for path in (*found.origin.values(), *found.deleted):  # moved or deleted: absent
            if vault.store.stat(path) is not None:  # when the corpus was read; written since
                raise EditConflict(path, "absent when the ingest read the vault", None)
        record = Record(vault.store.state)
        origin = found.origin
        plan = [(p, t, _verdict(vault, p, found, stored.get(p), record, regenerate))
                for p, t in changed]
        writes = [(p, t) for p, t, v in plan if v != "keep"]
        planned = {p: record.hashes(origin.get(p, p)) for p, _ in writes}  # not yet written
        before = dict(planned)  # the hashes the notes had before
        for path, text in writes:
            record.plan(origin.get(path, path), mark(origin.get(path, path), text))
        record.save()  # before the writes: a kill between leaves both versions ours
        try:
            # a kill midway: the next open finishes them, trash copies first (none left beside
            # a note not rewritten); indexed together when all are written
            trash = [p for p, _, v in plan if v == "trash"]
            with vault.journalled(writes, trash), vault.indexed_together() as put:
                for path in trash:
                    done.copy(vault, path, stored[path])
                record.journalled([origin.get(p, p) for p, _ in writes])  # none pending now
                landed: list[Landed] = []  # this conversation's notes written (take_back.py)
                try:
                    todo = sum(1 for _, _, v in plan if v != "keep")
                    for path, text, v in plan:
                        if v == "keep":
                            continue
                        try:  # a stop: the notes put so far taken back (take_back.py), or
                            if not done.stopped:  # from half on the rest written: at most as
                                checkpoint()  # many writes as taking back makes
                        except Cancelled:
                            if 2 * len(landed) < todo:
                                raise
                            done.stopped = True
                        was, gen = before_write(vault, path, path in stored), origin.get(path, path)
                        landed.append(Landed(path, path not in stored, was, content_hash(text),
                                             gen, mark(gen, text)))  # first: a Ctrl-C in `put`
                        put(path, text, stored.get(path), path in stored)
                        done.written[path] = None
                        stored[path] = content_hash(text)  # a later conversation's note: ours
                        record.wrote(gen, landed[-1].marked)
                        del planned[path]
                except BaseException as exc:  # the record first; a stop (Ctrl-C too) or a
                    # refusal (a folder not writable, a conflict: half a conversation stayed,
                    # its links dangling, STORE14) takes back; a full disk is the journal's
                    back = landed if isinstance(exc, (Cancelled, KeyboardInterrupt)) or (
                        isinstance(exc, VaultError) and not is_disk_full(exc)) else []
                    for path in take_back(vault, put, back, record, before, planned, origin):
                        done.written.pop(path, None)
                        planned[path] = before[path]
                    raise
            differ = {p for p, _ in changed}
            for path, text in notes:  # notes as generated (an older rmh's; links `rmh move`
                gen = origin.get(path, path)  # rewrote as the ingest now does): ours
                record.found_at(gen, path if path in origin else None)
                if path not in differ and (mark(gen, text) not in (record.hashes(gen) or ())
                                           or record.pending(gen)):
                    record.wrote(gen, mark(gen, text))
        finally:
            for path, hashes in planned.items():  # not written (a conflict, a stop)
                record.restore(origin.get(path, path), hashes)
            record.save()
    return [p for p, _, v in plan if v == "keep"]


def _verdict(vault: Vault, path: str, found: Followed, current: str | None, record: Record,
             regenerate: bool) -> str:
    """`verdict` for the note at `path`. Its bytes are read only when their hash is not the
    ingest's, and only for a fact note (a correction is no edit: `mark`) or while some note is
    followed (links `rmh move` or an editor rewrote to it: `follow.unlink` undoes them)."""
    gen = found.origin.get(path, path)
    ours = record.hashes(gen)
    if current is None or ours is None or current in ours or not (is_fact(gen) or found.names):
        return verdict(current, ours, regenerate)
    text = vault.read(path, learn=False).text
    marked = {mark(gen, text), mark(gen, unlink(text, found.names))}
    return verdict(current, ours, regenerate, next((m for m in marked if m in ours), None))
