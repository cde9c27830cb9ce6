"""Conversation memory's implementations: `context`, `what_came_next`, `ingest`.

Thin adapters over `vault.build_context`, `vault.next_in_vault` and
`vault.ingest_conversations`, used by the operation table (harness.operations), which declares
and checks their parameters. Every vault call runs on the vault thread, like `VaultCalls`.
The conversation package (and the scipy it needs) is imported on first use, not when the
server starts, so the first MCP response does not wait for it.
"""

from __future__ import annotations

import json
from datetime import date
from typing import TYPE_CHECKING, Any

from .errors import BadArgument

if TYPE_CHECKING:
    from .vault_ops import VaultCalls


def context(
    ops: VaultCalls,
    query: str,
    budget_words: int = 600,
    conversation: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> dict[str, Any]:
    """Budgeted, dated, speaker-labelled context for `query` (no LLM tokens spent); a range
    that ends before it starts is a `BadArgument` (it holds no day: "nothing relevant" would
    blame the question)."""
    from vault import build_context

    if date_from is not None and date_to is not None and date_from > date_to:
        raise BadArgument("date_from", f"{date_from.isoformat()} is after date_to "
                                       f"{date_to.isoformat()}: the range holds no day")

    return ops.thread.call(
        lambda: build_context(
            ops.vault, query, budget_words, conversation=conversation, date_from=date_from,
            date_to=date_to,
        ).to_json()
    )


def what_came_next(ops: VaultCalls, query: str, n: int = 3) -> dict[str, Any]:
    """The events that followed the event best matching `query`."""
    from vault import next_in_vault

    return ops.thread.call(lambda: next_in_vault(ops.vault, query, n).to_json())


def ingest(ops: VaultCalls, conversation: str | dict[str, Any] | list[Any],
           format: str = "auto", regenerate: bool = False,
           date_order: str | None = None,
           conversation_id: str | None = None) -> dict[str, Any]:
    """Ingest a conversation given as text or a JSON object (any `vault.CONVERSATION_FORMATS`);
    `regenerate`: rewrite notes edited by hand (the edit kept in the trash) and write those
    deleted again, else keep them and leave those out; `date_order` ("dmy", "mdy"): how a
    WhatsApp export's dates read where the file does not show it; `conversation_id`: the id
    of a conversation whose format carries none (else "conversation")."""
    from vault import ingest_conversations, load_transcript

    text = conversation if isinstance(conversation, str) else json.dumps(
        conversation, ensure_ascii=False)
    loaded = load_transcript(text, format, conversation_id or "conversation",
                             date_order=date_order)
    # the entity step `[extract] entities` names, as `rmh ingest` takes it (harness/extraction)
    convs, use_nlp, more = list(loaded.conversations), True, {}
    if ops.extract is not None:
        convs, use_nlp, report = ops.extract(loaded.conversations)
        more = {"extraction": report}
    return ops.thread.call(lambda: {**ingest_conversations(
        ops.vault, convs, use_nlp=use_nlp, regenerate=regenerate).to_json(),
        "skipped_lines": list(loaded.problems), **more})


class ConversationCalls:
    """The conversation part's target in the operation table: the three adapters above over
    one connection's vault operations."""

    def __init__(self, ops: VaultCalls) -> None:
        self.ops = ops

    def context(self, query: str, budget_words: int = 600, conversation: str | None = None,
                date_from: date | None = None, date_to: date | None = None) -> dict[str, Any]:
        return context(self.ops, query, budget_words, conversation, date_from, date_to)

    def what_came_next(self, query: str, n: int = 3) -> dict[str, Any]:
        return what_came_next(self.ops, query, n)

    def ingest(self, conversation: str | dict[str, Any] | list[Any],
               format: str = "auto", regenerate: bool = False,
               date_order: str | None = None,
               conversation_id: str | None = None) -> dict[str, Any]:
        return ingest(self.ops, conversation, format, regenerate, date_order, conversation_id)
