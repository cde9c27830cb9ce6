"""Conversation memory: chats become dated events and entities in the vault (NDM, DMF, 4D).

Public entry points (re-exported by `vault`): `load_conversations`, `ingest_conversations`,
`build_context`, `next_in_vault`, `archive_decisions`.
"""

from .archiving import ArchiveDecision, archive_decisions
from .context import Context, build_context
from .formats import FORMATS as CONVERSATION_FORMATS
from .formats import Conversation
from .formats import load as load_conversations
from .ingest import IngestReport
from .ingest import ingest as ingest_conversations
from .nexts import Next, next_in_vault

__all__ = [
    "CONVERSATION_FORMATS",
    "ArchiveDecision",
    "Context",
    "Conversation",
    "IngestReport",
    "Next",
    "archive_decisions",
    "build_context",
    "ingest_conversations",
    "load_conversations",
    "next_in_vault",
]
