"""Vault commands: init, index, search, read, write, edit, move, delete, links, backlinks,
doctor, demo."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.compose import open_ledger, open_vault
from harness.config import Config, load
from harness.fact_tools import label_hits
from vault import EDIT_KINDS, Edit, Vault

from .output import CommandFailed, emit
from .progress import Progress


def configured_vault(args: argparse.Namespace, *, dense: bool = True) -> Vault:
    """The configured vault (a ConfigError reaches `rmh`'s main: one line, exit 1)."""
    return open_vault(load(vault=args.vault), dense=dense)


def initialise(cfg: Config, *, dense: bool = True) -> dict[str, Any]:
    """Make the configured folder a vault (creating it) and index it fully: the notes, and
    their embeddings unless `dense` is False (so the first search pays for nothing)."""
    # learned.sqlite is made here (so servers started together later find it), but the
    # initial sync runs without learning: nothing has been learned from these notes yet
    open_ledger(cfg.require_vault(), create=True, recover=False).close()
    with open_vault(cfg, dense=dense, create=True, learning=False) as v:
        report = v.sync()
        prepared = v.engine.prepare(v.corpus(), progress=Progress())
        notes = v.index.counts()["notes"]
        return {"vault": str(v.root), "notes": notes, "sync": report.to_json(),
                "prepared": prepared, "dense": v.engine.encoder is not None}


def cmd_init(args: argparse.Namespace) -> int:
    """`rmh init [PATH]`: PATH, else --vault / $RMH_VAULT."""
    if args.path is not None and args.vault is not None and \
            Path(args.path).absolute() != Path(args.vault).absolute():
        raise CommandFailed(f"two vaults given: {args.path} and --vault {args.vault}")
    doc = initialise(load(vault=args.path or args.vault), dense=not args.no_dense)
    emit(args, doc, f"initialised {doc['vault']} ({doc['notes']} notes, "
         f"{doc['prepared']['chunks']} chunks embedded"
         f"{'' if doc['dense'] else '; dense skipped'})")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    """Sync and embed; with --ray the missing embeddings are made on a Ray cluster first
    (harness/ray_jobs.py), so the local embedding step finds everything cached."""
    if args.ray is not None and args.no_dense:
        raise CommandFailed("--ray embeds chunks; it cannot go with --no-dense")
    with configured_vault(args, dense=not args.no_dense) as v:
        report = v.sync()
        doc: dict[str, Any] = {"sync": report.to_json()}
        encoder, cache = v.engine.encoder, v.engine.cache
        if args.ray is not None and encoder is not None and cache is not None:
            from harness.ray_jobs import index_on_ray

            params = (v.engine.params.max_tokens, v.engine.params.max_note_units)
            doc["ray"] = index_on_ray(v.corpus(), encoder, cache, params, args.ray,
                                      args.ray_workers, Progress())
        doc["prepared"] = v.engine.prepare(v.corpus(), progress=Progress())
        counts = doc["counts"] = v.index.counts()
        on_ray = f"; {doc['ray']['embedded']} chunks embedded on Ray" if "ray" in doc else ""
        emit(args, doc,
             f"indexed {counts['notes']} notes (+{len(report.added)} ~{len(report.updated)} "
             f"-{len(report.removed)} renamed {len(report.renamed)}); "
             f"skipped {len(report.skipped)}{on_ray}")
    return 0


MISSING_EMBEDDINGS = ("rmh: some notes have no embeddings yet; embedding them now (run "
                      "`rmh index` to fill them ahead of time, or pass --no-dense)")


def query_text(value: str) -> str:
    """argparse type of a query: not empty (a usage error, exit 2)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("the query must not be empty")
    return value


def positive_int(value: str) -> int:
    """argparse type of -k: an integer of at least 1 (a usage error, exit 2)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def cmd_search(args: argparse.Namespace) -> int:
    cfg = load(vault=args.vault)
    with open_vault(cfg, dense=not args.no_dense) as v:
        k = args.k if args.k is not None else cfg.search.k
        if v.engine.encoder is not None:  # embed what is missing now, saying so on stderr
            v.engine.prepare(v.corpus(), progress=Progress(announce=MISSING_EMBEDDINGS))
        result = v.search(args.query, k=k, session=args.session,
                          as_of=parse_time(args.as_of), learn=not args.no_learn,
                          history=args.history)
        if args.json:
            doc = label_hits(v, result.to_json(receipt=args.explain))  # facts: their trust
            print(json.dumps(doc, ensure_ascii=False, sort_keys=True))
            return 0
        if not result.hits:
            print("no hits")
        elif not result.relevant:  # retrieval/relevance.py: the hits below are the closest
            print("nothing relevant found (the closest notes follow)")
        trusts = [h.get("trust") for h in label_hits(v, result.to_json())["hits"]]
        for rank, (hit, trust) in enumerate(zip(result.hits, trusts, strict=True), 1):
            print(f"{rank:>2}. {hit.score:.6f}  {hit.note}")
            if (trust is not None and trust["state"] != "provisional") or (
                    trust is not None and not trust["current"]):
                print(f"    [{'current' if trust['current'] else 'history'}: "
                      f"{trust['state']} by {trust['by']} at {trust['at']}]")
            if hit.snippet:
                print(f"    {hit.snippet}")
            if args.explain:
                print(_explain(hit.receipt))
        if args.explain:
            print("basis: " + json.dumps(result.basis, sort_keys=True))
            if result.relevance is not None:
                print("relevance: " + json.dumps(result.relevance.to_json(), sort_keys=True))
            print("stages:")
            for stage, what in sorted(result.stages.items()):
                print(f"    {stage}: {what}")
    return 0


def parse_time(text: str | None) -> float | None:
    """--as-of: Unix seconds ("1733011200.5") or an ISO 8601 time ("2024-12-01T00:00:00Z")."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise CommandFailed(f"--as-of {text!r}: not Unix seconds or an ISO time") from exc
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def _explain(receipt: dict[str, Any]) -> str:
    """A receipt as two indented lines: each signal's raw score and rank, then the stages."""
    parts = []
    for name, sig in sorted(receipt.get("signals", {}).items()):
        rank = "-" if sig.get("rank") is None else f"#{sig['rank'] + 1}"
        parts.append(f"{name} {sig.get('raw', 0.0):.3f} ({rank})")
    tail = [f"fused {receipt.get('fused', 0.0):.4f}"]
    for key in ("context", "named", "warmth", "prior", "rerank"):
        value = receipt.get(key)
        if key == "prior" and isinstance(value, float) and value:
            base = receipt.get("fused", 0.0) + receipt.get("context", 0.0) + \
                receipt.get("named", 0.0) + receipt.get("warmth", 0.0)
            tail.append(f"prior x{receipt.get('prior_factor', 1.0):.3f} "
                        f"({value:+.4f} on {base:.4f})")
        elif isinstance(value, float) and value:
            tail.append(f"{key} {value:+.4f}" if key != "rerank" else f"rerank {value:.3f}")
    return "    " + "  ".join(parts) + "\n    " + "  ".join(tail)


def cmd_read(args: argparse.Namespace) -> int:
    with configured_vault(args, dense=False) as v:
        rec = v.read(args.note, session=args.session)
        if args.json:
            print(json.dumps(rec.to_json(), ensure_ascii=False, sort_keys=True))
        else:
            sys.stdout.write(rec.text)
    return 0


def cmd_write(args: argparse.Namespace) -> int:
    content = sys.stdin.buffer.read().decode("utf-8", errors="strict")
    with configured_vault(args, dense=False) as v:
        rec = v.write(args.note, content, session=args.session, overwrite=args.overwrite,
                      expected_hash=args.expected_hash)
        emit(args, {"note": rec.note, "id": rec.id, "hash": rec.hash}, f"wrote {rec.note}")
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    text = args.text if args.text is not None else (
        "" if args.kind == "replace" and args.find is None else
        sys.stdin.buffer.read().decode("utf-8", errors="strict"))
    change = Edit(args.kind, text, heading=args.heading, find=args.find,
                  expected_count=args.count)
    with configured_vault(args, dense=False) as v:
        rec = v.edit(args.note, change, session=args.session, expected_hash=args.expected_hash)
        emit(args, {"note": rec.note, "id": rec.id, "hash": rec.hash},
             f"edited {rec.note} ({args.kind})")
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    with configured_vault(args, dense=False) as v:
        res = v.move(args.old, args.new)
        emit(args, res.to_json(),
             f"moved {res.old} -> {res.note}; rewrote links in {len(res.rewritten)} notes")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    with configured_vault(args, dense=False) as v:
        trashed = v.delete(args.note)
        emit(args, {"trash": trashed}, f"moved to {trashed}")
    return 0


def cmd_links(args: argparse.Namespace) -> int:
    with configured_vault(args, dense=False) as v:
        links = v.links(args.note)
        emit(args, {"links": [ln.to_json() for ln in links]},
             "\n".join(f"{ln.target} -> {ln.resolved or '(dangling)'}" for ln in links))
    return 0


def cmd_backlinks(args: argparse.Namespace) -> int:
    with configured_vault(args, dense=False) as v:
        back = v.backlinks(args.note)
        emit(args, {"backlinks": back}, "\n".join(back))
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from .health import doctor_report, print_doctor

    with configured_vault(args, dense=False) as v:
        report: dict[str, Any] = doctor_report(v)
        if args.json:
            print(json.dumps(report, ensure_ascii=False, sort_keys=True))
        else:
            print_doctor(report)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import write_demo_vault

    target = Path(args.path).absolute()
    count = write_demo_vault(target)
    with open_vault(load(vault=target), dense=not args.no_dense) as v:
        print(f"demo vault with {count} notes at {target}")
        for query in ("who owns the billing service?", "what broke on Monday"):
            print(f"\n$ rmh --vault {target} search {json.dumps(query)}")
            for rank, hit in enumerate(v.search(query, k=3).hits, 1):
                print(f"{rank:>2}. {hit.score:.6f}  {hit.note}")
    return 0


def register(sub: Any) -> None:
    """Add the vault commands to the `rmh` parser."""

    def add(name: str, func: Any, helptext: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=helptext, description=helptext)
        p.add_argument("--json", action="store_true", help="print one JSON document")
        p.set_defaults(func=func)
        return p

    p = add("init", cmd_init, "make a folder an rmh vault and index it")
    p.add_argument("path", nargs="?", default=None,
                   help="the folder (default: --vault, else $RMH_VAULT); created if missing")
    p.add_argument("--no-dense", action="store_true",
                   help="skip embeddings (the ONNX embedder); `rmh index` fills them later")
    p = add("index", cmd_index, "bring the index up to date (embeddings included)")
    p.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="embed the missing chunks on a Ray cluster first: 'local' (a new "
                   "one on this machine, for this run), 'auto' (RAY_ADDRESS, else the one "
                   "`ray start` runs here) or ray://HOST:10001; needs `pip install 'rmh[ray]'`")
    p.add_argument("--ray-workers", type=positive_int, default=None, metavar="N",
                   help="embedding actors on Ray (default: the cluster's CPUs; 'local': "
                   "this machine's cores)")
    p = add("search", cmd_search, "hybrid search over the vault")
    p.add_argument("query", type=query_text)
    p.add_argument("-k", type=positive_int, default=None,
                   help="number of hits (default: [search] k in rmh.toml, else 10)")
    p.add_argument("--explain", action="store_true",
                   help="print each hit's receipt (with --json: receipts and stages)")
    p.add_argument("--as-of", default=None, metavar="TIME",
                   help="rank with the learned state as it was at TIME (Unix seconds or ISO "
                   "8601; replayed from the log) and record nothing")
    p.add_argument("--no-learn", action="store_true", help="record nothing (no usage event)")
    p.add_argument("--history", action="store_true",
                   help="also rejected and superseded facts, after the current ones")
    p.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
    p = add("read", cmd_read, "print a note (path or title)")
    p.add_argument("note")
    p = add("write", cmd_write,
            "create a note (or replace one: --overwrite) with the text on stdin")
    p.add_argument("note")
    p.add_argument("--overwrite", action="store_true", help="replace the note if it exists")
    p.add_argument("--expected-hash", metavar="SHA256", default=None,
                   help="refuse unless the file still has this hash (`read --json` gives it)")
    p = add("edit", cmd_edit,
            "change part of a note: append, prepend, a section, find-and-replace")
    p.add_argument("note")
    p.add_argument("kind", choices=EDIT_KINDS)
    p.add_argument("--text", default=None,
                   help="the new text (default: stdin; for replace, empty when --find only)")
    p.add_argument("--heading", default=None, help="section: the heading ('## Plans')")
    p.add_argument("--find", default=None, help="replace: the exact text to find")
    p.add_argument("--count", type=positive_int, default=1,
                   help="replace: how many occurrences there must be (default 1)")
    p.add_argument("--expected-hash", metavar="SHA256", default=None,
                   help="refuse unless the file still has this hash (`read --json` gives it)")
    for name in ("search", "read", "write", "edit"):  # CLI use counts within a named session
        sub.choices[name].add_argument(
            "--session", default=None, metavar="ID",
            help="attribute this use to session ID (learning; `rmh end-session ID` ends it)")
    p = add("move", cmd_move, "rename a note and rewrite the links to it")
    p.add_argument("old")
    p.add_argument("new")
    p = add("delete", cmd_delete, "move a note to .rmh/trash/")
    p.add_argument("note")
    p = add("links", cmd_links, "a note's outgoing links")
    p.add_argument("note")
    p = add("backlinks", cmd_backlinks, "the notes linking to a note")
    p.add_argument("note")
    add("doctor", cmd_doctor, "health report: links, parse errors, orphans, sandbox, learning")
    p = add("demo", cmd_demo, "create a small sample vault and search it")
    p.add_argument("path", nargs="?", default="rmh-demo-vault")
    p.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
