"""The REPL's LLM functions: rlm_call, rlm_batch, ask, rlm_usage (sandbox host functions).

They run on the trusted side, in the thread that runs the exec, and reach the model only
through the Broker (harness/llm.py), which owns the key and every bound. Failures reach user
code as exceptions of the broker's class names (RlmBudgetExceeded, RlmTimeout, LlmUnavailable,
RlmDepthExceeded, RlmSliceTooLarge) or of the vault's (NoteNotFound, AmbiguousNote), raised in
the worker through sandbox.HostFunctionError; never as strings that look like answers.

Budget per exec: the current ExecBudget lives in a context variable. `begin_exec()` sets a
fresh one in the caller's context (call it before each exec); if nobody did, the first call in
a context creates one. Since anyio.to_thread.run_sync runs each exec in a copy of the calling
task's context, every exec the server runs that way gets its own budget either way.

A slice is one of: text (str); a note: a one-line str naming a note (path or title), or a dict
with "note" (read from the vault) or with "text"/"body" (used as given); a list of such notes
or of search hits ({"note", "title", ...}), each rendered with its title, date and source.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from typing import Any

from sandbox import HostFunction, HostFunctionError, current_exec
from vault import AmbiguousNote, VaultError

from .ask import Library, ask, render_note, render_notes
from .llm import Broker, ExecBudget, RlmError
from .tools import BadArgument

MAX_PAIRS = 64
MAX_SLICE_ITEMS = 50
MAX_QUESTION = 4_000
NOTE_NAME_MAX = 300

# (owner, budget): a budget set by another RlmTools (another connection) is not ours.
_EXEC_BUDGET: contextvars.ContextVar[tuple[RlmTools, ExecBudget] | None] = contextvars.ContextVar(
    "rmh_exec_budget", default=None
)


def _fail(exc: Exception) -> HostFunctionError:
    """The worker-side exception for a trusted-side failure (message only, no traceback)."""
    if isinstance(exc, RlmError | VaultError):
        return HostFunctionError(type(exc).__name__, str(exc))
    if isinstance(exc, BadArgument):
        return HostFunctionError("ValueError", str(exc))
    return HostFunctionError("TypeError", str(exc))


class RlmTools:
    """The LLM part of the REPL for one connection: `functions(library)` builds the table."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.last: ExecBudget | None = None

    def begin_exec(self) -> ExecBudget:
        """A fresh budget for the exec about to run in this context; returns it for reporting."""
        budget = self.broker.new_budget()
        _EXEC_BUDGET.set((self, budget))
        self.last = budget
        return budget

    def budget(self) -> ExecBudget:
        """The current exec's budget (created on first use in this context), bound to the
        running sandbox exec's deadline when called from one (sub-calls and their retries
        are clipped to it; see harness/llm.py)."""
        current = _EXEC_BUDGET.get()
        budget = self.begin_exec() if current is None or current[0] is not self else current[1]
        running = current_exec()
        if running is not None:
            budget.deadline = running.deadline
        return budget

    # -- slices ----------------------------------------------------------------------------
    def _record(self, item: Any, library: Library | None) -> Mapping[str, Any]:
        if isinstance(item, Mapping):
            if item.get("text") or item.get("body"):
                return item
            if isinstance(item.get("note"), str) and library is not None:
                return library.read(item["note"])
            raise TypeError("a note dict needs 'text'/'body', or 'note' naming a vault note")
        if isinstance(item, str) and library is not None:
            return library.read(item)
        raise TypeError(f"cannot use a {type(item).__name__} as a note")

    def slice_text(self, value: Any, library: Library | None) -> str:
        """Render a slice value (module doc) to the text the sub-model sees."""
        cap = self.broker.limits.slice_max_chars
        if isinstance(value, str):
            one_line = "\n" not in value and 0 < len(value.strip()) <= NOTE_NAME_MAX
            if one_line and library is not None:
                try:
                    return render_note(library.read(value.strip()))
                except AmbiguousNote:
                    raise  # it names notes, just not one: say so rather than guess
                except (VaultError, BadArgument):
                    pass  # not a note's name: the string is the slice
            return value
        if isinstance(value, Mapping):
            return render_note(self._record(value, library))
        if isinstance(value, list | tuple):
            if len(value) > MAX_SLICE_ITEMS:
                raise TypeError(f"a slice list holds at most {MAX_SLICE_ITEMS} notes or hits")
            return render_notes([self._record(v, library) for v in value], cap)
        raise TypeError("slice must be text, a note, or a list of notes or search hits")

    # -- the functions ---------------------------------------------------------------------
    def rlm_call(
        self, slice: Any, question: Any, max_words: Any, library: Library | None
    ) -> str:
        q = _question(question)
        words = _max_words(max_words)
        return self.broker.call(self.slice_text(slice, library), q, self.budget(), words)

    def rlm_batch(self, pairs: Any, max_words: Any, library: Library | None) -> list[str]:
        if not isinstance(pairs, list | tuple) or len(pairs) > MAX_PAIRS:
            raise TypeError(f"pairs must be a list of at most {MAX_PAIRS} (slice, question)")
        rendered: list[tuple[str, str]] = []
        for pair in pairs:
            if isinstance(pair, Mapping):
                pair = (pair.get("slice"), pair.get("question"))
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise TypeError("each pair must be [slice, question] or {slice, question}")
            rendered.append((self.slice_text(pair[0], library), _question(pair[1])))
        return self.broker.batch(rendered, self.budget(), _max_words(max_words))

    def ask(self, question: Any, k: Any, library: Library) -> dict[str, Any]:
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 20:
            raise TypeError("k must be an integer between 1 and 20")
        return ask(_question(question), library, self.broker, self.budget(), k=k).to_json()

    def usage(self) -> dict[str, Any]:
        return {"exec": self.budget().report(), "session": self.broker.totals(),
                "provider": self.broker.provider.name}

    def functions(self, library: Library | None) -> dict[str, HostFunction]:
        """The host-function table (a `FunctionParts` for harness.methods.Harness)."""

        def guard(fn: Callable[[], Any]) -> Any:
            try:
                return fn()
            except (RlmError, VaultError, BadArgument, TypeError) as exc:
                raise _fail(exc) from exc

        def rlm_call(slice: Any, question: str, *, max_words: int | None = None) -> str:
            return str(guard(lambda: self.rlm_call(slice, question, max_words, library)))

        def rlm_batch(pairs: Any, *, max_words: int | None = None) -> list[str]:
            return list(guard(lambda: self.rlm_batch(pairs, max_words, library)))

        def ask_(question: str, k: int = 5) -> dict[str, Any]:
            if library is None:
                raise HostFunctionError("RuntimeError", "ask() needs a vault")
            return dict(guard(lambda: self.ask(question, k, library)))

        def rlm_usage() -> dict[str, Any]:
            return self.usage()

        table: dict[str, tuple[Callable[..., Any], str, str]] = {
            "rlm_call": (rlm_call, RLM_CALL_DOC,
                         "rlm_call(slice, question: str, *, max_words: int | None = None) -> str"),
            "rlm_batch": (rlm_batch, RLM_BATCH_DOC,
                          "rlm_batch(pairs: list, *, max_words: int | None = None) -> list[str]"),
            "ask": (ask_, ASK_DOC, "ask(question: str, k: int = 5) -> dict"),
            "rlm_usage": (rlm_usage, USAGE_DOC, "rlm_usage() -> dict"),
        }
        return {name: HostFunction(fn, doc, sig) for name, (fn, doc, sig) in table.items()}


def _question(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError("question must be a non-empty string")
    if len(value) > MAX_QUESTION:
        raise TypeError(f"question longer than {MAX_QUESTION} characters")
    return value


def _max_words(value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 2_000:
        raise TypeError("max_words must be None or an integer between 1 and 2000")
    return value


RLM_CALL_DOC = """Ask a fresh sub-model ONE question about ONE slice; returns its answer as text.

slice: text; a note (its path or title, or a read() result); or a list of notes or search()
hits (each shown with title, date and source). The sub-model sees only the slice and the
question: no tools, no REPL, no rlm_call (depth 1). "NOT FOUND" means the slice lacks the
answer. Offline (no model configured) answers are extracted sentences labelled [extractive].
Bounds: 15 calls per exec (retries count, identical repeated calls are cached and free),
5 in flight. Raises RlmBudgetExceeded, RlmTimeout, LlmUnavailable, RlmSliceTooLarge."""

RLM_BATCH_DOC = """rlm_call over many [slice, question] pairs, at most 5 at once; answers in input
order. A batch needing more uncached calls than this exec has left raises RlmBudgetExceeded
before anything is sent; one still running at the cell's deadline raises RlmTimeout. If any
call fails, the first failure (in input order) is raised after all finish; the answers that
did arrive are cached, so re-running the same batch costs only the failed calls."""

ASK_DOC = """The recursive query loop: search, follow links, answer; when unresolved, search
again from new entry points (missing terms, new names) until resolved, nothing new is found,
or the budget is spent. Returns {"answer", "resolved", "notes", "trace", "stop", "usage"}.
Uses the same per-exec budget as rlm_call (one call per pass)."""

USAGE_DOC = """This exec's sub-call usage (calls, retries, cache hits, tokens) and the session's."""
