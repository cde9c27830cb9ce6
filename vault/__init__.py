"""rmh's deterministic core: notes, the folder, the index, retrieval, learning, lifecycle.

Import from here (`from vault import Vault, Hit`), never from the modules inside.
"""

from .conversation import (
    CONVERSATION_FORMATS,
    ArchiveDecision,
    ConversationFormatError,
    IngestReport,
    archive_decisions,
    build_context,
    ingest_conversations,
    load_conversations,
    next_in_vault,
)
from .core import Vault
from .corpus import Corpus
from .encoders import EmbeddingCache, Encoder, MemoryEmbeddingCache, MiniLmEncoder
from .errors import (
    AmbiguousNote,
    ModelUnavailable,
    NotAVault,
    NoteExists,
    NoteNotFound,
    NotText,
    PathRefused,
    QuotaExceeded,
    VaultError,
)
from .fusion import fuse, order, ranks
from .hits import Hit, SearchResult
from .learning import LEARNING_VERSION, LearningParams
from .ledger import LEDGER_FILE, Ledger, LedgerError
from .records import LinkInfo, MoveResult, NoteRecord
from .rerank import CrossEncoder, OnnxCrossEncoder
from .search import DEFAULT_WEIGHTS, SIGNALS, Scored, SearchEngine, SearchParams
from .sync import SyncReport
from .text import content_terms, tokenize
from .usage import NullUsage, UsageRecorder

__all__ = [
    "CONVERSATION_FORMATS",
    "DEFAULT_WEIGHTS",
    "LEARNING_VERSION",
    "LEDGER_FILE",
    "SIGNALS",
    "AmbiguousNote",
    "ArchiveDecision",
    "ConversationFormatError",
    "Corpus",
    "CrossEncoder",
    "EmbeddingCache",
    "Encoder",
    "Hit",
    "IngestReport",
    "LearningParams",
    "Ledger",
    "LedgerError",
    "LinkInfo",
    "MemoryEmbeddingCache",
    "MiniLmEncoder",
    "ModelUnavailable",
    "MoveResult",
    "NotAVault",
    "NotText",
    "NoteExists",
    "NoteNotFound",
    "NoteRecord",
    "NullUsage",
    "OnnxCrossEncoder",
    "PathRefused",
    "QuotaExceeded",
    "Scored",
    "SearchEngine",
    "SearchParams",
    "SearchResult",
    "SyncReport",
    "UsageRecorder",
    "Vault",
    "VaultError",
    "archive_decisions",
    "build_context",
    "content_terms",
    "fuse",
    "ingest_conversations",
    "load_conversations",
    "next_in_vault",
    "order",
    "ranks",
    "tokenize",
]
