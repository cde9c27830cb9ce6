"""The REPL's LLM functions: rlm_call, rlm_batch, ask, rlm_usage (sandbox host functions).

They are declared in the operation table (harness.operations: parameters, help, the "llm"
part) and implemented here. They run on the trusted side (the sandbox's host-call thread, in
the exec's context) and reach the model only through the Broker (harness/llm.py), which owns
the key and every bound. Failures reach user code through harness.errors.to_repl as exceptions
of the broker's class names (RlmBudgetExceeded, RlmTimeout, LlmUnavailable, RlmDepthExceeded,
RlmSliceTooLarge), of the vault's (NoteNotFound, AmbiguousNote), or TypeError for a slice of
the wrong shape (BadShape); never as strings that look like answers.

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
from collections.abc import Mapping
from typing import Any

from sandbox import HostFunction, current_exec, exec_time_left
from vault import AmbiguousNote, VaultError

from .ask import Searchable, ask
from .ask_render import render_note, render_notes
from .binding import Targets
from .errors import BadShape
from .llm import Broker, ExecBudget, stop_with_request
from .llm_types import RlmSliceTooLarge, RlmTimeout
from .operations import MAX_QUESTION
from .tools import repl_functions
from .vault_ops import UnrecordedVault, VaultCalls

MAX_PAIRS = 64
MAX_SLICE_ITEMS = 50
NOTE_NAME_MAX = 300

# (owner, budget): a budget set by another RlmTools (another connection) is not ours.
_EXEC_BUDGET: contextvars.ContextVar[tuple[RlmTools, ExecBudget] | None] = contextvars.ContextVar(
    "rmh_exec_budget", default=None
)


class RlmTools:
    """The LLM part of the REPL for one connection: `functions(ops)` builds its table."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.last: ExecBudget | None = None

    def begin_exec(self) -> ExecBudget:
        """A fresh budget for the exec about to run in this context; returns it for reporting."""
        budget = self.broker.new_budget()
        stop_with_request(budget, self.broker)  # an `ask` request's cancel stops its calls
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
    def _record(self, item: Any, library: Searchable) -> Mapping[str, Any]:
        """The note an item names, its text cut to what a slice can show (a list of 50 names
        of an 8 MiB note must not hold 50 copies of it while the slice is built)."""
        _in_time()
        if isinstance(item, Mapping):
            if item.get("text") or item.get("body"):
                return item
            if isinstance(item.get("note"), str):
                return self._clip(library.read(item["note"]))
            raise BadShape("a note dict needs 'text'/'body', or 'note' naming a vault note")
        if isinstance(item, str):
            return self._clip(library.read(item))
        raise BadShape(f"cannot use a {type(item).__name__} as a note")

    def _clip(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        keep = 2 * self.broker.limits.slice_max_chars  # frontmatter is dropped after this
        return {**record, **{key: record[key][:keep] for key in ("text", "body")
                             if isinstance(record.get(key), str)}}

    def slice_text(self, value: Any, library: Searchable) -> str:
        """Render a slice value (module doc) to the text the sub-model sees; RlmSliceTooLarge
        (the broker's refusal, raised here already) when it is longer than the cap, so that
        rlm_batch holds at most one such slice: 64 pairs naming a 4 MB note held 64 rendered
        copies (host RSS +530 MiB) before the broker refused the first."""
        cap = self.broker.limits.slice_max_chars
        text = self._render(value, library, cap)
        if len(text) > cap:
            raise RlmSliceTooLarge(f"slice has {len(text)} characters; the cap is {cap} "
                                   "(pass a smaller slice)")
        return text

    def _render(self, value: Any, library: Searchable, cap: int) -> str:
        _in_time()
        if isinstance(value, str):
            one_line = "\n" not in value and 0 < len(value.strip()) <= NOTE_NAME_MAX
            if one_line:
                try:
                    return render_note(library.read(value.strip()))
                except AmbiguousNote:
                    raise  # it names notes, just not one: say so rather than guess
                except VaultError:
                    pass  # not a note's name: the string is the slice
            return value
        if isinstance(value, Mapping):
            return render_note(self._record(value, library))
        if isinstance(value, list | tuple):
            if len(value) > MAX_SLICE_ITEMS:
                raise BadShape(f"a slice list holds at most {MAX_SLICE_ITEMS} notes or hits")
            return render_notes([self._record(v, library) for v in value], cap)
        raise BadShape("slice must be text, a note, or a list of notes or search hits")

    # -- the functions (arguments checked by the operation table) ----------------------------
    def rlm_call(self, slice: Any, question: str, max_words: int | None,
                 library: Searchable) -> str:
        return self.broker.call(self.slice_text(slice, library), question, self.budget(),
                                max_words)

    def rlm_batch(self, pairs: Any, max_words: int | None, library: Searchable) -> list[str]:
        if not isinstance(pairs, list | tuple) or len(pairs) > MAX_PAIRS:
            raise BadShape(f"pairs must be a list of at most {MAX_PAIRS} (slice, question)")
        rendered: list[tuple[str, str]] = []
        for pair in pairs:
            if isinstance(pair, Mapping):
                pair = (pair.get("slice"), pair.get("question"))
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise BadShape("each pair must be [slice, question] or {slice, question}")
            rendered.append((self.slice_text(pair[0], library), _question(pair[1])))
        return self.broker.batch(rendered, self.budget(), max_words)

    def ask(self, question: str, budget: int, library: VaultCalls) -> dict[str, Any]:
        """The loop over the quiet vault (its inner searches and reads teach nothing); the
        answer set is logged once, as shown for the question."""
        result = ask(question, UnrecordedVault(library), self.broker, self.budget(), budget=budget)
        library.shown(question, result.notes)
        return result.to_json()

    def usage(self) -> dict[str, Any]:
        return {"exec": self.budget().report(), "session": self.broker.totals(),
                "provider": self.broker.provider.name}

    def functions(self, ops: VaultCalls) -> dict[str, HostFunction]:
        """The host-function table (a `FunctionParts` for harness.methods.Harness)."""
        return repl_functions(Targets(ops, self), "llm")


def _in_time() -> None:
    """RlmTimeout once the exec's deadline has passed: a slice of many notes is read on the
    host before anything is sent, and the cell is answered at its deadline, so reading on
    would be host work for nobody (64 pairs of 50 names of a 4 MB note: 3,200 reads, ~100 s
    of host CPU, all but the first 20 s after a 20 s cell had been answered)."""
    if exec_time_left() <= 0:
        raise RlmTimeout("the exec's deadline passed while the slices were read (nothing was "
                         "sent)")


def _question(value: Any) -> str:
    """A question inside a list of pairs (a top-level question is a checked parameter)."""
    if not isinstance(value, str) or not value.strip():
        raise BadShape("question must be a non-empty string")
    if len(value) > MAX_QUESTION:
        raise BadShape(f"question longer than {MAX_QUESTION} characters")
    return value
