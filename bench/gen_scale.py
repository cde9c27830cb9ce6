"""Generate a large linked vault fast: conversation turns plus entity notes (issue 17).

Deterministic for a given (N, seed). The "turns" profile models an agent that keeps every
conversation turn as a note, with a small set of entity notes (people, topics) as hubs:

- 2 % entity notes `entities/eNNN/<First Last>.md` (people) or `<Topic> <word>.md` (topics):
  frontmatter `kind` and one alias, 20-40 words, links to 1-3 other entities;
- 98 % turns `turns/dNNNNN/tNNNNNNN.md`: frontmatter `speaker`, `session`, `date`; 20-60
  words; links `[[speaker]]` (a hub), the turn it replies to (the previous turn of the same
  session), and 0-2 topic entities (Zipf-like: low entity numbers are bigger hubs);
- at most 1,000 files per folder; sessions are runs of 5-40 consecutive turns.

Profile at 10^6 notes (printed by `--stats`): 385 bytes and 2.94 links per note on average;
1,000 folders of 1,000 turns plus 20 entity folders.

    python -m bench.gen_scale OUT_DIR --notes 1000000 [--seed 7] [--stats]

Words come from numpy's PCG64 in bulk and files are written with os.open/os.write: 10^6 notes
took 169 s on the shared 2-core machine under load (10^5: 4.4 s).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from bench.gen_vault import TOPICS, VERBS

PER_FOLDER = 1000
ENTITY_SHARE = 0.02
FIRST = ("Ada Alan Barbara Claude Dana Edsger Frances Grace Hedy Ivan Joan Ken Linus Margaret "
         "Niklaus Olga Peter Radia Sophie Tim Ursula Vint Whitfield Xiao Yukihiro Zuse").split()
LAST = ("Lovelace Turing Liskov Shannon Scott Dijkstra Allen Hopper Lamarr Sutherland Clarke "
        "Thompson Torvalds Hamilton Wirth Taussky Naur Perlman Wilson Berners Franklin Cerf "
        "Diffie Gao Matsumoto Konrad Knuth Kay Ritchie Backus").split()
FILLER = ("the a we it is was to of and in on for with that this then so but not yes maybe "
          "today tomorrow later again about around after before because").split()
WORDS = tuple(TOPICS + VERBS + FILLER)


def entity_titles(n_entities: int) -> list[str]:
    """Unique entity names: people first ("First Last", then "First Last N"), then topics."""
    out: list[str] = []
    people = n_entities // 2
    for i in range(people):
        base = f"{FIRST[i % len(FIRST)]} {LAST[(i // len(FIRST)) % len(LAST)]}"
        rounds = i // (len(FIRST) * len(LAST))
        out.append(base if rounds == 0 else f"{base} {rounds + 1}")
    for i in range(n_entities - people):
        out.append(f"{TOPICS[i % len(TOPICS)].title()} {WORDS[(i // len(TOPICS)) % len(WORDS)]}"
                   + ("" if i < len(TOPICS) * len(WORDS) else f" {i}"))
    return out


def _zipf(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """Indices in [0, n) with a heavy head (hubs): floor(n * u^3)."""
    return np.minimum((rng.random(size) ** 3 * n).astype(np.int64), n - 1)


def generate(out: Path, n: int, seed: int = 7) -> dict[str, float]:
    """Write `n` notes under `out`; returns the profile (notes, bytes, links per note)."""
    rng = np.random.default_rng(seed)
    n_ent = max(2, int(n * ENTITY_SHARE))
    n_turns = n - n_ent
    ents = entity_titles(n_ent)
    people = n_ent // 2
    total_bytes = 0
    total_links = 0
    made: set[str] = set()

    def put(rel: str, text: str) -> None:
        nonlocal total_bytes
        folder = os.path.join(out, os.path.dirname(rel))
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        data = text.encode("utf-8")
        fd = os.open(os.path.join(out, rel), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        total_bytes += len(data)

    # Entities.
    lens = rng.integers(20, 41, n_ent)
    words = rng.integers(0, len(WORDS), int(lens.sum()))
    n_links = rng.integers(1, 4, n_ent)
    targets = _zipf(rng, int(n_links.sum()), n_ent)
    w = t = 0
    for i in range(n_ent):
        body = " ".join(WORDS[k] for k in words[w : w + lens[i]])
        w += int(lens[i])
        linked = sorted({int(j) for j in targets[t : t + n_links[i]]} - {i})
        t += int(n_links[i])
        total_links += len(linked)
        kind = "person" if i < people else "topic"
        alias = ents[i].split()[0].lower() + f"-{i}"
        text = (f"---\nkind: {kind}\naliases: [{alias}]\n---\n# {ents[i]}\n\n{body}.\n\n"
                + " ".join(f"[[{ents[j]}]]" for j in linked) + "\n")
        put(f"entities/e{i // PER_FOLDER:03d}/{ents[i]}.md", text)

    # Turns: sessions of 5-40 turns, two speakers per session.
    lens = rng.integers(20, 61, n_turns)
    words = rng.integers(0, len(WORDS), int(lens.sum()))
    session_len = rng.integers(5, 41, n_turns // 5 + 1)
    speakers = _zipf(rng, 2 * len(session_len), max(1, people))
    n_topics = rng.integers(0, 3, n_turns)
    topics = people + _zipf(rng, int(n_topics.sum()), max(1, n_ent - people))
    w = t = 0
    session, left, start = -1, 0, 0
    for i in range(n_turns):
        if left == 0:
            session += 1
            left = int(session_len[session])
            start = i
        left -= 1
        speaker = ents[int(speakers[2 * session + (i - start) % 2])]
        body = " ".join(WORDS[k] for k in words[w : w + lens[i]])
        w += int(lens[i])
        links = [speaker]
        if i > start:
            links.append(f"t{i - 1:07d}")
        links += sorted({ents[int(j)] for j in topics[t : t + n_topics[i]]})
        t += int(n_topics[i])
        total_links += len(links)
        day = session % 3650
        text = (f"---\nspeaker: {speaker}\nsession: s{session:06d}\n"
                f"date: {2020 + day // 365}-{1 + day % 365 // 31:02d}-{1 + day % 31:02d}\n---\n"
                f"{body}.\n\n" + " ".join(f"[[{x}]]" for x in links) + "\n")
        put(f"turns/d{i // PER_FOLDER:05d}/t{i:07d}.md", text)
    return {"notes": n, "avg_bytes": total_bytes / n, "links_per_note": total_links / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stats", action="store_true", help="print the profile and the time")
    args = parser.parse_args()
    t0 = time.perf_counter()
    profile = generate(args.out, args.notes, args.seed)
    if args.stats:
        print({**profile, "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
