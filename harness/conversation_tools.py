"""Conversation memory's implementations: `context`, `what_came_next`, `ingest`.

Thin adapters over `vault.build_context`, `vault.next_in_vault` and
`vault.ingest_conversations`, used by the operation table (harness.operations), which declares
and checks their parameters. Every vault call runs on the vault thread, like `VaultCalls`.
The conversation package (and the scipy it needs) is imported on first use, not when the
server starts, so the first MCP response does not wait for it.
"""

from __future__ import annotations

import contextlib
import json
import re
from datetime import date
from typing import TYPE_CHECKING, Any

from .errors import BadArgument

if TYPE_CHECKING:
    from vault import Vault

    from .vault_ops import VaultCalls

DEFAULT_ID = "conversation"  # a chat whose format names none (several: conversation-N)
_DERIVED = re.compile(rf"{DEFAULT_ID}(-[0-9]+)?")


def _said(text: str) -> str:
    return " ".join(text.split())


def replaced_turn(vault: Vault, conv: Any) -> str | None:
    """A turn the vault holds under `conv`'s id (`conv`: a vault `Conversation`; what it holds:
    vault `conversation_from_corpus`) that `conv` does not hold as it is (another speaker or
    text at its session and turn, or no such turn), in words; None when `conv` is what the
    vault holds or its continuation (re-ingesting, or a chat that grew)."""
    from vault import ConversationFormatError, conversation_from_corpus

    try:
        held = conversation_from_corpus(vault.corpus(), conv.conversation_id)
    except ConversationFormatError:  # no turn of it yet
        return None
    new = {(s.session_id, t.turn_id): (t.speaker, _said(t.text))
           for s in conv.sessions for t in s.turns}
    for session in held.sessions:
        for t in session.turns:
            if new.get((session.session_id, t.turn_id)) != (t.speaker, _said(t.text)):
                return (f"session {session.session_id!r}, turn {t.turn_id!r}: "
                        f"{t.speaker}: {_said(t.text)[:40]!r}")
    return None


def refuse_replacing(vault: Vault, convs: list[Any]) -> None:
    """An id-less chat (its id the default) that would write over another chat's turns
    is a BadArgument naming `conversation_id` (NEWUSER4: the second chat sent with no id
    replaced the first's turn notes, nothing reported)."""
    for conv in convs:
        if _DERIVED.fullmatch(conv.conversation_id) is None:
            continue
        if (turn := replaced_turn(vault, conv)) is not None:
            cid = conv.conversation_id
            raise BadArgument("conversation_id", (
                f"this chat names no conversation id, and the vault's conversation {cid!r} "
                f"holds other turns ({turn}): ingested as {cid!r} it would replace them; "
                f"give conversation_id a name of this chat's own (or {cid!r} to replace it)"))


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
    of a conversation whose format carries none (else "conversation", refused when that
    would replace turns the vault holds under it: `refuse_replacing`)."""
    from vault import ingest_conversations, load_transcript

    text = conversation if isinstance(conversation, str) else json.dumps(
        conversation, ensure_ascii=False)
    loaded = load_transcript(text, format, conversation_id or DEFAULT_ID,
                             date_order=date_order)
    if conversation_id is None:  # refused early, before the entity step (an LLM's calls)
        ops.thread.call(lambda: refuse_replacing(ops.vault, list(loaded.conversations)))
    # the entity step `[extract] entities` names, as `rmh ingest` takes it (harness/extraction)
    convs, use_nlp, more = list(loaded.conversations), True, {}
    if ops.extract is not None:
        convs, use_nlp, report = ops.extract(loaded.conversations)
        more = {"extraction": report}

    def run() -> dict[str, Any]:
        with contextlib.ExitStack() as held:
            if conversation_id is None:  # named: the caller means that conversation, replaced
                # checked again with the ingest under the vault's write lock: another
                # id-less ingest (this server's or another process's) may have landed since
                held.enter_context(ops.vault.locked())
                ops.vault.sync()  # another process's notes: the corpus the check reads
                refuse_replacing(ops.vault, list(loaded.conversations))
            return {**ingest_conversations(ops.vault, convs, use_nlp=use_nlp,
                                           regenerate=regenerate).to_json(),
                    "skipped_lines": list(loaded.problems), **more}

    return ops.thread.call(run)


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
