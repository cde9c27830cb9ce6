"""vault's public surface, written once: every name `from vault import X` offers, and where it
lives. vault/__init__.py reads this file at import (no name is listed anywhere else), and type
checkers read it as the package's stub, so both see the same table.

One line per name, `from .module import Name as Name`; a name public under another name than
its own is imported as `_Public` and bound by `Public = _Public` at the end (a stub exports a
renamed import only so). The product (harness, sandbox, rpc, bench) and its tests import only
these; tests of vault's own rooms and the white-box tools named in
tests/test_import_directions.py import the modules inside directly.
"""

from .cancel import IngestStopped as IngestStopped
from .cancel import cancellable as cancellable
from .cancel import checkpoint as checkpoint
from .conversation import CONVERSATION_DATE_ORDERS as CONVERSATION_DATE_ORDERS
from .conversation import CONVERSATION_FORMATS as CONVERSATION_FORMATS
from .conversation import STABILITY_MODES as STABILITY_MODES
from .conversation import ArchiveDecision as ArchiveDecision
from .conversation import archive_decisions as archive_decisions
from .conversation import build_context as build_context
from .conversation import conversation_from_corpus as conversation_from_corpus
from .conversation import conversation_stability as conversation_stability
from .conversation import conversation_with_entities as conversation_with_entities
from .conversation import demoted_text as demoted_text
from .conversation import ingest_conversations as ingest_conversations
from .conversation import load_conversations as load_conversations
from .conversation import load_slack_export as load_slack_export
from .conversation import load_transcript as load_transcript
from .conversation import next_in_vault as next_in_vault
from .conversation import remembered as remembered
from .conversation import session_end as session_end
from .conversation import working_note as working_note
from .conversation import working_path as working_path
from .conversation.context import EventIndex as EventIndex
from .conversation.context import Line as _ContextLine
from .conversation.context import Weights as _ContextWeights
from .conversation.context import context_from_items as context_from_items
from .conversation.context import score_parts as score_parts
from .conversation.corrections import correct as _correct_fact
from .conversation.episodes import find_episodes as find_episodes
from .conversation.events import build_events as build_events
from .conversation.facts import build_facts as build_facts
from .conversation.facts import sentence as _fact_sentence
from .conversation.facts import turn_statements as turn_statements
from .conversation.items import Item as _ContextItem
from .conversation.items import item_of as item_of
from .conversation.nlp import status as _nlp_status
from .conversation.provenance import origin as _note_origin
from .conversation.statements import extract_statements as extract_statements
from .core import Vault as Vault
from .errors import AmbiguousNote as AmbiguousNote
from .errors import Cancelled as Cancelled
from .errors import ConversationFormatError as ConversationFormatError
from .errors import DiskFull as DiskFull
from .errors import EditConflict as EditConflict
from .errors import EditRefused as EditRefused
from .errors import ErasurePending as ErasurePending
from .errors import IndexUnusable as IndexUnusable
from .errors import LedgerError as LedgerError
from .errors import ModelUnavailable as ModelUnavailable
from .errors import NotAVault as NotAVault
from .errors import NoteExists as NoteExists
from .errors import NoteNotFound as NoteNotFound
from .errors import NoteSkipped as NoteSkipped
from .errors import PathRefused as PathRefused
from .errors import PermissionDenied as PermissionDenied
from .errors import QuotaExceeded as QuotaExceeded
from .errors import ReadOnlyVault as ReadOnlyVault
from .errors import StateRefused as StateRefused
from .errors import VaultError as VaultError
from .full_disk import is_disk_full as is_disk_full
from .learning.answer import answer_uses as answer_uses
from .learning.asked import FLOOR as _ASKED_FLOOR
from .learning.asked import WALK as _ASKED_WALK
from .learning.compact import LedgerLimits as LedgerLimits
from .learning.edges import WeightedEdges as WeightedEdges
from .learning.formulas import LEARNING_VERSION as LEARNING_VERSION
from .learning.formulas import LearningParams as LearningParams
from .learning.ledger import LEDGER_FILE as LEDGER_FILE
from .learning.ledger import Ledger as Ledger
from .learning.liveness import SESSIONS_DIR as SESSIONS_DIR
from .learning.liveness import SessionLocks as SessionLocks
from .learning.pair_table import PairTable as PairTable
from .learning.read_only import ReadOnlyUsage as ReadOnlyUsage
from .learning.read_only import open_read_only_ledger as open_read_only_ledger
from .learning.state import LearnedState as LearnedState
from .learning.state import NoteState as NoteState
from .learning.state import Pair as Pair
from .learning.usage import NullUsage as NullUsage
from .notes.edits import EDIT_KINDS as EDIT_KINDS
from .notes.edits import Edit as Edit
from .notes.note import tag_key as tag_key
from .notes.records import NoteRecord as NoteRecord
from .notes.text import content_stems as content_stems
from .notes.text import content_terms as content_terms
from .notes.text import tokenize as tokenize
from .notes.times_asked import asked_alone as asked_alone
from .notes.trust import trust_of as _claim_trust
from .plural import counted as counted
from .retrieval.covered import coverage as _term_coverage
from .retrieval.covered import query_terms as _topic_terms
from .retrieval.cross_encoder import RunBound as RunBound
from .retrieval.dense_health import dense_health_line as dense_health_line
from .retrieval.encoders import Encoder as Encoder
from .retrieval.encoders import MiniLmEncoder as MiniLmEncoder
from .retrieval.fusion import order as order
from .retrieval.hits import Hit as Hit
from .retrieval.hits import SearchResult as SearchResult
from .retrieval.pipeline import DEFAULT_WEIGHTS as DEFAULT_WEIGHTS
from .retrieval.pipeline import SearchEngine as SearchEngine
from .retrieval.pipeline import SearchParams as SearchParams
from .retrieval.relevance import constants as _relevance_constants
from .retrieval.relevance import judge as _judge_relevance
from .retrieval.rerank import OnnxCrossEncoder as OnnxCrossEncoder
from .retrieval.scope import passed_factor as passed_factor
from .retrieval.signals.bm25 import Bm25Index as Bm25Index
from .retrieval.signals.bm25 import described as _frontmatter_words
from .retrieval.signals.dense import DenseIndex as DenseIndex
from .retrieval.signals.dense import DenseParams as DenseParams
from .retrieval.signals.dense_units import corpus_chunks as corpus_chunks
from .retrieval.signals.graph import Walk as Walk
from .retrieval.signals.graph import adjacency as _link_adjacency
from .retrieval.signals.graph import pagerank as pagerank
from .retrieval.signals.graph import push as _pagerank_push
from .retrieval.signals.ivf import IvfParams as IvfParams
from .retrieval.when import name_day as name_day
from .retrieval.when import value_day as value_day
from .room import no_space as no_space
from .storage.corpus import Corpus as Corpus
from .storage.corpus import CorpusDelta as CorpusDelta
from .storage.embeddings import EmbeddingCache as EmbeddingCache
from .storage.embeddings import MemoryEmbeddingCache as MemoryEmbeddingCache
from .storage.embeddings import SharedEmbeddingCache as SharedEmbeddingCache
from .storage.embeddings import TieredEmbeddingCache as TieredEmbeddingCache
from .storage.embeddings import embedding_key as embedding_key
from .storage.faults import operation_made as operation_made
from .storage.fileops import dead_temps as dead_temps
from .storage.fileops import replace_whole as replace_whole
from .storage.intents import journal_stamp as journal_stamp
from .storage.mentions import ending_in_part as ending_in_part
from .storage.mentions import mentioning as mentioning
from .storage.migrations import connect_state as connect_state
from .storage.paths import path_refusal as path_refusal
from .storage.state_anchor import held_state as held_state
from .untyped_errors import storage_error as storage_error
from .untyped_errors import writable as writable

ASKED_FLOOR = _ASKED_FLOOR
ASKED_WALK = _ASKED_WALK
claim_trust = _claim_trust
ContextItem = _ContextItem
ContextLine = _ContextLine
ContextWeights = _ContextWeights
correct_fact = _correct_fact
fact_sentence = _fact_sentence
frontmatter_words = _frontmatter_words
judge_relevance = _judge_relevance
link_adjacency = _link_adjacency
nlp_status = _nlp_status
note_origin = _note_origin
pagerank_push = _pagerank_push
relevance_constants = _relevance_constants
term_coverage = _term_coverage
topic_terms = _topic_terms
