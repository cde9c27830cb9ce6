"""Retrieval benchmarks (LoCoMo, LongMemEval-S) run through rmh's own SearchEngine."""

from .cache import SqliteEmbeddingCache
from .datasets import Haystack, Question, load_locomo, load_longmemeval, locomo_excluded
from .runner import (
    LOCOMO_CATEGORIES,
    QueryMemoEncoder,
    default_cache_path,
    params_json,
    render,
    run,
    summarize,
)

__all__ = [
    "LOCOMO_CATEGORIES",
    "Haystack",
    "QueryMemoEncoder",
    "Question",
    "SqliteEmbeddingCache",
    "default_cache_path",
    "load_locomo",
    "load_longmemeval",
    "locomo_excluded",
    "params_json",
    "render",
    "run",
    "summarize",
]
