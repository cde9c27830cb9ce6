"""The operation table: every operation rmh offers, declared once.

An `Operation` says its name, parameters (harness.validate.Param: kinds, defaults, bounds), a
one-line summary, its effect (read-only, destructive, idempotent), the names it has on each
surface that offers it (JSON-RPC method, MCP tool, REPL function) and its implementation. The
surfaces are derived from `OPERATIONS` and nothing else: harness.methods (JSON-RPC),
harness.mcp (tools and their inputSchema) and harness.tools (REPL host functions and help).

`run` names the method that implements it, on the object its part runs against: the
"vault" part on the connection's `VaultCalls`, "conversation" on `ConversationCalls`, "llm" on
`LlmCalls` (`Targets.target` gives each) and "control" on the connection (harness.methods.Harness).
`BoundOperation` is an operation with that method looked up once; it is called with the checked
arguments by name. `runs` says where it runs when called from the event loop: "vault" on the
vault thread, in arrival order; "thread" on a worker thread (it waits on the LLM); "loop" it is
a coroutine. REPL calls are already off the loop and call the method directly. `writes` is the
effect on the vault (`Writes`: which argument names the note, which holds what is written);
the REPL's write quota reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from vault import EDIT_KINDS

from . import mcp_views as views
from . import schemas as out
from .config import MAX_K
from .schemas import Schema
from .validate import Param, bind, check
from .vault_list import KINDS, MAX_CURSOR

Part = Literal["vault", "conversation", "llm", "control"]
Runs = Literal["vault", "thread", "loop"]

MAX_HOPS = 3
MAX_LIST = 500  # items in one page of `list`
MAX_QUERY = 10_000
MAX_NOTE_NAME = 1_000
MAX_TEXT = 4 * 1024 * 1024  # characters of note content accepted in one write
MAX_QUESTION = 4_000
MAX_ASK_BUDGET = 50  # notes in ask's answer set
MAX_CODE = 1_000_000  # characters of code in one exec
MAX_ANSWER = 200_000  # characters of an answer given to session.end
MAX_BUDGET_WORDS = 20_000
MAX_CONVERSATION_CHARS = 64 * 1024 * 1024


@dataclass(frozen=True)
class Writes:
    """An operation's effect on the vault: the parameter naming the note it writes, and the
    parameter holding what is written into it."""

    note: str
    content: str


@dataclass(frozen=True)
class Operation:
    """One operation and everything a surface needs to offer it."""

    name: str
    part: Part
    summary: str  # one line: the MCP description and the first line of the REPL help
    params: tuple[Param, ...]
    run: str  # the implementing method of the part's target (see the module doc)
    runs: Runs = "vault"
    read_only: bool = True
    stops: bool = False  # a change that stops between whole notes at a cancel (binding.py)
    destructive: bool = False
    idempotent: bool = True
    rpc: str | None = None  # JSON-RPC method name ("vault.search")
    mcp: str | None = None  # MCP tool name ("search")
    repl: str | None = None  # REPL function name ("search")
    returns: str = "dict"  # the REPL signature's return annotation
    doc: str = ""  # the REPL help after the summary
    repl_view: Callable[[Any], Any] | None = None  # the REPL's projection of the result
    reports_failure: bool = False  # the result is a value whose "error" says it failed (exec)
    output: Schema | None = None  # JSON Schema of the result (MCP outputSchema; harness.schemas)
    writes: Writes | None = None  # the effect on the vault; the REPL's write quota reads it
    title: str = ""  # the MCP tool's human title
    learns: bool = False  # records usage in the learning log (said in the MCP description)
    open_world: bool = False  # may reach outside the vault (the configured LLM endpoint)
    mcp_view: Callable[[Any], Any] | None = None  # the MCP result's compact projection

    def arguments(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Checked arguments for `run` (harness.validate.bind)."""
        return bind(self.params, args, kwargs)

    def checked(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Checked arguments for `run` from arguments already bound to `signature(params)`
        (by the JSON-RPC dispatcher): values checked, defaults filled, nothing matched again."""
        positional = [p.name for p in self.params if not p.keyword_only]
        return check(self.params, {**dict(zip(positional, args, strict=False)), **kwargs})


def _hits(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The REPL's search value: the hits; each carries the result's "learning" note when the
    learning log did not record the search (its session's budget spent)."""
    if "learning" in result:
        return [{**hit, "learning": result["learning"]} for hit in result["hits"]]
    return list(result["hits"])


_NOTE = Param("note", "string", "path ('folder/Note.md') or title",
              max_length=MAX_NOTE_NAME)
# One page of links/backlinks/neighbors (vault_ops.MAX_RESULT_ITEMS: more without a limit is
# QuotaExceeded); limit and offset page through a hub's list.
_PAGE = (Param("limit", "integer", "most items (a page; default: all, refused past 10000)",
               None, 1, 10_000),
         Param("offset", "integer", "items to skip first (the next page)", 0, 0, 10**9))
_QUERY = Param("query", "string", "what to look for", max_length=MAX_QUERY)
_QUESTION = Param("question", "string", "the question", max_length=MAX_QUESTION)
_HASH = Param("expected_hash", "string", "the `hash` read returned: refuse if the file changed "
               "since", None, max_length=64,
               pattern=("[0-9a-f]{64}", "a sha256: the 64 lowercase hex digits `read` gives"))
_MAX_WORDS = Param("max_words", "integer", "longest answer in words", default=None,
                   minimum=1, maximum=2_000, keyword_only=True)

CONTEXT_DOC = """Built by counting: the best-scoring turns and the turn before each, sorted by date,
each line labelled with speaker and date, lowest scores cut first to fit the word budget.
Returns {"text", "lines", ...}. Dates are ISO strings ("2023-05-08") that filter turns."""

ASK_DOC = """Search, follow links, answer; when unresolved, search again from what was found
(bridge entities the notes name, their links, the question's uncovered terms) until resolved,
a pass finds nothing new above the relevance floor, or the rlm budget is spent. Returns
{"answer", "resolved", "notes" (at most `budget`, best first), "found" (each note's value,
pass and query), "trace", "stop", "usage"}; `k` is an alias of `budget`. Uses the same
per-exec budget as rlm_call (one call per pass)."""

RLM_CALL_DOC = """slice: text; a note (its path or title, or a read() result); or a list of notes or
search() hits (each shown with title, date and source). The sub-model sees only the slice and
the question: no tools, no REPL, no rlm_call (depth 1). "NOT FOUND" means the slice lacks the
answer. Offline (no model configured) answers are extracted sentences labelled [extractive].
Bounds: 15 calls per exec (retries count, identical repeated calls are cached and free),
5 in flight. Raises RlmBudgetExceeded, RlmTimeout, LlmUnavailable, RlmSliceTooLarge."""

RLM_BATCH_DOC = """A batch needing more uncached calls than this exec has left raises
RlmBudgetExceeded before anything is sent, and so does a slice over the cap RlmSliceTooLarge
(the notes of the slices are read first); one still running at the cell's deadline raises
RlmTimeout. If any call fails, the first failure (in input order) is raised after all finish;
the answers that did arrive are cached, so re-running the same batch costs only the failed
calls."""


OPERATIONS: tuple[Operation, ...] = (
    Operation("search", "vault", "Search the vault; hits best first, each with a snippet of "
              "its best-matching passage.",
              (_QUERY, Param("k", "integer", "how many hits", 10, 1, MAX_K),
               Param("explain", "boolean", "add each hit's score receipt and the stage report",
                     False),
               Param("as_of", "number", "rank with the learned state as it was at this Unix "
                     "time (replayed; records nothing)", None, keyword_only=True),
               Param("learn", "boolean", "false: record nothing (a read-only search)", True,
                     keyword_only=True),
               Param("history", "boolean", "also rejected and superseded facts, after the "
                     "current ones", False, keyword_only=True)),
              "search",
              rpc="vault.search", mcp="search", repl="search", returns="list[dict]",
              doc="Hybrid retrieval (keywords, meaning, links). Each hit is {\"note\": path,\n"
                  '"title", "score", "id", "snippet"} plus "date"/"speaker" when the note has\n'
                  'them, and "receipt" with explain=True; pass a hit\'s "note" to read().',
              repl_view=_hits, output=out.SEARCH, title="Search notes", learns=True,
              mcp_view=views.search_view),
    Operation("read", "vault", "Read one note: text, frontmatter, tags and links.", (_NOTE,),
              "read",
              rpc="vault.read", mcp="read", repl="read",
              doc='Returns {"note", "title", "hash", "text", "frontmatter", "tags", "links"}.\n'
                  '`note` is a path ("folder/Note.md" or "folder/Note") or a title/alias; raises\n'
                  "NoteNotFound or AmbiguousNote when no note, or more than one, matches.\n"
                  '"hash" (sha256 of the file) is what write/edit take as expected_hash.',
              output=out.NOTE, title="Read a note", learns=True, mcp_view=views.read_view),
    Operation("write", "vault", "Create a note with the given markdown (replace one only with "
              "overwrite=true or its expected_hash).",
              (_NOTE, Param("content", "string", "the whole markdown text",
                              max_length=MAX_TEXT, blank_ok=True),
               Param("overwrite", "boolean", "replace the note if it exists", False), _HASH),
              "write",
              read_only=False, destructive=True, rpc="vault.write", mcp="write", repl="write",
              writes=Writes("note", "content"),
              doc='Returns {"note", "id", "title", "hash"}. `content` includes the frontmatter;\n'
                  '".md" is appended when missing. Link notes with [[Title]] so the graph uses\n'
                  "them. An existing note raises NoteExists unless overwrite=True or\n"
                  "expected_hash is the hash read returned; a note changed since that read\n"
                  "raises EditConflict (its data has current_hash) and nothing is written.",
              output=out.WRITTEN, title="Write a note"),
    Operation("edit", "vault", "Change part of a note: append, prepend, replace a heading's "
              "section, or find-and-replace; the rest of the file is kept byte for byte.",
              (_NOTE, Param("kind", "string", "append, prepend, section or replace",
                            max_length=20, choices=EDIT_KINDS),
               Param("text", "string", "the text to add, or the replacement", "",
                     max_length=MAX_TEXT, blank_ok=True),
               Param("heading", "string", "section: the heading ('Plans' or '## Plans')", None,
                     max_length=MAX_NOTE_NAME),
               Param("find", "string", "replace: the exact text to find", None,
                     max_length=MAX_TEXT, blank_ok=True),
               Param("expected_count", "integer", "replace: how many occurrences there must "
                     "be", 1, 1, 100_000), _HASH),
              "edit", read_only=False, destructive=True, idempotent=False, rpc="vault.edit",
              writes=Writes("note", "text"),
              mcp="edit", repl="edit",
              doc='Returns {"note", "id", "title", "hash"}. prepend inserts after the\n'
                  "frontmatter; section replaces the lines under the heading up to the next\n"
                  "heading of the same or a higher level; replace refuses (EditRefused) unless\n"
                  "`find` occurs exactly expected_count times. With expected_hash (the hash\n"
                  "read returned) a note changed since raises EditConflict; nothing is written.",
              output=out.WRITTEN, title="Edit part of a note"),
    Operation("move", "vault", "Rename/move a note; links to it are rewritten.",
              (_NOTE, Param("new", "string", "the new vault path", max_length=MAX_NOTE_NAME)),
              "move",
              read_only=False, destructive=True, idempotent=False, rpc="vault.move", mcp="move",
              output=out.MOVED, title="Move or rename a note"),
    Operation("delete", "vault", "Move a note to the vault's trash (recoverable).", (_NOTE,),
              "delete",
              read_only=False, destructive=True, idempotent=False,
              rpc="vault.delete", mcp="delete", output=out.DELETED, title="Delete a note"),
    Operation("links", "vault", "Outgoing links of a note and where they resolve.",
              (_NOTE, *_PAGE),
              "links",
              rpc="vault.links", mcp="links", repl="links", returns="list[dict]",
              doc='Each link is {"target", "resolved", "embed", ...}; "resolved" is the path it\n'
                  "points to, or None for a dangling link.",
              output=out.items_of(out.LINK), title="Outgoing links"),
    Operation("backlinks", "vault", "Notes that link to a note (sorted by path).",
              (_NOTE, *_PAGE),
              "backlinks",
              rpc="vault.backlinks", mcp="backlinks", repl="backlinks", returns="list[str]",
              output=out.items_of(out.STR), title="Backlinks"),
    Operation("neighbors", "vault", "Notes within a few links of a note, nearest first.",
              (_NOTE, Param("hops", "integer", "links to follow, either direction", 1, 1,
                              MAX_HOPS), *_PAGE),
              "neighbors",
              rpc="vault.neighbors", mcp="neighbors", repl="neighbors", returns="list[str]",
              output=out.items_of(out.STR), title="Linked neighbourhood"),
    Operation("list", "vault", "Browse the vault: the notes in a folder (or with a tag), "
              "its sub-folders, all tags, or the recently changed notes; paged.",
              (Param("what", "string", "notes, folders, tags or recent", "notes",
                     max_length=10, choices=KINDS),
               Param("folder", "string", "the folder ('' = the vault root)", "",
                     max_length=MAX_NOTE_NAME, blank_ok=True),
               Param("tag", "string", "notes: only those with this tag", None, max_length=200),
               Param("limit", "integer", "most items per page", 50, 1, MAX_LIST),
               Param("cursor", "string", "next_cursor of the previous page", None,
                     max_length=MAX_CURSOR)),  # "recent:@NS:" and a path
              "browse",
              rpc="vault.list", mcp="list", repl="list_notes",
              doc='Returns {"what", "items", "total", "next_cursor"}: items are {"note"} (notes),\n'
                  '{"folder", "notes"} (folders), {"tag", "notes"} (tags) or {"note",\n'
                  '"modified"} (recent, newest first); notes without a tag add "folders"\n'
                  "(how many sub-folders the folder has: their notes are not listed); pass\n"
                  "next_cursor back as cursor for the next page (None: the last page).",
              output=out.LISTING, title="Browse notes, folders, tags"),
    Operation("context", "conversation", "Budgeted, dated, speaker-labelled context from "
              "conversation notes for a question (no LLM).",
              (_QUERY, Param("budget_words", "integer", "word budget", 600, 1, MAX_BUDGET_WORDS),
               Param("conversation", "string", "only this conversation id", None,
                     max_length=200),
               Param("date_from", "date", "ISO date", None, max_length=40),
               Param("date_to", "date", "ISO date", None, max_length=40)),
              "context",
              rpc="vault.context", mcp="context", repl="context", doc=CONTEXT_DOC,
              output=out.CONTEXT, title="Conversation context"),
    Operation("what_came_next", "conversation",
              "The events that followed the event best matching the query.",
              (_QUERY, Param("n", "integer", "how many events", 3, 1, 50)),
              "what_came_next", repl="what_came_next"),
    Operation("correct", "vault", "Correct a fact note: confirm it, reject it (kept as a "
              "tombstone that later ingests respect) or supersede it with a new value.",
              (_NOTE, Param("action", "string", "confirm, reject or supersede", max_length=20,
                            choices=("confirm", "reject", "supersede")),
               Param("value", "string", "supersede: the value that replaces it", None,
                     max_length=MAX_NOTE_NAME),
               Param("reason", "string", "why (kept in the note's trust history)", "",
                     max_length=MAX_NOTE_NAME, blank_ok=True),
               Param("by", "string", "who corrects (kept with the state)", "agent",
                     max_length=200)),
              "correct",
              read_only=False, idempotent=False, rpc="vault.correct", mcp="correct",
              repl="correct", title="Correct a fact", output=out.CORRECTED,
              doc='Returns {"action", "note", "trust": {"state", "by", "at", "current", ...},\n'
                  '"written", "current"}. A rejected fact leaves default search and context;\n'
                  "search(query, history=True) shows it after the current belief."),
    Operation("why", "vault", "Where a note or fact came from (source turns, conversation, "
              "session, correction) and what it has been used for (searches, reads, sessions).",
              (_NOTE,), "why",
              rpc="vault.why", mcp="why", repl="why", title="Provenance of a note",
              output=out.WHY),
    Operation("ingest", "conversation", "Ingest a conversation (LoCoMo, LongMemEval, simple, "
              "OpenAI chat, a ChatGPT or Claude.ai export, Claude Code or Codex CLI session "
              "JSONL, a WhatsApp chat export, a plain \"Name: text\" transcript or a Slack "
              "channel's day file).",
              (Param("conversation", "json", "the conversation: JSON or JSONL text, or an object",
                     max_length=MAX_CONVERSATION_CHARS),
               Param("format", "string", "auto, simple, locomo, longmemeval, openai, "
                     "claude-code, codex, chatgpt, claude-ai, whatsapp, text or slack", "auto",
                     max_length=40),
               Param("date_order", "string", "dmy or mdy: how a WhatsApp export's dates read "
                     "(only needed where no date shows it: no field above 12)", None,
                     max_length=8),
               Param("regenerate", "boolean", "rewrite notes edited by hand since the ingest "
                     "wrote them (the edited version goes to the trash) and write again those "
                     "deleted; false: keep the edited ones (kept_edited) and leave the deleted "
                     "ones out (left_deleted)", False),
               Param("conversation_id", "string", "the id of a conversation whose format "
                     "carries none (a plain-text or WhatsApp chat; default \"conversation\", "
                     "refused when that holds other turns: name each chat)", None,
                     max_length=200)),
              "ingest",
              read_only=False, stops=True, rpc="vault.ingest"),
    Operation("ask", "llm", "Answer a question with the recursive query loop: retrieve, follow "
              "links, ask sub-questions; returns the answer, the notes used and the trace.",
              (_QUESTION, Param("budget", "integer", "most notes in the answer set", 10, 1,
                                MAX_ASK_BUDGET),
               Param("k", "integer", "alias of budget (older clients)", None, 1,
                     MAX_ASK_BUDGET)),
              "ask", runs="thread",
              rpc="vault.ask", mcp="ask", repl="ask", doc=ASK_DOC, output=out.ASK,
              title="Answer from the vault", learns=True, open_world=True,
              mcp_view=views.ask_view),
    Operation("rlm_call", "llm", "Ask a fresh sub-model ONE question about ONE slice; returns "
              "its answer as text.", (Param("slice", "any"), _QUESTION, _MAX_WORDS),
              "rlm_call",
              runs="thread", repl="rlm_call", returns="str", doc=RLM_CALL_DOC),
    Operation("rlm_batch", "llm", "rlm_call over many [slice, question] pairs, at most 5 at "
              "once; answers in input order.", (Param("pairs", "any"), _MAX_WORDS),
              "rlm_batch",
              runs="thread", repl="rlm_batch", returns="list[str]", doc=RLM_BATCH_DOC),
    Operation("rlm_usage", "llm", "This exec's sub-call usage (calls, retries, cache hits, "
              "tokens) and the session's.", (), "rlm_usage",
              runs="thread", repl="rlm_usage"),
    Operation("exec", "control", "Run Python in the sandboxed REPL (vault functions are "
              "globals; state persists). Returns output, the last value and any error.",
              (Param("code", "string", "Python source", max_length=MAX_CODE, blank_ok=True),
               Param("deadline_s", "integer", "wall-clock limit in seconds", None, 1, 3600)),
              "exec", runs="loop",
              read_only=False, destructive=True, idempotent=False, rpc="repl.exec", mcp="exec",
              reports_failure=True, output=out.EXEC, title="Run Python over the vault",
              open_world=True),
    Operation("reset", "control", "Forget the REPL's variables.", (), "reset",
              runs="loop", read_only=False, rpc="repl.reset"),
    Operation("session_start", "control", "Open a session (ending the open one).",
              (Param("session", "string", "the session id", None, max_length=200),),
              "session_start", runs="loop", read_only=False,
              idempotent=False, rpc="session.start"),
    Operation("session_end", "control", "End the open session; learning runs. `answer`: the "
              "agent's answer text; the retrieved notes whose distinctive terms it uses count "
              "as used.",
              (Param("answer", "string", "the agent's answer (optional)", None,
                     max_length=MAX_ANSWER, blank_ok=True),
               Param("session", "string", "the open session's id (optional; another is "
                     "refused)", None, max_length=200)),
              "session_end", runs="loop", read_only=False,
              idempotent=False, rpc="session.end"),
    Operation("status", "control", "Version, index, isolation tier, stages, LLM, session.", (),
              "status", runs="loop", rpc="status"),
)
