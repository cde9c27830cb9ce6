"""Another snowballstemmer release, in a new process: the stores that hold stems (the lexical
index, the learned state) name the stemmer they were built with (notes/text.py
`stemmer_fingerprint`), and tests build a store under one release and read it under another.
`run(body, root, mode, release, words)` runs `body` in a new Python whose `root`, `mode`,
`release` and `words` are set from the arguments; with release "older" snowballstemmer's
stemmer cuts each of `words` to six letters (2.2 and 3.x stem some words otherwise:
"university" -> "univers" / "universiti")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PREAMBLE = """
import json, sys
from datetime import date
from pathlib import Path
root, mode, release, words = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
if release == "older":
    import snowballstemmer
    real = snowballstemmer.stemmer

    class Older:
        def __init__(self, lang):
            self.inner = real(lang)

        def stemWord(self, w):
            return w[:6] if w in words else self.inner.stemWord(w)

    snowballstemmer.stemmer = Older
"""


def run(body: str, root: Path, mode: str, release: str, words: Sequence[str]) -> str:
    """The stdout of `body` run after PREAMBLE in a new process (asserting it exits 0)."""
    p = subprocess.run([sys.executable, "-c", PREAMBLE + body, str(root), mode, release,
                        *words], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    return p.stdout
