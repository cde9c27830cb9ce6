"""rmh's deterministic core: notes, the folder, the index, retrieval, learning, lifecycle.

Import from here (`from vault import Vault, Hit`), never from the modules inside. The rooms:
`notes/` (one note), `storage/` (folder, index, snapshot), `retrieval/` (signals, fusion,
stages, rerank), `learning/` (event log and learned state), `conversation/` (NDM, DMF, 4D).
Besides the facade and its values, a few building blocks are public because the benchmarks
measure them on their own (BM25, the pair table, the conversation context scorer).
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
from .conversation.context import EventIndex, context_from_items, score_parts
from .conversation.context import Weights as ContextWeights
from .conversation.events import build_events
from .conversation.items import Item as ContextItem
from .conversation.items import item_of
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
    NoteSkipped,
    NotText,
    PathRefused,
    QuotaExceeded,
    SchemaTooNew,
    VaultError,
)
from .learning.edges import WeightedEdges
from .learning.formulas import LEARNING_VERSION, LearningParams
from .learning.ledger import LEDGER_FILE, Ledger
from .learning.pair_table import PairTable
from .learning.state import LearnedState, NoteState, Pair
from .learning.usage import Learned, NullUsage, UsageRecorder, examination_probability
from .notes.records import LinkInfo, MoveResult, NoteRecord
from .retrieval.encoders import EmbeddingCache, Encoder, MemoryEmbeddingCache, MiniLmEncoder
from .retrieval.fusion import fuse, order, ranks
from .retrieval.hits import Hit, Scored, SearchResult
from .retrieval.pipeline import DEFAULT_WEIGHTS, SIGNALS, SearchEngine, SearchParams
from .retrieval.rerank import CrossEncoder, OnnxCrossEncoder
from .retrieval.signals.bm25 import Bm25Index
from .retrieval.signals.graph import adjacency as link_adjacency
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
    "Bm25Index",
    "ContextItem",
    "ContextWeights",
    "ConversationFormatError",
    "Corpus",
    "CrossEncoder",
    "EmbeddingCache",
    "Encoder",
    "EventIndex",
    "Hit",
    "IndexUnusable",
    "IngestReport",
    "Learned",
    "LearnedState",
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
    "NoteSkipped",
    "NoteState",
    "NullUsage",
    "OnnxCrossEncoder",
    "Pair",
    "PairTable",
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
    "WeightedEdges",
    "archive_decisions",
    "build_context",
    "build_events",
    "content_terms",
    "context_from_items",
    "examination_probability",
    "fuse",
    "ingest_conversations",
    "item_of",
    "link_adjacency",
    "load_conversations",
    "next_in_vault",
    "order",
    "ranks",
    "score_parts",
    "tokenize",
]
