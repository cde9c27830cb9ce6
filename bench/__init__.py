"""Retrieval benchmarks (LoCoMo, LongMemEval-S, BEIR collections, linked knowledge notes)
through rmh's own SearchEngine; ask against search at an equal budget (ask_runner)."""

from .ask_runner import Asker
from .ask_runner import render as render_ask
from .ask_runner import run as run_ask
from .ask_runner import summarize as summarize_ask
from .beir import BeirError, load_beir, render_beir, run_beir, summarize_beir
from .cache import SqliteEmbeddingCache
from .datasets import (
    DatasetError,
    Haystack,
    Question,
    load_locomo,
    load_longmemeval,
    locomo_excluded,
)
from .knowledge import generate as generate_knowledge
from .runner import (
    LOCOMO_CATEGORIES,
    QueryMemoEncoder,
    Rows,
    default_cache_path,
    methods_of,
    params_json,
    quotas,
    render,
    run,
    score_haystack,
    summarize,
    timing_of,
)

__all__ = [
    "LOCOMO_CATEGORIES",
    "Asker",
    "BeirError",
    "DatasetError",
    "Haystack",
    "QueryMemoEncoder",
    "Question",
    "Rows",
    "SqliteEmbeddingCache",
    "default_cache_path",
    "generate_knowledge",
    "load_beir",
    "load_locomo",
    "load_longmemeval",
    "locomo_excluded",
    "methods_of",
    "params_json",
    "quotas",
    "render",
    "render_ask",
    "render_beir",
    "run",
    "run_ask",
    "run_beir",
    "score_haystack",
    "summarize",
    "summarize_ask",
    "summarize_beir",
    "timing_of",
]
