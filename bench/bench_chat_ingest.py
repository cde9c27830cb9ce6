"""`rmh ingest` of a generated WhatsApp export: first ingest and re-ingest, per code tree.

    python -m bench.bench_chat_ingest --messages 1000 10000 100000 [--per-day 50] [--tree DIR ...]

The export (`export`): `--per-day` messages a day (50; one session a day; 1 is session 29's
CHATTXT_big shape, a session a message), 7 speakers, 20 % of messages two lines, dates
`dd/mm/yy, HH:MM - Name: text`. For each size and each code tree (default: this
checkout; name main's with `--tree` for a comparison in the same run) a child process
(PYTHONPATH=TREE) reads it, ingests it into a fresh vault (rules, no NLP: the harness's
`[extract] entities = "rules"`) and ingests it again (0 notes written); it prints CPU seconds
(the child's user + system), wall seconds, notes written and a sha256 over every note's path
and bytes (equal digests: the trees wrote the same vault)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PER_DAY = 50

_CHILD = r"""
import hashlib, json, os, sys, time
from pathlib import Path
from vault import Vault, ingest_conversations, load_transcript

def cpu():
    t = os.times()
    return t.user + t.system

text, root = Path(sys.argv[1]).read_text(encoding="utf-8"), Path(sys.argv[2])
out = {}
with Vault.init(root) as v:
    for step in ("first", "again"):
        c0, w0 = cpu(), time.perf_counter()
        got = ingest_conversations(v, load_transcript(text, "auto", "chat").conversations,
                                   use_nlp=False)
        out[step] = {"cpu_s": round(cpu() - c0, 2), "wall_s": round(time.perf_counter() - w0, 2),
                     "written": len(got.written), "unchanged": got.unchanged}
h = hashlib.sha256()
for p in sorted(q for q in root.rglob("*.md") if ".rmh" not in q.parts):
    h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
out["sha256"] = h.hexdigest()[:16]
print(json.dumps(out))
"""


def export(n: int, per_day: int = PER_DAY) -> str:
    """`n` WhatsApp (Android, day first) messages, `per_day` a day from 1 January 2021."""
    rows = []
    for i in range(n):
        day, k = divmod(i, per_day)
        y, rest = divmod(day, 336)
        m, d = divmod(rest, 28)
        minute = 8 * 60 + k * 13 % 720
        rows.append(f"{d + 1:02d}/{m + 1:02d}/{21 + y:02d}, {minute // 60:02d}:{minute % 60:02d}"
                    f" - Name {i % 7}: words {i} about topic {i % 31}: more"
                    + ("\ncontinued: line" if i % 5 == 0 else ""))
    return "\n".join(rows) + "\n"


def run(tree: Path, text_file: Path, vault: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(text_file), str(vault)],
                          env=env, capture_output=True, text=True, check=True, cwd=tree)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--messages", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--per-day", type=int, default=PER_DAY)
    ap.add_argument("--tree", type=Path, nargs="+", default=[Path(".")])
    args = ap.parse_args()
    print("| messages | tree | first: CPU s | first: wall s | notes written | "
          "again: CPU s | again: wall s | again written | vault sha256 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in args.messages:
        with tempfile.TemporaryDirectory() as tmp:
            text_file = Path(tmp) / "chat.txt"
            text_file.write_text(export(n, args.per_day), encoding="utf-8")
            for i, tree in enumerate(args.tree):
                r = run(tree.resolve(), text_file, Path(tmp) / f"vault{i}")
                f, a = r["first"], r["again"]
                assert isinstance(f, dict) and isinstance(a, dict)
                print(f"| {n:,} | {tree.name or tree.resolve().name} | {f['cpu_s']} | "
                      f"{f['wall_s']} | {f['written']:,} | {a['cpu_s']} | {a['wall_s']} | "
                      f"{a['written']} | {r['sha256']} |", flush=True)


if __name__ == "__main__":
    main()
