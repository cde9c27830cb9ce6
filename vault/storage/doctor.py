"""The health report of a vault: dangling note links, missing attachments, parse errors,
orphans, skipped files, counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .attachments import split_dangling
from .index import Index
from .snapshot import Snapshot
from .sync import SyncReport


def doctor_report(report: SyncReport, snapshot: Snapshot, index: Index,
                  files: Sequence[str] = ()) -> dict[str, Any]:
    """A JSON-safe report of the folder as just synced (`report`) and its snapshot.

    `files` are the vault's non-note files (Store.attachments): a link to one of them is an
    attachment link, resolved as Obsidian does (storage.attachments); one that names no file
    is a missing attachment, reported apart from dangling note links. Orphans are notes with
    no resolved link in either direction; every list is sorted."""
    corpus = snapshot.corpus
    touched = {a for a, _ in corpus.edges} | {b for _, b in corpus.edges}
    orphans = [corpus.paths[i] for i in range(len(corpus)) if i not in touched]
    notes, missing, found = split_dangling(snapshot.dangling(), files)
    errors = sorted((r.path, r.frontmatter_error) for r in index.notes() if r.frontmatter_error)
    return {
        "counts": index.counts(),
        "generation": report.generation,
        "dangling_links": [{"note": n, "target": t} for n, t in notes],
        "missing_attachments": [{"note": n, "target": t} for n, t in missing],
        "attachment_links": found,
        "parse_errors": [{"note": n, "error": e} for n, e in errors],
        "orphans": orphans,
        "skipped": [{"path": p, "reason": r} for p, r in sorted(report.skipped.items())],
        "sync_errors": report.errors,
    }
