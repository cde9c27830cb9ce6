"""Conversation memory: chats become dated events and entities in the vault (NDM, DMF, 4D).

Public entry points (re-exported by `vault`): `load_conversations` (`load_transcript`:
agent transcripts too, with the lines skipped), `ingest_conversations`, `build_context`,
`next_in_vault`, `archive_decisions`, `conversation_stability` (with
`conversation_from_corpus`), and the working partition (`working_note`, `working_path`,
`session_end`, `demoted_text`).
"""

from .archiving import ArchiveDecision, archive_decisions
from .context import Context, build_context
from .following import Next, next_in_vault
from .formats import Conversation
from .formats import load as load_conversations
from .formats import with_entities as conversation_with_entities
from .ingest import IngestReport
from .ingest import ingest as ingest_conversations
from .reading import ALL_FORMATS as CONVERSATION_FORMATS
from .reading import DATE_ORDERS as CONVERSATION_DATE_ORDERS
from .reading import Loaded as LoadedConversations
from .reading import load_report as load_transcript
from .remembered import remembered
from .slack import load_slack_export
from .stability import MODES as STABILITY_MODES
from .stability import Stability, conversation_from_corpus
from .stability import stability as conversation_stability
from .working import WorkingDecision, demoted_text, session_end, working_note, working_path

__all__ = [
    "CONVERSATION_DATE_ORDERS",
    "CONVERSATION_FORMATS",
    "STABILITY_MODES",
    "ArchiveDecision",
    "Context",
    "Conversation",
    "IngestReport",
    "LoadedConversations",
    "Next",
    "Stability",
    "WorkingDecision",
    "archive_decisions",
    "build_context",
    "conversation_from_corpus",
    "conversation_stability",
    "conversation_with_entities",
    "demoted_text",
    "ingest_conversations",
    "load_conversations",
    "load_slack_export",
    "load_transcript",
    "next_in_vault",
    "remembered",
    "session_end",
    "working_note",
    "working_path",
]
