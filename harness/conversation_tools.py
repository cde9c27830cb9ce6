"""Conversation memory on the wire and in the REPL: `context`, `what_came_next`, `ingest`.

Thin adapters over `vault.build_context`, `vault.next_in_vault` and
`vault.ingest_conversations`: arguments from outside are validated here (naming the parameter),
and every vault call runs on the vault thread, like the rest of `VaultOps`.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from sandbox import HostFunction
from vault import build_context, ingest_conversations, load_conversations, next_in_vault

from .tools import BadArgument, VaultOps, int_arg, text_arg, typed_errors

MAX_BUDGET_WORDS = 20_000
MAX_CONVERSATION_CHARS = 64 * 1024 * 1024


def _day(param: str, value: Any) -> date | None:
    if value is None:
        return None
    text = text_arg(param, value, max_len=40)
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise BadArgument(param, "must be an ISO date (YYYY-MM-DD)") from exc


def context(
    ops: VaultOps,
    query: Any,
    budget_words: Any = 600,
    conversation: Any = None,
    date_from: Any = None,
    date_to: Any = None,
) -> dict[str, Any]:
    """Budgeted, dated, speaker-labelled context for `query` (no LLM tokens spent)."""
    q = text_arg("query", query)
    budget = int_arg("budget_words", budget_words, 1, MAX_BUDGET_WORDS)
    conv = None if conversation is None else text_arg("conversation", conversation, max_len=200)
    start, end = _day("date_from", date_from), _day("date_to", date_to)
    return ops.thread.call(
        lambda: build_context(
            ops.vault, q, budget, conversation=conv, date_from=start, date_to=end
        ).to_json()
    )


def what_came_next(ops: VaultOps, query: Any, n: Any = 3) -> dict[str, Any]:
    """The events that followed the event best matching `query`."""
    q = text_arg("query", query)
    count = int_arg("n", n, 1, 50)
    return ops.thread.call(lambda: next_in_vault(ops.vault, q, count).to_json())


def ingest(ops: VaultOps, conversation: Any, format: Any = "auto") -> dict[str, Any]:
    """Ingest a conversation given as a JSON object or JSON text (LoCoMo, LongMemEval, simple)."""
    if isinstance(conversation, dict | list):
        text = json.dumps(conversation, ensure_ascii=False)
    else:
        text = text_arg("conversation", conversation, max_len=MAX_CONVERSATION_CHARS)
    fmt = text_arg("format", format, max_len=40)
    convs = load_conversations(text, fmt)
    return ops.thread.call(lambda: ingest_conversations(ops.vault, convs).to_json())


def conversation_functions(ops: VaultOps) -> dict[str, HostFunction]:
    """The conversation part of the REPL globals."""

    def context_(query: str, budget_words: int = 600, conversation: str | None = None,
                 date_from: str | None = None, date_to: str | None = None) -> dict[str, Any]:
        """context(query, budget_words=600, conversation=None, date_from=None, date_to=None)

        Budgeted context for a model, built by counting (no LLM): the best-scoring turns and
        the turn before each, sorted by date, each line labelled with speaker and date,
        lowest scores cut first to fit the word budget. Returns {"text", "lines", ...}.
        Dates are ISO strings ("2023-05-08") and filter turns by their date.
        """
        return context(ops, query, budget_words, conversation, date_from, date_to)

    def what_came_next_(query: str, n: int = 3) -> dict[str, Any]:
        """what_came_next(query, n=3) -> the n events that followed the best match for query."""
        return what_came_next(ops, query, n)

    return {
        "context": HostFunction(
            typed_errors(context_), context_.__doc__ or "",
            "context(query: str, budget_words: int = 600, conversation: str | None = None, "
            "date_from: str | None = None, date_to: str | None = None) -> dict",
        ),
        "what_came_next": HostFunction(
            typed_errors(what_came_next_), what_came_next_.__doc__ or "",
            "what_came_next(query: str, n: int = 3) -> dict",
        ),
    }
