"""The vault commands that are operations (harness.commands.operation_commands): for each,
what the command line says differently from the operation's declaration, and its rendering
hook, `(args, result) -> (the --json document, the human text)`."""

from __future__ import annotations

import argparse
import json
import shlex
from datetime import UTC, datetime
from typing import Any

from .operation_commands import Arg, Command, add_command, line, stdin_text
from .output import counted

EXPECTED_HASH = Arg("expected_hash", ("--expected-hash",), metavar="SHA256",
                    help="refuse unless the file still has this hash (`read --json` gives it)")
_PAGE = (Arg("limit", ("--limit",), help="print one page of at most this many (default: all, "
                                        "refused past 10000)"),
         Arg("offset", ("--offset",), help="skip this many first (with --limit: the next page)"))


def parse_time(text: str) -> float:
    """--as-of: Unix seconds ("1733011200.5") or an ISO 8601 time ("2024-12-01T00:00:00Z");
    a ValueError otherwise (a usage error: operation_commands._checked_by)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not Unix seconds or an ISO time: {text!r}") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def explain_line(receipt: dict[str, Any]) -> str:
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
        if key == "prior" and receipt.get("when_factor", 1.0) != 1.0:  # the time prior
            tail.append(f"when x{receipt['when_factor']:.3f} ({receipt.get('when', 0.0):+.4f})")
    return "    " + "  ".join(parts) + "\n    " + "  ".join(tail)


def render_search(args: argparse.Namespace, doc: dict[str, Any]) -> tuple[Any, str]:
    explain = getattr(args, "explain", False)
    out = []
    if not doc["hits"]:
        out.append("no hits")
    elif not doc.get("relevant", True):  # retrieval/relevance.py: the hits below are closest
        out.append("nothing relevant found (the closest notes follow)")
    for rank, hit in enumerate(doc["hits"], 1):
        if hit.get("rerank") is None:
            out.append(f"{rank:>2}. {hit['score']:.6f}  {hit['note']}")
        else:  # placed by the reranker: its score set the order, not the fused one
            out.append(f"{rank:>2}. {hit['rerank']:.6f}  {hit['note']}  (reranker's score)")
        trust = hit.get("trust")  # fact hits (harness.fact_tools.label_hits)
        if trust is not None and (trust["state"] != "provisional" or not trust["current"]):
            out.append(f"    [{'current' if trust['current'] else 'history'}: "
                       f"{trust['state']} by {trust['by']} at {trust['at']}]")
        if hit["snippet"]:
            out.append(f"    {hit['snippet']}")
        if explain:
            out.append(explain_line(hit["receipt"]))
    if explain:
        out.append("basis: " + json.dumps(doc.get("basis", {}), sort_keys=True))
        if doc.get("relevance") is not None:
            out.append("relevance: " + json.dumps(doc["relevance"], sort_keys=True))
        out.append("stages:")
        out.extend(f"    {stage}: {what}" for stage, what in sorted(doc["stages"].items()))
    return doc, "".join(text + "\n" for text in out)


def moved(args: argparse.Namespace, doc: dict[str, Any]) -> tuple[Any, str]:
    """The rendering of move: where the note went, how many notes had their links rewritten,
    and each referrer the move left as it was (changed meanwhile), with why."""
    text = (f"moved {doc['old']} -> {doc['note']}; rewrote links in "
            f"{counted(len(doc['rewritten']), 'note')}")
    for left in doc.get("not_rewritten", ()):
        text += f"\nnot rewritten: {left['note']}: {left['reason']}"
    for kept in doc.get("replaced", ()):  # a file saved under the old name took its place
        text += (f"\nreplaced: {doc['note']} is now the file saved at {doc['old']} during the "
                 f"move; the text it held is kept at {kept}")
    return doc, line(text)


def written(verb: str) -> Any:
    """The rendering of write and edit: the note, its id and its new hash."""

    def render(args: argparse.Namespace, doc: dict[str, Any]) -> tuple[Any, str]:
        kind = f" ({args.kind})" if verb == "edited" else ""
        return ({"note": doc["note"], "id": doc["id"], "hash": doc["hash"]},
                line(f"{verb} {doc['note']}{kind}"))

    return render


def edit_input(given: Any) -> dict[str, Any]:
    """The edit's text when --text is not given: stdin, or nothing for a replace without
    --find."""
    if "text" in given:
        return {}
    if given.get("kind") == "replace" and given.get("find") is None:
        return {"text": ""}
    return {"text": stdin_text()}


def render_listing(args: argparse.Namespace, page: dict[str, Any]) -> tuple[Any, str]:
    lines = []
    for item in page["items"]:
        if "folder" in item:
            lines.append(f"{item['folder']}/  ({counted(item['notes'], 'note')})")
        elif "tag" in item:
            lines.append(f"#{item['tag']}  ({counted(item['notes'], 'note')})")
        elif "modified" in item:
            lines.append(f"{item['modified']}  {item['note']}")
        else:
            lines.append(item["note"])
    if page["next_cursor"]:
        cursor = shlex.quote(page["next_cursor"])  # a path: may hold spaces
        lines.append(f"... {page['total']} in all; next page: --cursor {cursor}")
    if page.get("folders"):  # a notes listing: its sub-folders' notes are not in it
        where = getattr(args, "folder", None)
        place = f"in {where}" if where else "at the top of the vault"
        folders = (f"{counted(page['folders'], 'folder')}: `rmh list folders"
                   f"{f' --folder {shlex.quote(where)}' if where else ''}` lists them")
        lines.append(f"(and {folders.replace(':', f' {place}:', 1)})" if lines
                     else f"(no notes {place}; {folders})")
    return page, line("\n".join(lines) or "(none)")


COMMANDS: tuple[Command, ...] = (
    Command("search", "search", (
        Arg("query"),
        Arg("k", ("-k",), help="number of hits (default: [search] k in rmh.toml, else 10)"),
        Arg("explain", ("--explain",),
            help="print each hit's receipt (with --json: receipts and stages)"),
        Arg("as_of", ("--as-of",), metavar="TIME", convert=parse_time,
            help="rank with the learned state as it was at TIME (Unix seconds or ISO 8601; "
            "replayed from the log) and record nothing"),
        Arg("learn", ("--no-learn",), help="record nothing (no usage event)"),
        Arg("history", ("--history",),
            help="also rejected and superseded facts, after the current ones")),
        render_search, session=True, dense=True, prepare=True,
        defaults=lambda cfg: {"k": cfg.search.k}),
    Command("read", "read", (Arg("note"),),
            lambda args, doc: (doc, doc["text"]), session=True),
    Command("write", "write", (Arg("note"), Arg("overwrite", ("--overwrite",)), EXPECTED_HASH),
            written("wrote"), session=True, stdin=lambda given: {"content": stdin_text()}),
    Command("edit", "edit", (
        Arg("note"), Arg("kind"),
        Arg("text", ("--text",),
            help="the new text (default: stdin; for replace, empty when --find only)"),
        Arg("heading", ("--heading",), help="section: the heading ('## Plans')"),
        Arg("find", ("--find",)),
        Arg("expected_count", ("--count",),
            help="replace: how many occurrences there must be (default 1)"),
        EXPECTED_HASH), written("edited"), session=True, stdin=edit_input),
    Command("move", "move", (Arg("note", metavar="old"), Arg("new")), moved),
    Command("delete", "delete", (Arg("note"),),
            lambda args, doc: ({"trash": doc["trash"]}, line(f"moved to {doc['trash']}"))),
    Command("links", "links", (Arg("note"), *_PAGE),
            lambda args, links: ({"links": links}, line(_link_lines(links)))),
    Command("backlinks", "backlinks", (Arg("note"), *_PAGE),
            lambda args, back: ({"backlinks": back}, line("\n".join(back)))),
    Command("list", "list", (
        Arg("what"),
        Arg("folder", ("--folder",), help="the folder (default: the vault root)"),
        Arg("tag", ("--tag",), help="notes: only those with this tag (any folder)"),
        Arg("limit", ("--limit",), help="most items (default 50)"),
        Arg("cursor", ("--cursor",), help="the next page (printed at the end of one)")),
        render_listing, json_last=True),
    Command("context", "context", (
        Arg("query"),
        Arg("budget_words", ("--budget",), help="word budget (default 600)"),
        Arg("conversation", ("--conversation",)),
        Arg("date_from", ("--from",), metavar="DATE_FROM", help="ISO date, inclusive"),
        Arg("date_to", ("--to",), metavar="DATE_TO", help="ISO date, inclusive")),
        lambda args, doc: (doc, line(doc["text"] or (
            f"(no relevant line fits in {counted(doc['budget_words'], 'word')}: "
            f"{doc['candidates']} candidate(s); raise --budget)" if doc.get("relevant", True) else
            "Nothing in memory is relevant to this question."))),
        dense=True, json_last=True, described=False),
)

BY_NAME = {command.name: command for command in COMMANDS}


def _link_lines(links: list[dict[str, Any]]) -> str:
    """`rmh links`' lines: each link as written (`!` an embed, `#heading`, `#^block`) and where
    it leads, a link written more than once (in the frontmatter and the body, or twice in the
    body) one line, in order of first appearance, with how many times (`--json` lists every
    occurrence, as `vault.links` does). Before, `Bobby -> Bobby.md` came once per occurrence
    and `[[Bobby#^id]]` read as `[[Bobby]]` (NEWUSER7, VAULT11)."""
    counts: dict[str, int] = {}
    for ln in links:
        shown = ("!" if ln.get("embed") else "") + str(ln["target"]) + (
            f"#^{ln['block']}" if ln.get("block") else
            f"#{ln['heading']}" if ln.get("heading") else "")
        text = f"{shown} -> {_link_end(ln)}"
        counts[text] = counts.get(text, 0) + 1
    return "\n".join(text if n == 1 else f"{text} ({counted(n, 'time')})"
                     for text, n in counts.items())


def _link_end(link: dict[str, Any]) -> str:
    """Where a link leads, as `rmh links` prints it: a note, an existing attachment's file,
    or "(dangling)"."""
    if link["resolved"]:
        return str(link["resolved"])
    return f"{link['attachment']} (attachment)" if link.get("attachment") else "(dangling)"


def register(sub: Any, names: tuple[str, ...]) -> None:
    """Add the commands `names` to the `rmh` parser, in this order."""
    for name in names:
        add_command(sub, BY_NAME[name])
