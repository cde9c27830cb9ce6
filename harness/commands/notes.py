"""Vault commands: init, index, search, read, write, move, delete, links, backlinks, doctor,
demo."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.compose import open_vault
from harness.config import load
from vault import Vault

from .output import CommandFailed, emit


def configured_vault(args: argparse.Namespace, *, dense: bool = True) -> Vault:
    """The configured vault (a ConfigError reaches `rmh`'s main: one line, exit 1)."""
    return open_vault(load(vault=args.vault), dense=dense)


def cmd_init(args: argparse.Namespace) -> int:
    with Vault.init(load(vault=args.vault).require_vault()) as v:
        report = v.sync()
        emit(args, {"vault": str(v.root), "notes": v.index.counts()["notes"],
                    "sync": report.to_json()},
             f"initialised {v.root} ({v.index.counts()['notes']} notes)")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    with configured_vault(args, dense=not args.no_dense) as v:
        report = v.sync()
        prepared = v.engine.prepare(v.corpus(), progress=None if args.json else _progress)
        counts = v.index.counts()
        emit(args, {"sync": report.to_json(), "counts": counts, "prepared": prepared},
             f"indexed {counts['notes']} notes (+{len(report.added)} ~{len(report.updated)} "
             f"-{len(report.removed)} renamed {len(report.renamed)}); "
             f"skipped {len(report.skipped)}")
    return 0


def _progress(done: int, total: int, what: str) -> None:
    width = 30
    filled = width * done // max(total, 1)
    end = "\n" if done >= total else ""
    print(f"\r{what} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end=end,
          file=sys.stderr, flush=True)


def cmd_search(args: argparse.Namespace) -> int:
    cfg = load(vault=args.vault)
    with open_vault(cfg, dense=not args.no_dense) as v:
        k = args.k if args.k is not None else cfg.search.k
        result = v.search(args.query, k=k, session=args.session,
                          as_of=parse_time(args.as_of), learn=not args.no_learn)
        if args.json:
            print(json.dumps(result.to_json(receipt=True), ensure_ascii=False, sort_keys=True))
            return 0
        if not result.hits:
            print("no hits")
        for rank, hit in enumerate(result.hits, 1):
            print(f"{rank:>2}. {hit.score:.6f}  {hit.note}")
            if args.explain:
                print(_explain(hit.receipt))
        if args.explain:
            print("basis: " + json.dumps(result.basis, sort_keys=True))
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
        if isinstance(value, float) and value:
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
        rec = v.write(args.note, content, session=args.session)
        emit(args, {"note": rec.note, "id": rec.id}, f"wrote {rec.note}")
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

    add("init", cmd_init, "make a folder an rmh vault and index it")
    p = add("index", cmd_index, "bring the index up to date (embeddings included)")
    p.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
    p = add("search", cmd_search, "hybrid search over the vault")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=None,
                   help="number of hits (default: [search] k in rmh.toml, else 10)")
    p.add_argument("--explain", action="store_true", help="print each hit's receipt")
    p.add_argument("--as-of", default=None, metavar="TIME",
                   help="rank with the learned state as it was at TIME (Unix seconds or ISO "
                   "8601; replayed from the log) and record nothing")
    p.add_argument("--no-learn", action="store_true", help="record nothing (no usage event)")
    p.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
    p = add("read", cmd_read, "print a note (path or title)")
    p.add_argument("note")
    p = add("write", cmd_write, "create or replace a note with the text on stdin")
    p.add_argument("note")
    for name in ("search", "read", "write"):  # CLI use counts within a named session
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
