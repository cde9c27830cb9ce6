"""The per-note scores fused by the pipeline: bm25, dense, conjunctive, graph (PageRank),
and the learned warmth input."""
