#!/usr/bin/env bash
# Issue 28, helper D: the scripted moves and renames inside vault/, one commit per step.
# Re-apply after merging other branches: `bash refactor-D/apply.sh all` (or one STEP) from the
# repo root, on a clean tree that has not had the steps yet; each step makes one commit, and
# `ruff check .`, `mypy --strict .` and the tests then tell what a merged change still needs
# by hand. Needs .venv (ruff). The hand-made commits of this branch (the surface stub, the
# floor and size tests, docstrings) are separate commits to cherry-pick.
set -euo pipefail
E=".venv/bin/python refactor-D/pyedit.py"
RUFF=".venv/bin/ruff"
tidy() { $RUFF check -q --fix --select I,F401 vault harness bench tests sandbox rpc >/dev/null || true; }
commit() { git add -A vault harness bench tests sandbox rpc README.md && git commit -qm "$1"; }

text_to_notes() {  # the one tokenizer is the notes floor's (learning and retrieval both use it)
  git mv vault/retrieval/text.py vault/notes/text.py
  $E reimport vault.retrieval.text vault.notes.text STOPWORDS tokenize content_terms
  sed -i 's/"\.retrieval\.text"/".notes.text"/; s/from \.retrieval\.text import/from .notes.text import/' vault/__init__.py
  { grep -rl 'retrieval/text\.py' vault tests README.md || true; } | xargs -r sed -i 's#retrieval/text\.py#notes/text.py#g'
  tidy; commit "refactor (scripted): retrieval/text.py -> notes/text.py (learning no longer imports retrieval)"
}

rows_to_notes() {  # notes no longer import storage: the row types and the fold rule move down
  cat > vault/notes/rows.py <<'PY'
"""A note and its links as the index stores them: the row types that storage fills and reads
and that the notes floor (records, link resolution) consumes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
PY
  cat > vault/notes/folding.py <<'PY'
"""The one amortised rule of the layered structures (storage/overlay.py's overlays, the stat
cache, the link graph, the name tables): when the changes layered over a base fold into a
new base."""

from __future__ import annotations
PY
  $E move vault/storage/index.py vault/notes/rows.py LinkRow NoteRow
  $E move vault/storage/overlay.py vault/notes/folding.py COMPACT_SHARE MIN_COMPACT folds
  sed -i 's/^from \.migrations import migrate$/from ..notes.rows import LinkRow, NoteRow\n&/' vault/storage/index.py
  sed -i 's/^from \.columns import PACKED, ReadOnly, repacked$/from ..notes.folding import folds\n&/' vault/storage/overlay.py
  $E reimport vault.storage.index vault.notes.rows LinkRow NoteRow
  $E reimport vault.storage.overlay vault.notes.folding folds COMPACT_SHARE MIN_COMPACT
  for f in $(grep -rl 'monkeypatch.setattr(overlay, "MIN_COMPACT"' tests); do
    sed -i 's/monkeypatch.setattr(overlay, "MIN_COMPACT"/monkeypatch.setattr(folding, "MIN_COMPACT"/' "$f"
    sed -i 's/^\(\s*\)from vault.storage import overlay$/\1from vault.notes import folding\n&/' "$f"
  done
  tidy; commit "refactor (scripted): LinkRow, NoteRow -> notes/rows.py; folds -> notes/folding.py (notes no longer import storage)"
}

cache_to_storage() {  # storage no longer imports retrieval: the embedding cache seam moves down
  $E move vault/retrieval/encoders.py vault/storage/embeddings.py@first EmbeddingCache MemoryEmbeddingCache embedding_key
  sed -i 's/^import sqlite3$/import hashlib\n&/; s/^from pathlib import Path$/&\nfrom typing import Protocol/' vault/storage/embeddings.py
  sed -i '/^from \.\.retrieval\.encoders import EmbeddingCache$/d' vault/storage/embeddings.py
  sed -i 's/^from \.\.errors import ModelUnavailable$/&\nfrom ..storage.embeddings import EmbeddingCache, embedding_key/' vault/retrieval/encoders.py
  $E reimport vault.retrieval.encoders vault.storage.embeddings EmbeddingCache MemoryEmbeddingCache embedding_key
  sed -i 's/"\.retrieval\.encoders", "\(EmbeddingCache\|MemoryEmbeddingCache\|embedding_key\)"/".storage.embeddings", "\1"/' vault/__init__.py
  tidy; commit "refactor (scripted): EmbeddingCache, MemoryEmbeddingCache, embedding_key -> storage/embeddings.py (storage no longer imports retrieval)"
}

one_content_hash() {  # sync.content_hash(str), edits.content_hash(bytes), intents.text_hash(str): one
  cat > vault/notes/hashing.py <<'PY'
"""The one content hash of rmh: sha256 hex of a note's UTF-8 bytes.

It is the `hash` a read returns, the `content_hash` the index stores (and sync matches renamed
files by), what `expected_hash` checks before a write, and what the intent journal records.
A `str` is hashed as its UTF-8 encoding, so a text and the bytes of its file hash the same."""

from __future__ import annotations

import hashlib


def content_hash(data: str | bytes) -> str:
    """sha256 hex of `data` (a text: of its UTF-8 bytes)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()
PY
  : > /tmp/rmh-refactor-scratch.py
  $E drop vault/storage/sync.py /tmp/rmh-refactor-scratch.py content_hash
  : > /tmp/rmh-refactor-scratch.py
  $E drop vault/notes/edits.py /tmp/rmh-refactor-scratch.py content_hash
  : > /tmp/rmh-refactor-scratch.py
  $E drop vault/storage/intents.py /tmp/rmh-refactor-scratch.py text_hash
  $E reimport vault.storage.sync vault.notes.hashing content_hash
  $E reimport vault.notes.edits vault.notes.hashing content_hash
  $E reimport vault.storage.intents vault.notes.hashing text_hash
  $E rename text_hash content_hash $(grep -rlw --include=*.py text_hash vault tests harness bench)
  sed -i 's/^from \.index import /from ..notes.hashing import content_hash\n&/' vault/storage/sync.py
  sed -i 's/^from \.fileops import /from ..notes.hashing import content_hash\n&/' vault/storage/intents.py
  sed -i 's/hashlib\.sha256(store\.read_bytes(path))\.hexdigest()/content_hash(store.read_bytes(path))/' vault/storage/intents.py
  sed -i 's/content_hash(text\.encode("utf-8"))/content_hash(text)/' vault/storage/guard.py
  sed -i 's/"\.notes\.edits", "content_hash"/".notes.hashing", "content_hash"/' vault/__init__.py
  tidy; commit "refactor (scripted): one content hash (notes/hashing.py) for sync, edits, guard, intents"
}

renames() {  # names that explain themselves
  $E rename hot archived_at vault/core.py
  $E rename Part Beat vault/conversation/episodes.py vault/conversation/episode_notes.py
  sed -i 's/"""One labelled part of an episode: which turn (tick), who said it, what, which label."""/"""One beat of an episode (its goal, a step, its outcome or its lesson): which turn\n    (tick), who said it, what, which label."""/' vault/conversation/episodes.py
  git mv vault/conversation/nexts.py vault/conversation/following.py
  $E reimport vault.conversation.nexts vault.conversation.following Next next_in_vault
  { grep -rl 'nexts\.py' vault tests README.md || true; } | xargs -r sed -i 's#conversation/nexts\.py#conversation/following.py#g; s#\bnexts\.py#following.py#g'
  tidy; commit "refactor (scripted): hot -> archived_at (core.py), Part -> Beat (episodes.py), nexts.py -> following.py"
}

split_index() {  # storage/index.py under 400 lines: how rows map to SQL columns is its own module
  cat > vault/storage/row_codec.py <<'PY'
"""How a note row and its links are written to the index's columns and read back (the index,
storage/index.py, runs the SQL). Strings that repeat across notes (frontmatter keys and short
values, link targets and kinds) are interned as they are read."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from ..notes.rows import LinkRow, NoteRow
PY
  $E move vault/storage/index.py vault/storage/row_codec.py _NOTE_FIELDS _NOTE_COLS _STAT_COLS _SHORT _shared _frontmatter _link_row _note_row _note_values
  for f in vault/storage/index.py vault/storage/row_codec.py; do
    $E rename _NOTE_FIELDS NOTE_FIELDS $f; $E rename _NOTE_COLS NOTE_COLS $f; $E rename _STAT_COLS STAT_COLS $f
    $E rename _link_row decode_link $f; $E rename _note_row decode_note $f; $E rename _note_values encode_note $f
  done
  sed -i 's/^# The columns `_note_values` fills/# The columns `encode_note` fills/' vault/storage/row_codec.py
  sed -i 's/^def decode_link(target: str, heading: str | None, block: str | None, alias: str | None,$/def decode_link(target: str, heading: str | None, block: str | None, alias: str | None,/; s/^              embed: int, kind: str) -> LinkRow:$/                embed: int, kind: str) -> LinkRow:/' vault/storage/row_codec.py
  sed -i 's/^from \.stat_cache import StatCache$/from .row_codec import NOTE_COLS, NOTE_FIELDS, STAT_COLS, decode_link, decode_note, encode_note\n&/' vault/storage/index.py
  tidy; commit "refactor (scripted): storage/row_codec.py takes the row <-> column mapping out of storage/index.py"
}

split_core() {  # vault/core.py under 400 lines: Vault = VaultParts (parts.py) + VaultWrites (writes.py)
  cat > vault/parts.py <<'PY'
"""An open vault's parts and the helpers every operation of the facade shares (vault/core.py:
`Vault`, whose write operations are vault/writes.py's `VaultWrites`, built on this class).

Holds the folder (`store`), the index, the search engine and the usage recorder; resolves
names to stable note ids against the live snapshot; records usage facts so that a full disk
loses the fact, never the call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Final

import numpy as np
import numpy.typing as npt

from .landing import tolerate_full
from .learning.usage import UsageRecorder
from .notes.links import Resolver
from .notes.records import LinkInfo, NoteRecord, link_infos, record_of
from .notes.rows import NoteRow
from .retrieval.pipeline import SearchEngine
from .errors import NoteNotFound
from .storage.corpus import Corpus
from .storage.index import Index
from .storage.live import LiveIndex
from .storage.snapshot import Snapshot
from .storage.store import Store
from .storage.watch import Watcher


class VaultParts:
    """One open vault's folder, index, search engine and usage recorder."""
PY
  cat > vault/writes.py <<'PY'
"""The write operations of the Vault facade: write, edit, delete, move, and the batches and
journals that group writes (vault/core.py's `Vault` inherits them).

Every write goes through the store's atomic write under the vault's write lock, is indexed
before the call returns, and is logged to the usage recorder; a multi-file operation is
written to the intent journal first (storage/intents.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from .errors import NoteExists, NoteNotFound, QuotaExceeded, VaultError
from .landing import landed, tolerate_full
from .notes import edits
from .notes.hashing import content_hash
from .notes.links import moved, relink_plan
from .notes.records import MoveResult, NoteRecord
from .parts import VaultParts
from .storage.guard import check_read, check_write
from .storage.intents import Journal, MoveIntent, Rewrite, WritesIntent, apply_move
from .storage.store import MAX_NOTE_BYTES, TRASH_DIR


class VaultWrites(VaultParts):
    """Writes of one open vault (see the module docstring)."""
PY
  $E methods vault/core.py Vault vault/parts.py __init__ _forget _learn corpus _snapshot resolver path_of _new_path _resolve _row _record _link_infos
  $E methods vault/core.py Vault vault/writes.py batch journalled write _write_target edit delete move _move_intent
  sed -i '/^    # -- writing -*$/,+1d' vault/core.py
  sed -i 's/^class Vault:$/class Vault(VaultWrites):/; s/^from \.storage\.watch import Watcher$/&\nfrom .writes import VaultWrites/' vault/core.py
  tidy; commit "refactor (scripted): vault/core.py split: VaultParts (parts.py) and VaultWrites (writes.py) under the Vault facade"
}

all() {  # every step, in the order they were made
  text_to_notes; rows_to_notes; cache_to_storage; one_content_hash; renames; split_index; split_core
}

"$@"
