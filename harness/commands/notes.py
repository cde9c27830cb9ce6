"""Vault commands: init, index, doctor, demo; and, in their place in `rmh --help`, the commands
that are operations (search, read, write, edit, move, delete, links, backlinks:
harness.commands.vault_commands, generated from the operation table)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.compose import open_ledger, open_vault
from harness.config import Config, load
from vault import ReadOnlyVault, Vault

from . import vault_commands
from .output import CommandFailed, counted, emit, json_line
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
        report = brought_in(v)
        prepared = v.prepare(progress=Progress())
        notes = v.counts()["notes"]
        return {"vault": str(v.root), "notes": notes, "sync": report,
                "prepared": prepared, "dense": v.dense}


def brought_in(v: Vault) -> dict[str, Any]:
    """A full sync now, reported with what the open's own sync found before it (`opened`):
    the changes this process brought into the index, which the open's sync mostly made."""
    now, first = v.sync(), v.opened
    if first is None:
        return now.to_json()
    return {**now.to_json(),
            "added": sorted({*first.added, *now.added}),
            "updated": sorted({*first.updated, *now.updated}),
            "removed": sorted({*first.removed, *now.removed}),
            "renamed": [list(pair) for pair in (*first.renamed, *now.renamed)],
            "errors": [*first.errors, *now.errors]}


def cmd_init(args: argparse.Namespace) -> int:
    """`rmh init [PATH]`: PATH, else --vault / $RMH_VAULT."""
    if args.path is not None and args.vault is not None and \
            Path(args.path).absolute() != Path(args.vault).absolute():
        raise CommandFailed(f"two vaults given: {args.path} and --vault {args.vault}")
    doc = initialise(load(vault=args.path or args.vault), dense=not args.no_dense)
    emit(args, doc, f"initialised {doc['vault']} ({counted(doc['notes'], 'note')}, "
         f"{counted(doc['prepared']['chunks'], 'chunk')} embedded"
         f"{'' if doc['dense'] else '; dense skipped'})")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    """Sync and embed; with --ray the missing embeddings are made on a Ray cluster first
    (harness/ray_jobs.py), so the local embedding step finds everything cached."""
    if args.ray is not None and args.no_dense:
        raise CommandFailed("--ray embeds chunks; it cannot go with --no-dense")
    with configured_vault(args, dense=not args.no_dense) as v:
        if v.read_only:  # no sync can be stored: "indexed" with new notes left out was a lie
            raise ReadOnlyVault("the index")
        report = brought_in(v)
        doc: dict[str, Any] = {"sync": report}
        setup = v.embedding_setup()
        if args.ray is not None and setup is not None:
            from harness.ray_jobs import index_on_ray

            encoder, cache, max_tokens, max_note_units = setup
            doc["ray"] = index_on_ray(v.corpus(), encoder, cache, (max_tokens, max_note_units),
                                      args.ray, args.ray_workers, Progress())
        doc["prepared"] = v.prepare(progress=Progress(), retrain=True)  # a stale IVF too
        counts = doc["counts"] = v.counts()
        on_ray = (f"; {counted(doc['ray']['embedded'], 'chunk')} embedded on Ray"
                  if "ray" in doc else "")
        emit(args, doc,
             f"indexed {counted(counts['notes'], 'note')} (+{len(report['added'])} "
             f"~{len(report['updated'])} -{len(report['removed'])} renamed "
             f"{len(report['renamed'])}); skipped {len(report['skipped'])}{on_ray}")
    return 0


def positive_int(value: str) -> int:
    """argparse type of -k: an integer of at least 1 (a usage error, exit 2)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def folder_arg(value: str) -> str:
    """argparse type of init's and demo's PATH: not empty. `rmh init ""` initialised
    $RMH_VAULT and `rmh demo ""` wrote ./rmh-demo-vault: the empty word read as no PATH."""
    if not value:
        raise argparse.ArgumentTypeError("the folder must not be empty")
    return value


def cmd_doctor(args: argparse.Namespace) -> int:
    from .health import dense_health, doctor_report, print_doctor, rerank_health

    cfg = load(vault=args.vault)
    # an erasure left pending on a full disk is tried again here even if no space was freed;
    # a reranker that cannot load is reported below, not a refusal of the whole report
    with open_vault(cfg, dense=False, retry_at_rest=True, rerank=False) as v:
        report: dict[str, Any] = {**doctor_report(v, settle_leftovers=args.settle_leftovers),
                                  "rerank": rerank_health(cfg)}
        notes = int(report["vault"]["counts"]["notes"])
    report["dense"] = dense_health(cfg, notes)
    if args.json:
        print(json_line(report))
    else:
        print_doctor(report)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import write_demo_vault

    if args.path is not None and args.vault is not None and \
            Path(args.path).absolute() != Path(args.vault).absolute():
        raise CommandFailed(f"two vaults given: {args.path} and --vault {args.vault}")
    target = Path(args.path or args.vault or "rmh-demo-vault").absolute()  # never $RMH_VAULT
    count = write_demo_vault(target)
    lines = [f"demo vault with {counted(count, 'note')} at {target}"]
    searches = []
    with open_vault(load(vault=target), dense=not args.no_dense) as v:
        for query in ("who owns the billing service?", "what broke on Monday"):
            hits = [{"note": hit.note, "score": hit.score} for hit in v.search(query, k=3).hits]
            searches.append({"query": query, "hits": hits})
            lines.append(f"\n$ rmh --vault {target} search {json.dumps(query)}")
            lines += [f"{rank:>2}. {hit['score']:.6f}  {hit['note']}"
                      for rank, hit in enumerate(hits, 1)]
    emit(args, {"vault": str(target), "notes": count, "searches": searches}, "\n".join(lines))
    return 0


def register(sub: Any) -> None:
    """Add the vault commands to the `rmh` parser."""

    def add(name: str, func: Any, helptext: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=helptext, description=helptext)
        p.add_argument("--json", action="store_true", help="print one JSON document")
        p.set_defaults(func=func)
        return p

    p = add("init", cmd_init, "make a folder an rmh vault and index it")
    p.add_argument("path", nargs="?", default=None, type=folder_arg,
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
    vault_commands.register(sub, ("search", "read", "write", "edit", "move", "delete", "links",
                                  "backlinks"))
    p = add("doctor", cmd_doctor, "health report: links, parse errors, orphans, sandbox, learning")
    p.add_argument("--settle-leftovers", action="store_true",
                   help="settle the hidden files rmh left beside notes (.NAME.rmh-kept-*, "
                   "stale asides): a copy of its note removed, put back when the name is free, "
                   "else moved into the trash (never a byte lost)")
    p = add("demo", cmd_demo, "create a small sample vault and search it")
    p.add_argument("path", nargs="?", default=None, type=folder_arg,
                   help="a new or empty folder (default: --vault, else ./rmh-demo-vault), or "
                   "an earlier demo vault (searched again, its notes as they are)")
    p.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
