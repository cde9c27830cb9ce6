"""rmh's deterministic core: notes, the folder, the index, retrieval, learning, lifecycle.

Import from here (`from vault import Vault, Hit`), never from the modules inside.
"""

from .conversation import (
    CONVERSATION_FORMATS,
    ArchiveDecision,
    IngestReport,
    archive_decisions,
    build_context,
    ingest_conversations,
    load_conversations,
    next_in_vault,
)
from .core import Vault
from .errors import (
    AmbiguousNote,
    ConversationFormatError,
    IndexUnusable,
    LedgerError,
    ModelUnavailable,
    NotAVault,
    NoteExists,
    NoteFormatError,
    NoteNotFound,
    NotText,
    PathRefused,
    QuotaExceeded,
    SchemaTooNew,
    VaultError,
)
from .learning.formulas import LEARNING_VERSION, LearningParams
from .learning.ledger import LEDGER_FILE, Ledger
from .learning.usage import Learned, NullUsage, UsageRecorder, examination_probability
from .notes.records import LinkInfo, MoveResult, NoteRecord
from .retrieval.encoders import EmbeddingCache, Encoder, MemoryEmbeddingCache, MiniLmEncoder
from .retrieval.fusion import fuse, order, ranks
from .retrieval.hits import Hit, Scored, SearchResult
from .retrieval.pipeline import DEFAULT_WEIGHTS, SIGNALS, SearchEngine, SearchParams
from .retrieval.rerank import CrossEncoder, OnnxCrossEncoder
from .retrieval.text import content_terms, tokenize
from .storage.corpus import Corpus
from .storage.sync import SyncReport

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
    "IndexUnusable",
    "IngestReport",
    "Learned",
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
    "NoteFormatError",
    "NoteNotFound",
    "NoteRecord",
    "NullUsage",
    "OnnxCrossEncoder",
    "PathRefused",
    "QuotaExceeded",
    "SchemaTooNew",
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
    "examination_probability",
    "fuse",
    "ingest_conversations",
    "load_conversations",
    "next_in_vault",
    "order",
    "ranks",
    "tokenize",
]
