"""`rmh status` (the vault's state on one screen) and `rmh list` (browse folders, notes, tags,
recent changes: the `list` operation, generated from the table by
harness.commands.vault_commands)."""

from __future__ import annotations

import argparse
from typing import Any

from harness.compose import open_vault
from harness.config import Config, load
from harness.config_file import user_path
from vault import Vault, dense_health_line

from . import vault_commands
from .output import emit


def status_report(v: Vault, *, dense: bool) -> dict[str, Any]:
    """Counts, index generation, embeddings cached and pending, the sandbox tier, how edits
    are seen, and learning health (harness.commands.learn.learning_health)."""
    from .health import dense_report, sandbox_choice
    from .learn import learning_health

    v.sync(postpone_full=True)  # on a full disk: the index as it is
    corpus = v.corpus()
    counts = dict(v.counts())
    sandbox = sandbox_choice(v)
    health = dense_report(v) if dense else None
    doc: dict[str, Any] = {
        "vault": str(v.root), "index": {**counts, "generation": corpus.generation,
                                        "calibration": v.calibration()},
        "embeddings_pending": None if health is None else health.pop("pending"),
        "dense": health,
        "sandbox": sandbox["runs"], "changes": v.change_detection(),
        "read_only": v.read_only,
    }
    if sandbox["runs"] is None:
        doc["sandbox_refused"] = sandbox["refused"]
    if v.ledger is not None:
        health = learning_health(v, v.ledger)
        doc["learning"] = {"events": health.get("events", {}),
                           "sessions": health.get("sessions", {}),
                           "replay_matches": health.get("replay_matches"),
                           "missing_rows": health.get("missing_rows")}
    return doc


def print_status(doc: dict[str, Any]) -> None:
    index = doc["index"]
    pending = doc["embeddings_pending"]
    print(f"vault       {doc['vault']}")
    print(f"notes       {index.get('notes', 0)} (links {index.get('links', 0)}, skipped "
          f"{index.get('skipped', 0)}); index generation {index['generation']}")
    print(f"embeddings  {index.get('embeddings', 0)} cached, "
          + ("not checked (--no-dense)" if pending is None else f"{pending} pending"
             + (" (run `rmh index`)" if pending else "")))
    dense = doc.get("dense")
    if dense is not None:  # the IVF's rows changed since its training (dense_health.py)
        print(("WARNING dense " if dense["level"] == "warning" else "dense       ")
              + dense_health_line(dense))
    print(f"fusion      {index.get('calibration', 'off')}")
    rerank = doc.get("rerank")
    if rerank is not None:  # the cross-encoder's folder, or how to plug one in
        print("rerank      " + (f"{rerank['model_dir']} (top {rerank['top_n']}, keep "
                                 f"{rerank['keep']})" if rerank["model_dir"] else
                                 "off: no model ([rerank] model_dir or RMH_RERANK_MODEL)"))
    refused = doc.get("sandbox_refused")
    print(f"sandbox     {doc['sandbox'] or 'none: code execution refused'}"
          + (f" ({refused})" if refused else ""))
    if doc.get("read_only"):
        from .health import READ_ONLY_NOTE

        print(f"access      {READ_ONLY_NOTE}")
    llm = doc.get("llm")
    if llm is not None:  # rlm_call and ask: the model, or why they answer offline
        print(f"llm         {llm['provider']} {llm['model']}"
              + (f" at {llm['endpoint']}" if llm["endpoint"] else "")
              + (f": {llm['reason']}" if llm["reason"] else ""))
    learning = doc.get("learning")
    if learning is not None:
        events = ", ".join(f"{k} {n}" for k, n in sorted(learning["events"].items())) or "none"
        sessions = learning["sessions"]
        print(f"learning    events: {events}; sessions open {sessions.get('open', 0)}, ended "
              f"{sessions.get('ended', 0)}; replay matches: "
              f"{'yes' if learning['replay_matches'] else 'NO (run rmh replay)'}")


def rerank_report(cfg: Config) -> dict[str, Any]:
    """The configured cross-encoder (loaded and tried when the vault opened): its folder,
    `top_n` and `keep` (at most `top_n`); `model_dir` None when none is configured."""
    section = cfg.rerank
    return {"model_dir": str(user_path(section.model_dir)) if section.model_dir else None,
            "top_n": section.top_n, "keep": min(section.keep, section.top_n)}


def cmd_status(args: argparse.Namespace) -> int:
    from harness.llm_provider import describe

    dense = not args.no_dense
    cfg = load(vault=args.vault)
    with open_vault(cfg, dense=dense) as v:
        doc = {**status_report(v, dense=dense), "rerank": rerank_report(cfg),
               "llm": describe(cfg.llm)}
        if args.json:
            emit(args, doc, "")
        else:
            print_status(doc)
    return 0


def register(sub: Any) -> None:
    helptext = "the vault on one screen: counts, index, embeddings pending, sandbox, learning"
    p: argparse.ArgumentParser = sub.add_parser("status", help=helptext, description=helptext)
    p.add_argument("--no-dense", action="store_true",
                   help="do not load the embedder (embeddings pending not counted)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_status)
    vault_commands.register(sub, ("list",))
