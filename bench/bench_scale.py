"""Search end to end at scale (issue 17): 10^5 or 10^6 notes through the Vault facade.

    python -m bench.bench_scale --notes 1000000 [--queries 200] [--edits 5] [--renames 0]
                                [--removals 0] [--keep DIR]

Generates the turns vault (bench/gen_scale.py) unless kept, indexes it through `Vault.init`
and `Vault.sync` (auto_sync off: every sync is the one timed), builds every retrieval
structure, then measures through `Vault.search` (the facade: snapshot check, learned vectors,
every signal, fusion, stages, receipts, snippets; learning on, as in real use):

- query latency p50/p95 over `--queries` questions made from random notes (3-5 of a note's
  words, sometimes its speaker's name), and the recall@10 of that note (a sanity check of the
  synthetic set, not a quality claim);
- edit -> visible: `Vault.write` of an existing note with a new word, then the next search
  for that word; the time until the result holds the note, and whether it does;
- rename -> visible (`--renames`): `Vault.move` of an existing note to `renamed/WORD` (its
  links rewritten in the notes that link to it), then the next search for WORD; the time
  until the result holds the note at its new path; each note is moved back afterwards (not
  timed), so a kept vault keeps its layout;
- removal -> gone (`--removals`): `Vault.delete` of an existing note, then the next search
  for the first words of its text; the time until that search returns, and whether the note
  is absent from it. A removal is made in place since session 17 (storage/increment.py,
  retrieval/derived.py; before, this measured a rebuild of every structure, and a run with
  removals reported that rebuild's peak RSS). Each note is written back afterwards (a new
  id; not timed);
- no-op sync without the watcher, and the process's peak RSS (VmHWM).

The dense signal is REAL code over SYNTHETIC vectors: bench/synthetic_encoder.py stands in for
MiniLM (embedding 10^6 notes with MiniLM takes days on two cores; BENCHMARKS.md, encoding), so
the numbers measure the search path, not embedding quality. Lexical signals, links, PageRank,
fusion and the stages are the product's own, on the generated text.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.gen_scale import generate
from bench.report import latency_ms, status_kb
from bench.synthetic_encoder import SyntheticEncoder
from vault import SearchEngine, SearchParams, Vault


def _questions(v: Vault, count: int, seed: int) -> list[tuple[str, int]]:
    """(question, id of the note it was made from), from random notes with a body."""
    corpus = v.corpus()
    rng = np.random.default_rng(seed)
    out: list[tuple[str, int]] = []
    while len(out) < count:
        i = int(rng.integers(0, len(corpus)))
        words = [w.strip(".,") for w in corpus.bodies[i].split() if "[[" not in w]
        words = [w for w in words if len(w) > 3]
        if len(words) < 5:
            continue
        picked = [words[int(j)] for j in sorted(rng.choice(len(words), 4, replace=False))]
        speaker = corpus.frontmatter[i].get("speaker")
        if isinstance(speaker, str) and rng.random() < 0.5:
            picked.append(speaker)
        out.append((" ".join(picked), corpus.ids[i]))
    return out


@dataclass
class Ready:
    """A scale vault with every retrieval structure built: what each scale bench starts from."""

    vault: Vault
    engine: SearchEngine
    prepared: dict[str, Any]
    questions: list[tuple[str, int]]
    timing: dict[str, float]  # generate_s, full_index_s, prepare_s
    rss_ready_kb: int


@contextmanager
def ready_vault(n: int, keep: Path | None, queries: int, codes_on_disk: bool = True
                ) -> Iterator[Ready]:
    """Generate the turns vault unless kept (under `keep`/N), index it (auto_sync off), build
    every structure, make `queries` questions (seed 11) and warm up with one search. The
    dense IVF keeps its codes in VAULT/.rmh as `rmh serve` does, unless `codes_on_disk` is
    False (in memory)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = (keep if keep is not None else Path(tmp)) / str(n)
        t0 = time.perf_counter()
        if not (root / "turns").is_dir():
            generate(root, n)
        timing = {"generate_s": time.perf_counter() - t0}
        engine = SearchEngine(SearchParams(), encoder=SyntheticEncoder(), cache=None,
                              scratch=str(root / ".rmh") if codes_on_disk else None)
        with Vault.init(root, auto_sync=False, engine=engine) as v:
            t0 = time.perf_counter()
            v.sync()
            timing["full_index_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            prepared = v.engine.prepare(v.corpus())
            timing["prepare_s"] = time.perf_counter() - t0
            rss_ready = status_kb("VmRSS")
            qs = _questions(v, queries, seed=11)
            v.search("warm up")
            yield Ready(v, engine, prepared, qs, timing, rss_ready)


def _median_max(seconds: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(seconds), 3), "max": round(max(seconds), 3)}


def run(n: int, keep: Path | None, queries: int, edits: int, codes_on_disk: bool = True,
        renames: int = 0, removals: int = 0) -> dict[str, Any]:
    with ready_vault(n, keep, queries, codes_on_disk) as ready:
        v, engine, prepared, qs = ready.vault, ready.engine, ready.prepared, ready.questions
        lat, found = [], 0
        for q, note_id in qs:
            t0 = time.perf_counter()
            res = v.search(q)
            lat.append(time.perf_counter() - t0)
            found += any(h.id == note_id for h in res.hits)
        corpus = v.corpus()  # the notes to change, picked before any change; the corpus is
        n_notes = len(corpus)  # not held after, so a rebuild's peak is the product's own
        edit_paths = [corpus.paths[(j * 7919 + 13) % n_notes] for j in range(edits)]
        rename_paths = [corpus.paths[(j * 104729 + 71) % n_notes] for j in range(renames)]
        removal_paths = [corpus.paths[(j * 15485863 + 101) % n_notes] for j in range(removals)]
        del corpus
        visible, edit_s = 0, []
        for j, path in enumerate(edit_paths):
            word = f"zebrafish{j}quartz"
            text = v.store.read_text(path) + f"\nthe {word} note\n"
            t0 = time.perf_counter()
            v.write(path, text)
            res = v.search(word)
            edit_s.append(time.perf_counter() - t0)
            visible += any(h.note == path for h in res.hits)
        moved, rename_s = 0, []
        for j, path in enumerate(rename_paths):
            word = f"okapi{j}lantern"
            t0 = time.perf_counter()
            new = v.move(path, f"renamed/{word}").note
            res = v.search(word)
            rename_s.append(time.perf_counter() - t0)
            moved += any(h.note == new for h in res.hits)
            v.move(new, path)
        absent, removal_s = 0, []
        for path in removal_paths:
            text = v.store.read_text(path)
            query = " ".join(w for w in text.split() if w.isalpha())[:60]
            t0 = time.perf_counter()
            v.delete(path)
            res = v.search(query)
            removal_s.append(time.perf_counter() - t0)
            absent += all(h.note != path for h in res.hits)
            v.write(path, text)
        noop = []
        for _ in range(3):
            t0 = time.perf_counter()
            v.sync()
            noop.append(time.perf_counter() - t0)
        return {
            "notes": n, "chunks": prepared["chunks"], "dense": prepared["dense"],
            **{k: round(x, 1) for k, x in ready.timing.items()},
            "search": latency_ms(lat, 1),
            "recall_at_10_of_source_note": round(found / len(qs), 3),
            "edit_to_visible_s": _median_max(edit_s),
            "edits_visible": f"{visible}/{edits}",
            **({"rename_to_visible_s": _median_max(rename_s),
                "renames_visible": f"{moved}/{renames}"} if renames else {}),
            **({"removal_to_gone_s": _median_max(removal_s),
                "removals_gone": f"{absent}/{removals}"} if removals else {}),
            "noop_sync_p50_s": round(statistics.median(noop), 3),
            "derived_array_mb": {k: round(b / 2**20, 1)
                                 for k, b in prepared["array_bytes"].items()},
            "dense_codes_on_disk_mb": round(prepared["disk_bytes"]["dense"] / 2**20, 1),
            "rss_ready_mb": round(ready.rss_ready_kb / 1024), "peak_rss_mb":
                round(status_kb("VmHWM") / 1024),
            "rss_end_anon_file_mb": [round(status_kb("RssAnon") / 1024),
                                     round(status_kb("RssFile") / 1024)],
            "encoder": engine.encoder.fingerprint if engine.encoder else None,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, action="append")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--renames", type=int, default=0)
    parser.add_argument("--removals", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="folder to create/reuse vaults under")
    parser.add_argument("--codes-in-memory", action="store_true",
                        help="keep the dense IVF's codes in memory (default: in VAULT/.rmh)")
    args = parser.parse_args()
    for n in args.notes or [100_000]:
        print(json.dumps(run(n, args.keep, args.queries, args.edits,
                             not args.codes_in_memory, args.renames, args.removals)),
              flush=True)


if __name__ == "__main__":
    main()
