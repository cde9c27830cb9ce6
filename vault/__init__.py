"""rmh's deterministic core: notes, the folder, the index, retrieval, learning, lifecycle.

Import from here (`from vault import Vault, Hit`), never from the modules inside. The rooms:
`notes/` (one note), `storage/` (folder, index, snapshot), `retrieval/` (signals, fusion,
stages, rerank), `learning/` (event log and learned state), `conversation/` (NDM, DMF, 4D).
Besides the facade and its values, a few building blocks are public because the benchmarks
measure them on their own (BM25, the pair table, the conversation context scorer).

Names are loaded on first use (PEP 562 `__getattr__`), so `from vault import VaultError` does
not pay for numpy, scipy and the conversation package: the CLI starts fast, and a command
imports only what it touches.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cancel import (
        cancellable,
    )
    from .conversation import (
        CONVERSATION_FORMATS,
        STABILITY_MODES,
        ArchiveDecision,
        IngestReport,
        LoadedConversations,
        Stability,
        WorkingDecision,
        archive_decisions,
        build_context,
        conversation_from_corpus,
        conversation_stability,
        demoted_text,
        ingest_conversations,
        load_conversations,
        load_transcript,
        next_in_vault,
        session_end,
        working_note,
        working_path,
    )
    from .conversation.context import (
        EventIndex,
        context_from_items,
        score_parts,
    )
    from .conversation.context import Weights as ContextWeights
    from .conversation.corrections import ACTIONS as FACT_ACTIONS
    from .conversation.corrections import correct as correct_fact
    from .conversation.episodes import find_episodes
    from .conversation.events import (
        build_events,
    )
    from .conversation.facts import (
        build_facts,
        turn_statements,
    )
    from .conversation.facts import sentence as fact_sentence
    from .conversation.items import Item as ContextItem
    from .conversation.items import (
        item_of,
    )
    from .conversation.nlp import status as nlp_status
    from .conversation.provenance import origin as note_origin
    from .conversation.statements import (
        extract_statements,
    )
    from .core import (
        Vault,
    )
    from .errors import (
        AmbiguousNote,
        ConversationFormatError,
        DiskFull,
        EditConflict,
        EditRefused,
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
        PermissionDenied,
        QuotaExceeded,
        SchemaTooNew,
        VaultError,
        is_disk_full,
        no_space,
        storage_error,
    )
    from .learning.answer import (
        answer_uses,
    )
    from .learning.edges import (
        WeightedEdges,
    )
    from .learning.formulas import (
        LEARNING_VERSION,
        LearningParams,
    )
    from .learning.ledger import (
        LEDGER_FILE,
        Ledger,
    )
    from .learning.liveness import (
        SESSIONS_DIR,
        SessionLocks,
    )
    from .learning.pair_table import (
        PairTable,
    )
    from .learning.state import (
        LearnedState,
        NoteState,
        Pair,
    )
    from .learning.usage import (
        Learned,
        NullUsage,
        UsageRecorder,
        examination_probability,
    )
    from .notes.edits import EDIT_KINDS, Edit
    from .notes.hashing import content_hash
    from .notes.records import (
        LinkInfo,
        MoveResult,
        NoteRecord,
    )
    from .notes.text import content_terms, tokenize
    from .notes.trust import trust_of as claim_trust
    from .retrieval.encoders import Encoder, MiniLmEncoder
    from .retrieval.fusion import (
        fuse,
        order,
        ranks,
    )
    from .retrieval.hits import (
        Hit,
        Scored,
        SearchResult,
    )
    from .retrieval.pipeline import (
        DEFAULT_WEIGHTS,
        SIGNALS,
        SearchEngine,
        SearchParams,
    )
    from .retrieval.relevance import Relevance
    from .retrieval.relevance import constants as relevance_constants
    from .retrieval.relevance import judge as judge_relevance
    from .retrieval.rerank import (
        CrossEncoder,
        OnnxCrossEncoder,
    )
    from .retrieval.signals.bm25 import (
        Bm25Index,
    )
    from .retrieval.signals.dense import (
        DenseIndex,
        DenseParams,
        corpus_chunks,
    )
    from .retrieval.signals.graph import Walk, pagerank
    from .retrieval.signals.graph import adjacency as link_adjacency
    from .retrieval.signals.graph import push as pagerank_push
    from .retrieval.signals.ivf import (
        IvfParams,
    )
    from .storage.corpus import (
        Corpus,
        CorpusDelta,
    )
    from .storage.embeddings import (
        EmbeddingCache,
        MemoryEmbeddingCache,
        SharedEmbeddingCache,
        TieredEmbeddingCache,
        embedding_key,
    )
    from .storage.sync import (
        SyncReport,
    )

_LAZY: dict[str, tuple[str, str]] = {  # public name -> (module, attribute)
    "AmbiguousNote": (".errors", "AmbiguousNote"),
    "ArchiveDecision": (".conversation", "ArchiveDecision"),
    "Bm25Index": (".retrieval.signals.bm25", "Bm25Index"),
    "CONVERSATION_FORMATS": (".conversation", "CONVERSATION_FORMATS"),
    "ContextItem": (".conversation.items", "Item"),
    "ContextWeights": (".conversation.context", "Weights"),
    "ConversationFormatError": (".errors", "ConversationFormatError"),
    "DiskFull": (".errors", "DiskFull"),
    "PermissionDenied": (".errors", "PermissionDenied"),
    "storage_error": (".errors", "storage_error"),
    "is_disk_full": (".errors", "is_disk_full"),
    "no_space": (".errors", "no_space"),
    "Corpus": (".storage.corpus", "Corpus"),
    "CrossEncoder": (".retrieval.rerank", "CrossEncoder"),
    "DEFAULT_WEIGHTS": (".retrieval.pipeline", "DEFAULT_WEIGHTS"),
    "EDIT_KINDS": (".notes.edits", "EDIT_KINDS"),
    "Edit": (".notes.edits", "Edit"),
    "EditConflict": (".errors", "EditConflict"),
    "EditRefused": (".errors", "EditRefused"),
    "EmbeddingCache": (".storage.embeddings", "EmbeddingCache"),
    "Encoder": (".retrieval.encoders", "Encoder"),
    "EventIndex": (".conversation.context", "EventIndex"),
    "Hit": (".retrieval.hits", "Hit"),
    "IndexUnusable": (".errors", "IndexUnusable"),
    "IngestReport": (".conversation", "IngestReport"),
    "LoadedConversations": (".conversation", "LoadedConversations"),
    "LEARNING_VERSION": (".learning.formulas", "LEARNING_VERSION"),
    "LEDGER_FILE": (".learning.ledger", "LEDGER_FILE"),
    "Learned": (".learning.usage", "Learned"),
    "LearnedState": (".learning.state", "LearnedState"),
    "LearningParams": (".learning.formulas", "LearningParams"),
    "Ledger": (".learning.ledger", "Ledger"),
    "answer_uses": (".learning.answer", "answer_uses"),
    "cancellable": (".cancel", "cancellable"),
    "LedgerError": (".errors", "LedgerError"),
    "LinkInfo": (".notes.records", "LinkInfo"),
    "MemoryEmbeddingCache": (".storage.embeddings", "MemoryEmbeddingCache"),
    "MiniLmEncoder": (".retrieval.encoders", "MiniLmEncoder"),
    "ModelUnavailable": (".errors", "ModelUnavailable"),
    "MoveResult": (".notes.records", "MoveResult"),
    "NotAVault": (".errors", "NotAVault"),
    "NotText": (".errors", "NotText"),
    "NoteExists": (".errors", "NoteExists"),
    "NoteFormatError": (".errors", "NoteFormatError"),
    "NoteNotFound": (".errors", "NoteNotFound"),
    "NoteSkipped": (".errors", "NoteSkipped"),
    "NoteRecord": (".notes.records", "NoteRecord"),
    "NoteState": (".learning.state", "NoteState"),
    "NullUsage": (".learning.usage", "NullUsage"),
    "OnnxCrossEncoder": (".retrieval.rerank", "OnnxCrossEncoder"),
    "Pair": (".learning.state", "Pair"),
    "PairTable": (".learning.pair_table", "PairTable"),
    "PathRefused": (".errors", "PathRefused"),
    "QuotaExceeded": (".errors", "QuotaExceeded"),
    "SESSIONS_DIR": (".learning.liveness", "SESSIONS_DIR"),
    "SIGNALS": (".retrieval.pipeline", "SIGNALS"),
    "STABILITY_MODES": (".conversation", "STABILITY_MODES"),
    "SchemaTooNew": (".errors", "SchemaTooNew"),
    "Scored": (".retrieval.hits", "Scored"),
    "SearchEngine": (".retrieval.pipeline", "SearchEngine"),
    "DenseParams": (".retrieval.signals.dense", "DenseParams"),
    "DenseIndex": (".retrieval.signals.dense", "DenseIndex"),
    "Walk": (".retrieval.signals.graph", "Walk"),
    "pagerank": (".retrieval.signals.graph", "pagerank"),
    "pagerank_push": (".retrieval.signals.graph", "push"),
    "CorpusDelta": (".storage.corpus", "CorpusDelta"),
    "IvfParams": (".retrieval.signals.ivf", "IvfParams"),
    "SearchParams": (".retrieval.pipeline", "SearchParams"),
    "SearchResult": (".retrieval.hits", "SearchResult"),
    "Relevance": (".retrieval.relevance", "Relevance"),
    "judge_relevance": (".retrieval.relevance", "judge"),
    "relevance_constants": (".retrieval.relevance", "constants"),
    "SessionLocks": (".learning.liveness", "SessionLocks"),
    "SharedEmbeddingCache": (".storage.embeddings", "SharedEmbeddingCache"),
    "Stability": (".conversation", "Stability"),
    "SyncReport": (".storage.sync", "SyncReport"),
    "TieredEmbeddingCache": (".storage.embeddings", "TieredEmbeddingCache"),
    "UsageRecorder": (".learning.usage", "UsageRecorder"),
    "Vault": (".core", "Vault"),
    "VaultError": (".errors", "VaultError"),
    "WeightedEdges": (".learning.edges", "WeightedEdges"),
    "WorkingDecision": (".conversation", "WorkingDecision"),
    "archive_decisions": (".conversation", "archive_decisions"),
    "build_context": (".conversation", "build_context"),
    "FACT_ACTIONS": (".conversation.corrections", "ACTIONS"),
    "correct_fact": (".conversation.corrections", "correct"),
    "note_origin": (".conversation.provenance", "origin"),
    "claim_trust": (".notes.trust", "trust_of"),
    "build_events": (".conversation.events", "build_events"),
    "find_episodes": (".conversation.episodes", "find_episodes"),
    "build_facts": (".conversation.facts", "build_facts"),
    "content_hash": (".notes.hashing", "content_hash"),
    "content_terms": (".notes.text", "content_terms"),
    "context_from_items": (".conversation.context", "context_from_items"),
    "corpus_chunks": (".retrieval.signals.dense", "corpus_chunks"),
    "conversation_from_corpus": (".conversation", "conversation_from_corpus"),
    "conversation_stability": (".conversation", "conversation_stability"),
    "demoted_text": (".conversation", "demoted_text"),
    "embedding_key": (".storage.embeddings", "embedding_key"),
    "examination_probability": (".learning.usage", "examination_probability"),
    "extract_statements": (".conversation.statements", "extract_statements"),
    "fact_sentence": (".conversation.facts", "sentence"),
    "fuse": (".retrieval.fusion", "fuse"),
    "ingest_conversations": (".conversation", "ingest_conversations"),
    "item_of": (".conversation.items", "item_of"),
    "link_adjacency": (".retrieval.signals.graph", "adjacency"),
    "load_conversations": (".conversation", "load_conversations"),
    "load_transcript": (".conversation", "load_transcript"),
    "next_in_vault": (".conversation", "next_in_vault"),
    "nlp_status": (".conversation.nlp", "status"),
    "turn_statements": (".conversation.facts", "turn_statements"),
    "order": (".retrieval.fusion", "order"),
    "ranks": (".retrieval.fusion", "ranks"),
    "score_parts": (".conversation.context", "score_parts"),
    "session_end": (".conversation", "session_end"),
    "tokenize": (".notes.text", "tokenize"),
    "working_note": (".conversation", "working_note"),
    "working_path": (".conversation", "working_path"),
}


def __getattr__(name: str) -> Any:
    """Load a public name on first use and keep it in the module (later lookups are plain)."""
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'vault' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "CONVERSATION_FORMATS",
    "DEFAULT_WEIGHTS",
    "EDIT_KINDS",
    "FACT_ACTIONS",
    "LEARNING_VERSION",
    "LEDGER_FILE",
    "SESSIONS_DIR",
    "SIGNALS",
    "STABILITY_MODES",
    "AmbiguousNote",
    "ArchiveDecision",
    "Bm25Index",
    "ContextItem",
    "ContextWeights",
    "ConversationFormatError",
    "Corpus",
    "CorpusDelta",
    "CrossEncoder",
    "DenseIndex",
    "DenseParams",
    "DiskFull",
    "Edit",
    "EditConflict",
    "EditRefused",
    "EmbeddingCache",
    "Encoder",
    "EventIndex",
    "Hit",
    "IndexUnusable",
    "IngestReport",
    "IvfParams",
    "Learned",
    "LearnedState",
    "LearningParams",
    "Ledger",
    "LedgerError",
    "LinkInfo",
    "LoadedConversations",
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
    "PermissionDenied",
    "QuotaExceeded",
    "Relevance",
    "SchemaTooNew",
    "Scored",
    "SearchEngine",
    "SearchParams",
    "SearchResult",
    "SessionLocks",
    "SharedEmbeddingCache",
    "Stability",
    "SyncReport",
    "TieredEmbeddingCache",
    "UsageRecorder",
    "Vault",
    "VaultError",
    "Walk",
    "WeightedEdges",
    "WorkingDecision",
    "answer_uses",
    "archive_decisions",
    "build_context",
    "build_events",
    "build_facts",
    "cancellable",
    "claim_trust",
    "content_hash",
    "content_terms",
    "context_from_items",
    "conversation_from_corpus",
    "conversation_stability",
    "corpus_chunks",
    "correct_fact",
    "demoted_text",
    "embedding_key",
    "examination_probability",
    "extract_statements",
    "fact_sentence",
    "find_episodes",
    "fuse",
    "ingest_conversations",
    "is_disk_full",
    "item_of",
    "judge_relevance",
    "link_adjacency",
    "load_conversations",
    "load_transcript",
    "next_in_vault",
    "nlp_status",
    "no_space",
    "note_origin",
    "order",
    "pagerank",
    "pagerank_push",
    "ranks",
    "relevance_constants",
    "score_parts",
    "session_end",
    "storage_error",
    "tokenize",
    "turn_statements",
    "working_note",
    "working_path",
]
