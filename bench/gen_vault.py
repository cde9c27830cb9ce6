"""Generate a synthetic linked vault of N notes (deterministic for a given N and seed).

Notes are small topic pages with frontmatter, a few paragraphs drawn from a fixed vocabulary,
wiki-links to other notes (preferential attachment, so the graph has hubs) and tags.

    python -m bench.gen_vault OUT_DIR --notes 10000
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

TOPICS = (
    "auth billing search cache queue storage network deploy metrics alerts invoices payments "
    "tokens sessions schema migration backup replica cluster kernel compiler parser scheduler "
    "planner budget roadmap hiring review incident outage latency throughput memory graph vector "
    "index ranking fusion embedding summary meeting decision contract vendor travel garden piano "
    "pottery vase bike marathon recipe coffee espresso sourdough camera lens telescope comet"
).split()
VERBS = "owns reviews fixes ships breaks monitors designs tests documents migrates".split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def note_text(i: int, n: int, rng: random.Random, titles: list[str]) -> str:
    words = [rng.choice(TOPICS) for _ in range(3)]
    links: list[int] = []
    for _ in range(rng.randint(1, 5)):
        # Preferential attachment: low ids are hubs.
        hub = rng.random() < 0.5
        j = int(min(n - 1, rng.paretovariate(1.2) * 3)) if hub else rng.randrange(n)
        if j != i:
            links.append(j)
    paragraphs = []
    for _ in range(rng.randint(2, 4)):
        sent = " ".join(
            f"The {rng.choice(TOPICS)} team {rng.choice(VERBS)} the {rng.choice(TOPICS)} "
            f"{rng.choice(TOPICS)} on {rng.choice(DAYS)}."
            for _ in range(rng.randint(2, 5))
        )
        paragraphs.append(sent)
    body = "\n\n".join(paragraphs)
    link_line = " ".join(f"[[{titles[j]}]]" for j in sorted(set(links)))
    return (
        f"---\ntags: [{words[0]}, {words[1]}]\nstatus: active\n---\n"
        f"# {titles[i]}\n\n{body}\n\nSee also {link_line} #{words[2]}\n"
    )


def generate(out: Path, n: int, seed: int = 7) -> None:
    """Write `n` notes under `out` (100 notes per folder)."""
    rng = random.Random(seed)
    titles = [f"{TOPICS[i % len(TOPICS)].title()} note {i}" for i in range(n)]
    for i in range(n):
        folder = out / f"area-{i // 100:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{titles[i]}.md").write_text(note_text(i, n, rng, titles), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    generate(args.out, args.notes, args.seed)


if __name__ == "__main__":
    main()
