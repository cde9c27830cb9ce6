"""Chat data exports -> `Conversation`: ChatGPT's and Claude.ai's `conversations.json`.

- **ChatGPT** (Settings > Data controls > Export): a list of conversations, each with ``id``
  (or ``conversation_id``), ``create_time`` (Unix seconds), ``current_node`` and a ``mapping``
  of nodes ``{id, parent, children, message}``; a message has ``author.role``, ``create_time``
  and ``content`` (``content_type`` "text" or "multimodal_text", string ``parts``). The
  thread read is the one shown: from ``current_node`` up through ``parent`` (a branch left by
  an edited or regenerated message is not read); without a ``current_node``, the last child
  at each step from the root.
- **Claude.ai** (Settings > Privacy > Export data): a list of conversations, each with
  ``uuid``, ``created_at`` and ``chat_messages`` ``{uuid, sender, text, content,
  created_at}``; ``sender`` "human" is the user.

Each conversation is one session, titled with the export's ``title`` (ChatGPT) or ``name``
(Claude.ai) when it is a string (the session note's `title` and alias); speakers "user" and
"assistant"; a turn's id is the message's own id (so a conversation that grew keeps its old
turns' ids). System, tool and
hidden messages, and parts that are not text (images, code output), are not turns. A message
without a time is dated as the one before it (the conversation's start for the first; else
1970-01-01, a fixed date). Times are UTC, naive. A message that is not an object, or a time
that cannot be read, is a problem (skipped, named); no message is half-read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..errors import ConversationFormatError
from .formats import EXPECTED, Conversation, Session, Turn, timestamp

EXPORT_FORMATS: tuple[str, ...] = ("chatgpt", "claude-ai")
_EPOCH = datetime(1970, 1, 1)
_TEXT_TYPES = ("text", "multimodal_text")


def export_kind(obj: Any) -> str | None:
    """"chatgpt" or "claude-ai" when a decoded JSON value is such an export, else None."""
    first = obj[0] if isinstance(obj, list) and obj else obj
    if isinstance(first, Mapping):
        if isinstance(first.get("mapping"), Mapping):
            return "chatgpt"
        if isinstance(first.get("chat_messages"), list):
            return "claude-ai"
    return None


def parse_export(obj: Any, kind: str, default_id: str
                 ) -> tuple[tuple[Conversation, ...], tuple[str, ...]]:
    """Conversations and problems of a ChatGPT (`kind` "chatgpt") or Claude.ai export;
    ConversationFormatError for a value that is no such export (`--format` named the wrong
    one)."""
    if export_kind(obj) != kind:
        raise ConversationFormatError(
            f"{kind}: not an export of conversations with "
            f"{'a `mapping`' if kind == 'chatgpt' else '`chat_messages`'}; {EXPECTED}")
    items: Sequence[Any] = obj if isinstance(obj, list) else [obj]
    out: list[Conversation] = []
    problems: list[str] = []
    for i, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            problems.append(f"conversation {i}: not an object")
            continue
        parse = _chatgpt if kind == "chatgpt" else _claude_ai
        cid, rows = parse(item, f"conversation {i}", problems)
        start = _when(item.get("create_time" if kind == "chatgpt" else "created_at"),
                      _EPOCH, f"conversation {i}", problems)
        turns: list[Turn] = []
        when = start
        for ident, role, text, stamp in rows:
            when = _when(stamp, when, f"conversation {i} message {ident}", problems)
            turns.append(Turn(ident, role, text, when, role=role))
        cid = cid or (default_id if len(items) == 1 else f"{default_id}-{i}")
        title = item.get("title" if kind == "chatgpt" else "name")
        out.append(Conversation(cid, (Session(cid, turns[0].when, tuple(turns),
                                              title if isinstance(title, str) else ""),)
                                if turns else ()))
    return tuple(out), tuple(problems)


def _when(value: Any, fallback: datetime, where: str, problems: list[str]) -> datetime:
    if value is None:
        return fallback
    try:
        return timestamp(value)
    except ConversationFormatError as exc:
        problems.append(f"{where}: {exc.reason}")
        return fallback


_Row = tuple[str, str, str, Any]


def _chatgpt(item: Mapping[str, Any], where: str, problems: list[str]
             ) -> tuple[str, list[_Row]]:
    mapping = item.get("mapping")
    nodes: Mapping[str, Any] = mapping if isinstance(mapping, Mapping) else {}
    chain: list[str] = []
    node = _node(nodes, item.get("current_node")) or _last_leaf(nodes)
    seen: set[str] = set()
    while node is not None and node not in seen:
        seen.add(node)
        chain.append(node)
        here = nodes[node]
        node = _node(nodes, here.get("parent") if isinstance(here, Mapping) else None)
    rows: list[_Row] = []
    for key in reversed(chain):
        here = nodes[key]
        msg = here.get("message") if isinstance(here, Mapping) else None
        if msg is None:
            continue
        if not isinstance(msg, Mapping):
            problems.append(f"{where} message {key}: not an object")
            continue
        author = msg.get("author")
        role = author.get("role") if isinstance(author, Mapping) else None
        meta = msg.get("metadata")
        if role not in ("user", "assistant") or (
                isinstance(meta, Mapping) and meta.get("is_visually_hidden_from_conversation")):
            continue
        content = msg.get("content")
        if not isinstance(content, Mapping) or content.get("content_type") not in _TEXT_TYPES:
            continue
        parts = content.get("parts")
        text = "\n".join(p for p in parts if isinstance(p, str) and p.strip()
                         ) if isinstance(parts, list) else ""
        if text.strip():
            rows.append((str(msg.get("id") or key), str(role), text, msg.get("create_time")))
    return str(item.get("conversation_id") or item.get("id") or ""), rows


def _last_leaf(nodes: Mapping[str, Any]) -> str | None:
    """The leaf reached from the root (the node without a parent) by the last child each step."""
    roots = sorted(k for k, v in nodes.items()
                   if isinstance(v, Mapping) and v.get("parent") is None)
    node = roots[0] if roots else None
    for _ in range(len(nodes)):
        here = nodes[node] if node is not None else None
        kids = here.get("children") if isinstance(here, Mapping) else None
        child = _node(nodes, kids[-1]) if isinstance(kids, list) and kids else None
        if child is None:
            break
        node = child
    return node


def _node(nodes: Mapping[str, Any], key: Any) -> str | None:
    """`key` when it names a node of `nodes` (a string: a list or an object names none)."""
    return key if isinstance(key, str) and key in nodes else None


def _claude_ai(item: Mapping[str, Any], where: str, problems: list[str]
               ) -> tuple[str, list[_Row]]:
    raw = item.get("chat_messages")
    rows: list[_Row] = []
    seen: set[str] = set()
    for n, msg in enumerate(raw if isinstance(raw, list) else [], start=1):
        if not isinstance(msg, Mapping):
            problems.append(f"{where} message {n}: not an object")
            continue
        sender = msg.get("sender")
        role = {"human": "user", "user": "user", "assistant": "assistant"}.get(str(sender))
        if role is None:
            continue
        text = msg.get("text") if isinstance(msg.get("text"), str) else ""
        if not str(text).strip() and isinstance(msg.get("content"), list):
            text = "\n".join(str(b["text"]) for b in msg["content"] if isinstance(b, Mapping)
                             and b.get("type") == "text" and isinstance(b.get("text"), str))
        ident = str(msg.get("uuid") or f"m{n}")
        if str(text).strip() and ident not in seen:  # a message listed twice is one turn
            seen.add(ident)
            rows.append((ident, role, str(text), msg.get("created_at")))
    return str(item.get("uuid") or item.get("id") or ""), rows
