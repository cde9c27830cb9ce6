"""Learning commands: `rmh replay`, `rmh archive NOTE`, `rmh restore NOTE`, `rmh learning`.

`learning_health(vault, ledger, now)` is the learning section of `rmh doctor`. The ledger file
is VAULT/.rmh/learned.sqlite; the wall clock is read here (the harness), never in vault/.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import time
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from harness.compose import learning_vault, liveness, open_vault, reading_ledger, search_params
from harness.config import load
from harness.errors import Refused
from vault import LearnedState, Ledger, LedgerError, NoteNotFound, Vault, passed_factor

from .operation_commands import session_type
from .output import counted, emit
from .report_text import report_text


def learning_health(vault: Vault, ledger: Ledger, now: float | None = None) -> dict[str, Any]:
    """The learning section of `rmh doctor`: evidence counts, forward citations, Pearson(exposure,
    Q), edge weight distribution, rows naming missing notes (must be 0), replay consistency,
    open sessions with their liveness, recovered sessions, and warnings."""
    report = ledger.health(vault.corpus().ids, time.time() if now is None else now)
    try:
        report["replay_matches"] = ledger.replay() == ledger.state
    except LedgerError as exc:  # a damaged event (vault damage.py): reported, not raised
        report["replay_matches"], report["replay_error"] = False, str(exc)
    alive = liveness(ledger, vault.root)
    verdicts = {s: alive(s) for s in report["open_sessions"]}
    report["open_sessions"] = [
        {"session": s, "alive": {True: "yes", False: "dead", None: "unknown (no process "
                                 "recorded; recovered after the idle timeout)"}[v],
         **{k: x for k, x in ledger.session_owner(s).items()
            if k in ("pid", "pid_start", "pid_ns")}}
        for s, v in sorted(verdicts.items())]
    report["warnings"] = learning_warnings(report, dead=[s for s, v in verdicts.items()
                                                         if v is False])
    return report


def learning_warnings(report: dict[str, Any], dead: list[str]) -> list[str]:
    """What in the learning audit needs a person's attention (empty when nothing)."""
    out = []
    r = report.get("exposure_q_pearson")
    if isinstance(r, float) and r < 0.0:
        out.append(f"exposure/Q correlation is negative ({r:+.3f}): notes shown more often "
                   "are learned as less useful; check the use signals reach learning")
    if dead:
        out.append(f"dead sessions still open: {', '.join(sorted(dead))}")
    if report.get("missing_rows"):
        out.append(f"{report['missing_rows']} learned rows name notes missing from the index")
    if report.get("replay_error"):
        out.append(f"the learning log does not replay: {report['replay_error']}")
    elif not report.get("replay_matches", True):
        out.append("stored learned state differs from its replay: run `rmh replay`")
    return out


def state_digest(state: LearnedState) -> str:
    """sha256 of the state's canonical form: equal digests mean bit-identical learned numbers,
    and equal numbers give equal digests (in any process: the repr of a set follows the
    process's string hashing, and that of a dict the order its keys were added in)."""
    return hashlib.sha256(repr(_canonical(state)).encode("utf-8")).hexdigest()[:16]


def _canonical(x: object) -> object:
    """`x` with every dict and set as a sorted tuple (by the keys' canonical reprs), every
    float as its exact hex, dataclasses as (name, fields): the same for equal values."""
    if is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__, tuple((f.name, _canonical(getattr(x, f.name)))
                                        for f in fields(x)))
    if isinstance(x, dict):
        return tuple(sorted(((_canonical(k), _canonical(v)) for k, v in x.items()),
                            key=lambda kv: repr(kv[0])))
    if isinstance(x, set | frozenset):
        return tuple(sorted((_canonical(e) for e in x), key=repr))
    if isinstance(x, list | tuple):
        return tuple(_canonical(e) for e in x)
    return float.hex(x) if isinstance(x, float) else x


def cmd_replay(args: argparse.Namespace) -> int:
    v, ledger = learning_vault(args.vault, reads_only=args.check or args.until is not None)
    with v:
        try:
            if args.until is not None:  # the state at a point of the log: shown, never stored
                at = ledger.replay(until=args.until)
                live = set(v.corpus().ids)
                doc = {"until": args.until, "last_seq": at.last_seq, "notes": len(at.notes),
                       "pairs": len(at.pairs), "sessions": len(at.sessions),
                       "searches": at.searches, "digest": state_digest(at),
                       "q": {v.path_of(n) if n in live else str(n): at.notes[n].q
                             for n in sorted(at.notes) if at.notes[n].q != 0.0}}
                emit(args, doc, f"state at seq {at.last_seq}: {counted(doc['notes'], 'note')}, "
                                f"{counted(doc['pairs'], 'pair')}, "
                                f"{counted(doc['sessions'], 'session')}, "
                                f"digest {doc['digest']}")
                return 0
            stored = ledger.state
            rebuilt = ledger.replay()
            same = rebuilt == stored
            if not args.check:
                ledger.rebuild()
            doc = {"events": sum(ledger.event_counts().values()), "matched": same,
                   "notes": len(rebuilt.notes), "pairs": len(rebuilt.pairs),
                   "rewritten": not args.check, "digest": state_digest(rebuilt)}
        finally:
            ledger.close()
    verb = "checked" if args.check else "rebuilt"
    emit(args, doc, f"{verb} learned state from {counted(doc['events'], 'event')}: "
                    f"{counted(doc['notes'], 'note')}, {counted(doc['pairs'], 'pair')}; stored "
                    "state "
                    f"{'matched' if same else 'DIFFERED'}")
    return 0 if same or not args.check else 1


_COPY_TAG = re.compile(r" \((\d+)\)(?=\.md$)", re.IGNORECASE)  # `rmh delete`'s " (n)" copies


def trashed(state: Path, note: str) -> list[str]:
    """The trash copies (vault paths under .rmh/trash, sorted) of `note`, a vault path or a
    bare name, caseless: what `rmh restore` names when it is given a deleted note, which it
    cannot bring back (it restores archived notes; a deleted note's file is moved back).
    `state` is the vault's `.rmh` as its open holds it (`Vault.state_path`): never another
    folder put at that name since."""
    trash = os.path.join(state, "trash")
    if os.path.islink(trash):  # os.walk follows its top: a link there is no trash of rmh's
        return []
    want = note.strip().lstrip("/").casefold()
    want = want if want.endswith(".md") else want + ".md"
    out: list[tuple[str, int, str]] = []
    for folder, _, files in os.walk(trash):  # follows no symlink below the top
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), trash).replace(os.sep, "/")
            tag = _COPY_TAG.search(rel)  # a note's own name may end " (n)": first as is
            for base, n in ((rel.casefold(), 0), (_COPY_TAG.sub("", rel).casefold(),
                                                  int(tag[1]) if tag else 0)):
                if base == want or ("/" not in want and base.rsplit("/", 1)[-1] == want):
                    out.append((base, n, ".rmh/trash/" + rel))
                    break
    return [rel for *_, rel in sorted(out)]  # by note, then copy: `x.md`, `x (1).md`, ...


def _resolve_archived(v: Vault, note: str) -> int:
    """`rmh restore`'s note; one not found that the trash holds says where it is."""
    try:
        return v.resolve(note, as_link=False)
    except NoteNotFound as e:
        copies = trashed(v.state_path, note)
        if not copies:
            raise
        shown = ", ".join(repr(c) for c in copies[:5]) + (" ..." if len(copies) > 5 else "")
        found = NoteNotFound(note)  # its kind and data; the message says where it went
        copy, one = ("copy is", "it") if len(copies) == 1 else ("copies are", "one")
        found.args = (f"{e} (deleted: `rmh restore` brings back an archived note, not a "
                      f"deleted one; its trash {copy} {shown}: move {one} back into the "
                      f"vault to restore it)",)
        raise found from e


def _flag(args: argparse.Namespace, archive: bool) -> int:
    v, ledger = learning_vault(args.vault)
    with v:  # a state change: a name several notes share is refused (README)
        note_id = (v.resolve(args.note, as_link=False) if archive
                   else _resolve_archived(v, args.note))
        path = v.path_of(note_id)
        try:
            if archive:
                ledger.archive(note_id, time.time(), args.reason)
                changed = True
            else:
                changed = ledger.restore(note_id, time.time())
        finally:
            ledger.close()
    what = "archived" if archive else "restored"
    emit(args, {"note": path, "id": note_id, what: changed},
         f"{what} {path}" if changed else f"{path} was not archived")
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    return _flag(args, archive=True)


def cmd_restore(args: argparse.Namespace) -> int:
    return _flag(args, archive=False)


def cmd_learning(args: argparse.Namespace) -> int:
    if args.note is not None:
        return _note_learning(args)
    v, ledger = learning_vault(args.vault, reads_only=True)
    with v:
        try:
            report = learning_health(v, ledger)
        finally:
            ledger.close()
    emit(args, report, report_text(report))
    return 0 if report["missing_rows"] == 0 and report["replay_matches"] else 1


def _note_learning(args: argparse.Namespace) -> int:
    """`rmh learning NOTE`, on one open of the vault (session 28 opened it three times: for
    the history, then a search with and one without learning, each a sync and an engine)."""
    cfg = load(vault=args.vault)
    usage, ledger = reading_ledger(cfg.require_vault())
    try:  # read only: the vault reads the learned state itself, recording nothing
        v = open_vault(cfg, dense=not args.no_dense, ledger=None if usage else ledger)
    except BaseException:
        ledger.close()
        raise
    with v, contextlib.closing(usage or ledger):  # closing twice is harmless
        note_id = v.resolve(args.note)
        doc = {"note": v.path_of(note_id), **ledger.note_history(note_id)}
        params = search_params(cfg)
        scale = doc["prior_scale"] = params.prior_scale
        # a note surely passed over is demoted on every query with weights.passed
        doc["passed_factor"] = float(passed_factor(doc["passed"], params.weight("passed")))
        doc["multiplier"] = (1.0 + scale * doc["prior"]) * doc["passed_factor"]
        for r in doc["rewards"]:
            r["multiplier_before"] = 1.0 + scale * r["q_before"]
            r["multiplier_after"] = 1.0 + scale * r["q_after"]
        doc["measured"] = measured_effect(v, note_id, _used_query(doc))
    emit(args, doc, _story(doc))
    return 0


def _used_query(doc: dict[str, Any]) -> str | None:
    """The query the note was last used for (else the last that showed it; None: none)."""
    asked = (doc["state"] or {}).get("use_queries", {})
    if asked:
        return str(max(asked.items(), key=lambda kv: (kv[1], kv[0]))[0])
    shown = [e["query"] for e in doc["events"] if e["kind"] == "search" and e.get("query")]
    return str(shown[-1]) if shown else None


def measured_effect(v: Vault, note_id: int, query: str | None) -> dict[str, Any] | None:
    """Learning's whole effect on the note for `query`, measured: the configured search (as
    `rmh search` ranks, recording nothing) with the live learned state and with none (the
    state replayed up to time 0: no event), on the same day. The prior is one factor of it;
    the learned channel, warmth and the others act too, so the ratio of the two scores is
    what a person reading "learning lifts it" needs."""
    if query is None:
        return None
    out: dict[str, Any] = {"query": query}
    day = v.today()
    for name, as_of in (("with", None), ("without", 0.0)):
        hits = v.search(query, k=100, learn=False, as_of=as_of, now=day).hits
        at = [(rank, h.score) for rank, h in enumerate(hits) if h.id == note_id]
        out[name] = {"rank": at[0][0] + 1, "score": at[0][1]} if at else None
    w, wo = out["with"], out["without"]
    out["factor"] = w["score"] / wo["score"] if w and wo and wo["score"] > 0 else None
    return out


def _measured_line(m: dict[str, Any] | None) -> str:
    if m is None:
        return "  measured: no query showed it"
    def at(x: dict[str, Any] | None) -> str:
        return "not in the top 100" if x is None else f"{x['score']:.5f} (rank {x['rank']})"
    factor = "" if m["factor"] is None else f": x{m['factor']:.4f}"
    return (f"  measured on {m['query'][:60]!r} (the last query it was used for, else shown "
            f"by): score {at(m['with'])} with learning, {at(m['without'])} without{factor} "
            f"(every learned signal together)")


def _story(doc: dict[str, Any]) -> str:
    """`rmh learning NOTE` for people: the factor learning applies to the note's score, its
    evidence, then each session's evidence and events, oldest first."""
    st = doc["state"] or {}
    bag = st.get("use_terms" if doc["q"] >= 0 else "skip_terms", {})
    about = ", ".join(t for t, _ in sorted(bag.items(), key=lambda kv: (-kv[1], kv[0]))[:8])
    used = st.get("use_words", {})
    words = ", ".join(t for t, _ in sorted(used.items(), key=lambda kv: (-kv[1], kv[0]))[:8])
    others = ("on a query about other things at most the same, in proportion to the share of "
              "its words the note was used for (x1 on a query sharing none of its words), "
              "never past a note it names"
              if doc["q"] > 0 else "less on others, x1 on a query about other things")
    if doc["passed_factor"] < 1.0:
        others = (f"x{doc['passed_factor']:.4f} of it on every query: passed over surely "
                  f"({doc['passed']:+.4f} x weights.passed)")
    lines = [f"{doc['note']} (id {doc['id']}): prior x{doc['multiplier']:.4f} on a query wholly "
             f"about what it was {'used' if doc['q'] >= 0 else 'skipped'} for, {others} "
             f"(q {doc['q']:+.4f} x prior_scale {doc['prior_scale']})",
             *([_measured_line(doc["measured"])] if "measured" in doc else []),
             f"  about: {about or '-'}",
             f"  found by the words: {words or '-'} (a query holding them adds weights.learned"
             f" x q x the topic gate x their share of its words / (k + rank + 1) to the fused "
             f"score, the gate being the share of the query's phrases it is about (a query "
             f"of one word: 1 when the words above or the about list hold it); never past "
             f"a note the query names)",
             f"  evidence: used {doc['used']:.2f}, examined and skipped {doc['skipped']:.2f}; "
             f"use rate {doc['use_rate']:.3f} (prior {doc['use_mean']:.2f})  "
             f"shown {st.get('shown', 0)}  accesses {st.get('accesses', 0)}  "
             f"sessions used {st.get('recalled', 0)}",
             f"evidence by session ({counted(len(doc['rewards']), 'session')}):"]
    for r in doc["rewards"]:
        parts = "  ".join(f"{k} {x:+.4f}" for k, x in sorted(r["rewards"].items()))
        lines.append(f"  seq {r['seq']:>6}  {r['session']}  {parts}  "
                     f"x{r['multiplier_before']:.4f} -> x{r['multiplier_after']:.4f}"
                     + ("  (recovered)" if r["recovered"] else ""))
    lines.append(f"events ({doc['events_total']}):")
    for e in doc["events"]:
        what = {"search": f"shown at rank {e.get('rank')}: {str(e.get('query', ''))[:60]!r}",
                "linked_from": f"linked from note {e.get('from')}"}.get(e["kind"], e["kind"])
        lines.append(f"  seq {e['seq']:>6}  {e['session'] or '-'}  {what}")
    return "\n".join(lines)


def cmd_end_session(args: argparse.Namespace) -> int:
    v, ledger = learning_vault(args.vault)
    with v:
        try:
            if not ledger.has_session(args.session):
                raise Refused("no_session", f"no session {args.session!r} was started "
                                            "(search or read with --session ID starts one)")
            applied = ledger.end_session(args.session, time.time())
        finally:
            ledger.close()
    emit(args, {"session": args.session, "rewards_applied": applied},
         f"ended {args.session}" if applied else f"{args.session}: not open")
    return 0


def _event_seq(text: str) -> int:
    """argparse `type` of an event sequence number: an integer >= 0 (a usage error else)."""
    try:
        seq = int(text)
    except ValueError:
        seq = -1
    if seq < 0:
        raise argparse.ArgumentTypeError(f"not an event sequence number (0 or more): {text!r}")
    return seq


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add replay, archive, restore and learning to the `rmh` parser."""
    p = sub.add_parser("replay", help="rebuild every learned number from the event log")
    p.add_argument("--check", action="store_true", help="only compare; write nothing")
    p.add_argument("--until", type=_event_seq, default=None, metavar="SEQ",
                   help="show the state as it was right after event SEQ (writes nothing)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_replay)
    p = sub.add_parser("archive", help="take a note out of default search (reversible)")
    p.add_argument("note")
    p.add_argument("--reason", default="manual")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_archive)
    p = sub.add_parser("restore", help="bring an archived note back into search")
    p.add_argument("note")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_restore)
    p = sub.add_parser("learning", help="audit learned state (the learning part of doctor); "
                       "with NOTE, that note's Q, events and rewards")
    p.add_argument("note", nargs="?", default=None)
    p.add_argument("--no-dense", action="store_true",
                   help="with NOTE: measure learning's effect without the dense signal")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_learning)
    p = sub.add_parser("end-session", help="end a session the CLI's --session opened: "
                       "its rewards apply")
    p.add_argument("session", type=session_type())
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_end_session)
