"""Fact notes: one plain markdown note per L2 fact (or L3 rule), readable in Obsidian.

Path ``conversations/<cid>/facts/<sentence>.md`` (the sentence is the title, e.g. "alice lives
in rome"; a clash after slugging gets " (2)", " (3)", ... in (subject, key, value) order).
Promotion to L3 changes the frontmatter only, never the path, so the note keeps its stable id.

Frontmatter: tier (L2 | L3), kind (preference | fact | relation | commitment), conversation,
subject, key, value, statement, said (the first wording), confidence, first_observed,
last_confirmed, confirmations, sessions, sources (wiki-links to the turns), subject_note and
value_note (wiki-links to the entity notes, when the entity has one), conflicts_with (the other
values of a single-valued key, kept side by side), supersedes (on the most recently stated value
of a conflict: the values it replaces; nothing is deleted), and for a typed relation the field
named after it (works_on, owns, depends_on, reports_to, uses, affected_by, supersedes) whose
value is a list of wiki-links. Subject entity notes carry the same relation fields
(`entity_relation_fields`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..notes.note import render
from .facts import FactRecord, conflict_groups, latest
from .layout import fact_path, link
from .lifecycle import (
    PROMOTE_CONFIDENCE,
    PROMOTE_DAYS,
    PROMOTE_SESSIONS,
    Relation,
    promotable,
    relation_fields,
)

EVIDENCE_MAX = 50


def fact_paths(cid: str, records: Sequence[FactRecord]) -> dict[tuple[str, str, str], str]:
    """(subject, key, value) -> note path, unique within the conversation."""
    out: dict[tuple[str, str, str], str] = {}
    used: set[str] = set()
    for r in sorted(records, key=lambda r: r.triple):
        path, n = fact_path(cid, r.sentence), 1
        while path.casefold() in used:
            n += 1
            # cut so that the slug keeps the number (`slug` keeps 120 characters): two long
            # sentences sharing their first 120 made this loop forever (CONV7)
            path = fact_path(cid, f"{r.sentence[:100]} ({n})")
        used.add(path.casefold())
        out[r.triple] = path
    return out


def _target_link(value: str, ent_paths: Mapping[str, str]) -> str:
    # An entity without a note of its own is an unresolved link: Obsidian shows it as a stub.
    return link(ent_paths[value], value) if value in ent_paths else f"[[{value}]]"


def relations(records: Sequence[FactRecord]) -> tuple[Relation, ...]:
    """The typed relations the facts state, in (subject, type, target) order."""
    return tuple(sorted(
        (Relation(r.relation, r.fact.subject, r.fact.value) for r in records if r.relation),
        key=lambda x: (x.source, x.type, x.target)))


def entity_relation_fields(records: Sequence[FactRecord], key: str,
                           ent_paths: Mapping[str, str]) -> dict[str, list[str]]:
    """Relation frontmatter fields of the entity `key` ({type: [wiki-links]})."""
    return relation_fields(relations(records), key, lambda t: _target_link(t, ent_paths))


def _promotion_line(r: FactRecord) -> str:
    f = r.fact
    days = (f.last_confirmed - f.first_observed).days
    return (f"confidence {f.confidence:.3f} >= {PROMOTE_CONFIDENCE}, "
            f"{len(f.sessions)} session(s) >= {PROMOTE_SESSIONS}, "
            f"{days} day(s) >= {PROMOTE_DAYS}: {'yes' if promotable(f) else 'not yet'}")


def _note(r: FactRecord, cid: str, paths: Mapping[tuple[str, str, str], str],
          ent_paths: Mapping[str, str], rivals: Sequence[FactRecord], newest: bool) -> str:
    f = r.fact
    tier = "L3" if promotable(f) else "L2"
    fm: dict[str, Any] = {
        "tier": tier, "kind": r.kind, "conversation": cid, "subject": f.subject,
        "key": f.key, "value": f.value, "statement": r.sentence, "said": r.said,
        "confidence": round(f.confidence, 4), "first_observed": f.first_observed.isoformat(),
        "last_confirmed": f.last_confirmed.isoformat(), "confirmations": f.confirmations,
        "sessions": list(f.sessions),
        "sources": [link(e.path, e.turn_id) for e in r.evidence[:EVIDENCE_MAX]],
    }
    if f.subject in ent_paths:
        fm["subject_note"] = link(ent_paths[f.subject], f.subject)
    if f.value in ent_paths:
        fm["value_note"] = link(ent_paths[f.value], f.value)
    if rivals:
        fm["conflicts_with"] = [link(paths[o.triple], o.fact.value) for o in rivals]
        if newest:
            fm["supersedes"] = [link(paths[o.triple], o.fact.value) for o in rivals]
    if r.relation:
        fm[r.relation] = [_target_link(f.value, ent_paths)]
    label = "Rule (L3)" if tier == "L3" else "Fact (L2)"
    body = [f"# {r.sentence}", "",
            f"{label}, {r.kind}: confidence {f.confidence:.3f}, confirmed "
            f"{f.confirmations} time(s) in {len(f.sessions)} session(s), first observed "
            f"{f.first_observed.isoformat()}, last confirmed {f.last_confirmed.isoformat()}.",
            "", f"> {r.said}", "", "## Evidence", ""]
    body += [f"- {e.when.isoformat()} {link(e.path, e.turn_id)}" for e in r.evidence[:EVIDENCE_MAX]]
    if rivals:
        body += ["", "## Conflicting values (kept side by side, never overwritten)", ""]
        for o in sorted((r, *rivals), key=lambda x: (-x.fact.confidence, x.fact.value)):
            g = o.fact
            body.append(
                f"- {link(paths[o.triple], g.value)}: confidence {g.confidence:.3f}, "
                f"{g.confirmations} confirmation(s), {g.first_observed.isoformat()}.."
                f"{g.last_confirmed.isoformat()}, first said in "
                f"{link(o.evidence[0].path, o.evidence[0].turn_id)}")
    body += ["", "## Promotion to L3", "", f"- {_promotion_line(r)}"]
    return render(fm, "\n".join(body) + "\n")


def fact_notes(cid: str, records: Sequence[FactRecord],
               ent_paths: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every fact note of one conversation, as (path, text), in path order."""
    paths = fact_paths(cid, records)
    groups = conflict_groups(records)
    out: list[tuple[str, str]] = []
    for r in records:
        group = groups.get((r.fact.subject, r.fact.key), [])
        rivals = sorted((o for o in group if o.triple != r.triple), key=lambda o: o.triple)
        newest = bool(group) and latest(group).triple == r.triple
        out.append((paths[r.triple], _note(r, cid, paths, ent_paths, rivals, newest)))
    return sorted(out)
