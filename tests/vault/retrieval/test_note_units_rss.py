"""A long-lived host (the server, the REPL host: one open vault, its index updated in place)
that gets a note of many distinct words holds memory in proportion to the note's bytes: the
conjunctive channel takes units from the note's first MAX_NOTE_TERMS content terms only
(signals/unit_codes.py). Measured as the RSS growth of a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ...harness.test_server_e2e import CHILD_ENV, REPO

pytestmark = pytest.mark.slow

# RSS growth allowed for a note of NOTE_WORDS distinct words (~1.3 MB): BM25 keeps each word
# (the note must stay findable by any of them), ~460 bytes a distinct word measured here
# (88 MiB), so BYTES_PER_WORD and the margin leave ~1.6x; with every pair of near words a
# unit of the conjunctive channel, it grew 288 MiB (~1.5 kB a word)
NOTE_WORDS = 200_000
BYTES_PER_WORD = 600
RSS_MARGIN_MIB = 32

CHILD = r'''
import json, sys
from pathlib import Path
from harness.compose import open_vault
from harness.config import load

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) * 1024

vault, n = Path(sys.argv[1]), int(sys.argv[2])
with open_vault(load(vault=vault), dense=False, learning=False) as v:
    v.search("alpha", 5)
    before = rss()
    text = " ".join("u%d" % i for i in range(n))
    v.write("Doc", text)
    del text
    hits = v.search("u%d alpha" % (n - 1), 5).hits
    print(json.dumps({"growth": rss() - before, "top": hits[0].note if hits else None}))
'''


def test_a_note_of_many_distinct_words_costs_memory_in_proportion(tmp_path: Path) -> None:
    env = {k: os.environ[k] for k in CHILD_ENV if k in os.environ}
    env["PYTHONPATH"] = str(REPO)
    vault = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "harness", "demo", str(vault)], env=env, check=True,
                   capture_output=True)
    out = subprocess.run([sys.executable, "-c", CHILD, str(vault), str(NOTE_WORDS)],
                         env=env, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["top"] == "Doc.md"  # its last word still finds it
    assert got["growth"] < NOTE_WORDS * BYTES_PER_WORD + RSS_MARGIN_MIB * 2**20, got
