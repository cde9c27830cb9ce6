"""The learned state names the stemmer it was built with (formulas.py `stamp_of`): its derived
tables hold stems (use words, word frequencies), and snowballstemmer's releases stem some words
otherwise, so a ledger built before an upgrade kept stems the upgraded process's questions no
longer made (DET6 found it for the lexical store; session 32). Each process here is a new one;
"older" replaces snowballstemmer's English stemmer by one that cuts the generated words to six
letters (another release's stems). The upgraded vault must answer as one whose whole history
ran under the current stemmer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stemmer_release import run

WORDS = ["universities", "generously", "communism", "gardening", "photographs"]

RUN = """

class Clock:
    t = 2_000_000.0

    def __call__(self):
        return self.t


from vault import LEDGER_FILE, Ledger, Vault
clock = Clock()
(root / ".rmh").mkdir(exist_ok=True)
ledger = Ledger.open(root / ".rmh" / LEDGER_FILE, clock=clock)
with Vault.open(root, usage=ledger, watch=False) as v:
    if mode == "learn":
        for s, word in enumerate(words):
            ledger.start_session(f"s{s}", clock.t)
            v.search(f"notes about {word} here", session=f"s{s}", now=date(2024, 1, 1))
            v.read(f"used{s}", session=f"s{s}")
            clock.t += 60.0
            ledger.end_session(f"s{s}", clock.t)
    else:
        out = [[h.note, h.receipt["prior_factor"], h.receipt["signals"].get("learned")]
               for w in words for h in v.search(f"which of them on {w}?", 5, learn=False,
                                                 now=date(2024, 1, 1)).hits]
        print(json.dumps(out, sort_keys=True))
ledger.close()
"""


def _run(root: Path, mode: str, release: str) -> str:
    return run(RUN, root, mode, release, WORDS)


@pytest.mark.parametrize(("first", "then"), [("older", "current"), ("current", "older")])
def test_a_ledger_built_under_another_stemmer_is_rebuilt(tmp_path: Path, first: str,
                                                         then: str) -> None:
    roots = {name: tmp_path / name for name in ("upgraded", "fresh")}
    for root in roots.values():
        root.mkdir()
        for i, word in enumerate(WORDS):
            (root / f"used{i}.md").write_text(f"Kept for {word} and more.\n", encoding="utf-8")
            (root / f"other{i}.md").write_text(f"A page of {word} as well.\n", encoding="utf-8")
    _run(roots["upgraded"], "learn", first)
    _run(roots["fresh"], "learn", then)
    got, fresh = _run(roots["upgraded"], "ask", then), _run(roots["fresh"], "ask", then)
    assert got == fresh
