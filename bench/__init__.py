"""Retrieval benchmarks (LoCoMo, LongMemEval-S, linked knowledge notes) through rmh's own
SearchEngine; ask against search at an equal budget (ask_runner)."""

from .ask_runner import Asker
from .ask_runner import render as render_ask
from .ask_runner import run as run_ask
from .ask_runner import summarize as summarize_ask
from .cache import SqliteEmbeddingCache
from .datasets import Haystack, Question, load_locomo, load_longmemeval, locomo_excluded
from .knowledge import generate as generate_knowledge
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
    "Asker",
    "Haystack",
    "QueryMemoEncoder",
    "Question",
    "SqliteEmbeddingCache",
    "default_cache_path",
    "generate_knowledge",
    "load_locomo",
    "load_longmemeval",
    "locomo_excluded",
    "params_json",
    "render",
    "render_ask",
    "run",
    "run_ask",
    "summarize",
    "summarize_ask",
]
