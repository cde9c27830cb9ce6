"""Hybrid retrieval: signals, fusion, the stages after fusion, rerank, encoders, chunking,
hits and receipts; `pipeline.SearchEngine` runs them in order."""
