"""The values a search returns: hits with receipts, and the result with its stage report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Hit:
    """One ranked note.

    `note` is the vault-relative path, `id` the stable note id. `receipt` explains the score:
    per-signal raw score and rank, fused score, rerank and Q contributions (JSON-safe).
    """

    id: int
    note: str
    title: str
    score: float
    receipt: dict[str, Any] = field(default_factory=dict)

    def to_json(self, *, receipt: bool = True) -> dict[str, Any]:
        """JSON-safe form used by the CLI and the JSON-RPC methods."""
        out: dict[str, Any] = {
            "note": self.note,
            "title": self.title,
            "score": self.score,
            "id": self.id,
        }
        if receipt:
            out["receipt"] = self.receipt
        return out


@dataclass(frozen=True)
class SearchResult:
    """Hits best first, plus which stages ran or were skipped and why."""

    query: str
    hits: tuple[Hit, ...]
    stages: dict[str, str] = field(default_factory=dict)

    def to_json(self, *, receipt: bool = True) -> dict[str, Any]:
        return {
            "query": self.query,
            "hits": [h.to_json(receipt=receipt) for h in self.hits],
            "stages": dict(self.stages),
        }
