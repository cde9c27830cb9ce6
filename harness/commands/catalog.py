"""The catalogue of `rmh` commands: name, the module that registers it, its one-line help.

`rmh` imports only the module of the command it runs (harness.cli), so `rmh --help`,
`rmh --version` and `rmh read` never pay for the LLM client, the sandbox or the conversation
package. `--help` lists this table; a test checks it against what the modules register, so a
command added to a module without a row here fails the suite (and still runs: an unknown
command name makes the CLI register every module, as before). A row may name a module of
another package, which registers its own command (`rmh bench` is bench's: harness.extensions).
"""

from __future__ import annotations

NOTES = "harness.commands.notes"

# name -> (module, help); in help order
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (NOTES, "make a folder an rmh vault and index it"),
    "index": (NOTES, "bring the index up to date (embeddings included)"),
    "search": (NOTES, "hybrid search over the vault"),
    "read": (NOTES, "print a note (path or title)"),
    "write": (NOTES, "create a note (or replace one: --overwrite) with the text on stdin"),
    "edit": (NOTES, "change part of a note: append, prepend, a section, find-and-replace"),
    "move": (NOTES, "rename a note and rewrite the links to it"),
    "delete": (NOTES, "move a note to .rmh/trash/"),
    "forget": ("harness.commands.forget", "erase notes for good, with proof (not reversible)"),
    "fact": ("harness.commands.fact", "confirm, reject or supersede a fact note"),
    "why": ("harness.commands.fact",
            "where a note or fact came from and what it was used for"),
    "links": (NOTES, "a note's outgoing links"),
    "backlinks": (NOTES, "the notes linking to a note"),
    "status": ("harness.commands.browse", "the vault on one screen: counts, index, embeddings "
               "pending, sandbox, learning"),
    "list": ("harness.commands.browse", "browse the vault: a folder's notes, its sub-folders, "
             "tags, recent changes"),
    "doctor": (NOTES, "health report: links, parse errors, orphans, sandbox, learning"),
    "demo": (NOTES, "create a small sample vault and search it"),
    "ask": ("harness.commands.ask",
            "answer a question from the vault with the recursive query loop"),
    "bench": ("bench.cli", "retrieval benchmarks (LoCoMo, LongMemEval-S)"),
    "bench-ask": ("bench.cli_ask",
                  "ask at a 10-note budget against search (benchmarks)"),
    "replay": ("harness.commands.learn", "rebuild every learned number from the event log"),
    "archive": ("harness.commands.learn", "take a note out of default search (reversible)"),
    "restore": ("harness.commands.learn", "bring an archived note back into search"),
    "learning": ("harness.commands.learn", "audit learned state (the learning part of doctor); "
                 "with NOTE, that note's Q, events and rewards"),
    "end-session": ("harness.commands.learn",
                    "end a session the CLI's --session opened: its rewards apply"),
    "setup": ("harness.commands.setup", "connect an agent client (Claude Code, Claude "
              "Desktop, Codex, Cursor) to the vault over MCP"),
    "serve": ("harness.commands.serve",
              "serve the vault to one agent: JSON-RPC 2.0 and MCP over stdin/stdout"),
    "exec": ("harness.commands.repl", "run one Python cell in the sandbox against the vault"),
    "repl": ("harness.commands.repl", "an interactive sandboxed Python loop over the vault"),
    "ingest": ("harness.commands.ingest",
               "turn a conversation file into notes (turns, sessions, entities, facts)"),
    "context": ("harness.commands.ingest",
                "budgeted, dated, speaker-labelled context for a question"),
    "conversation": ("harness.commands.conversation",
                     "conversation memory: stability, working notes"),
    "lifecycle": ("harness.commands.lifecycle",
                  "archive stale conversation notes (DMF survival, 4D rule); reversible"),
    "hooks": ("harness.commands.hooks",
              "install or remove rmh's hooks in an agent client's settings"),
    "hook": ("harness.commands.hooks", "run one hook as an agent client calls it (JSON on stdin)"),
    "completion": ("harness.commands.completion", "print a shell completion script "
                   "(bash, zsh or fish)"),
}


def modules() -> tuple[str, ...]:
    """Every command module, in help order, once."""
    return tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))
