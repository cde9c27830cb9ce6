"""`rmh ask QUESTION`: the recursive query loop from the command line.

Uses the same loop, broker and bounds as `ask()` in the REPL: the configured model when
[llm].model / RMH_MODEL is set, else the offline extractive reasoner (labelled [extractive]).
Exit code 0 when the loop ran (resolved or not), 1 when the LLM failed or the vault is missing.
"""

from __future__ import annotations

import argparse
from typing import Any

from harness.ask import AskResult, ask
from harness.compose import open_vault
from harness.config import load
from harness.llm import Broker, RlmError
from harness.vault_ops import UnrecordedVault, VaultCalls, VaultThread

from .operation_commands import operation, value_type
from .output import counted, emit, fail


def human(result: AskResult, status: dict[str, Any]) -> str:
    """The answer first, then how it was found."""
    usage = result.usage
    tokens = usage.get("tokens", {})
    lines = [
        result.answer or "(no answer)",
        "",
        f"resolved: {'yes' if result.resolved else 'no'} ({_why(result)}stop: {result.stop});"
        f" provider: {status['provider']} {status['model']}",
        "notes:",
        *(f"  - {f.note} (pass {f.pass_no}, {f.query!r})" for f in result.found),
        "trace:",
    ]
    for step in result.trace:
        line = (f"  pass {step['pass']}: {step['query']!r}: {len(step['new_notes'])} new,"
                f" {len(step['via_links'])} via links")
        if step["resolved"] is not None:
            line += f"; resolved {'yes' if step['resolved'] else 'no'}"
        if step.get("sub_questions"):
            line += "; sub-questions: " + "; ".join(step["sub_questions"])
        lines.append(line)
    lines.append(f"usage: {counted(usage.get('calls', 0), 'call')}, "
                 f"{counted(usage.get('cache_hits', 0), 'cache hit')}, "
                 f"{tokens.get('prompt', 0)}+{tokens.get('completion', 0)} tokens")
    return "\n".join(lines)


def _why(result: AskResult) -> str:
    """Why a loop is not resolved, when terms of the question are missing: "resolved" means
    every content term of the question is in the notes found (harness/ask.py), not that the
    answer is wrong; a right answer beside a bare "resolved: no" read as "unsure"."""
    if result.resolved:
        return ""
    missing = next((step["missing_terms"] for step in reversed(result.trace)
                    if step["resolved"] is False and step["missing_terms"]), [])
    return f"no note found holds {', '.join(repr(t) for t in missing)}; " if missing else ""


def cmd_ask(args: argparse.Namespace) -> int:
    cfg = load(vault=args.vault)
    vault = open_vault(cfg, dense=not args.no_dense)
    thread = VaultThread()
    try:
        ops = VaultCalls(vault, thread, lambda: None)
        with Broker.from_config(cfg.llm) as broker:
            try:
                result = ask(args.question, UnrecordedVault(ops), broker, broker.new_budget(),
                             budget=args.budget, k=args.k)
                ops.shown(args.question, result.notes)
            except RlmError as exc:
                fail(f"{type(exc).__name__}: {exc}")
            status = broker.status()
    finally:
        thread.call(vault.close)
        thread.close()
    doc = {**result.to_json(), "provider": {k: status[k] for k in ("provider", "model", "reason")}}
    emit(args, doc, human(result, status))
    return 0


def register(sub: Any) -> None:
    """Add `ask` to the `rmh` parser."""
    p = sub.add_parser(
        "ask",
        help="answer a question from the vault with the recursive query loop",
        description="Retrieve, follow links, answer; when unresolved, search again from new "
        "entry points until resolved, nothing new is found, or the rlm budget is spent.",
    )
    params = {q.name: q for q in operation("ask").params}  # the bounds of every surface
    p.add_argument("question", type=value_type(params["question"]), help="the question")
    p.add_argument("--budget", type=value_type(params["budget"]), default=10,
                   help="most notes in the answer set (default 10)")
    p.add_argument("-k", type=value_type(params["k"]), default=None,
                   help="hits per retrieval pass (default: the budget)")
    p.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_ask)
