"""The event log keeps a search's first QUERY_CHARS characters (the hooks' journal a prompt's
first PROMPT_CHARS: tests/harness/test_hooks_index_cut.py): a long query cut in the middle of
an erased note's line holds no whole needle, so the erasure kept it, and the log kept the
line's first half after `forget`. Now a cut query (or prompt) ending in the beginning of an
erased string is blanked (dropped from the journal) like one naming it; a cut one that ends
elsewhere, and an uncut one, stay."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from vault import LEDGER_FILE, Ledger, Vault, ending_in_part
from vault.learning.redact import QUERY_CHARS

LINE = "The launch code of the Marrow vault is under the loose floorboard"
FRAGMENT = "the launch code of the marrow"


def _cut_query(into: str) -> str:
    """A query whose first QUERY_CHARS characters end in the first half of `into`."""
    head = "please find notes about gardening tomatoes and basil " * 20
    half = into[:len(FRAGMENT)]
    return head[:QUERY_CHARS - len(half) - 1] + " " + half + into[len(FRAGMENT):]


def _queries(root: Path) -> list[str]:
    with sqlite3.connect(root / ".rmh" / LEDGER_FILE) as conn:
        rows = conn.execute("SELECT data FROM events WHERE kind = 'search'").fetchall()
    return [json.loads(r[0])["query"] for r in rows]


def test_a_query_cut_into_an_erased_line_keeps_no_part_of_it(tmp_path: Path) -> None:
    root = tmp_path / "v"
    usage = Ledger.open(Vault.state_dir(root, create=True) / LEDGER_FILE, clock=time.time)
    v = Vault.init(root, usage=usage)
    try:
        v.write("diary.md", f"Diary.\n\n{LINE}\n")
        v.write("keep.md", "Tomatoes want sun; basil wants water.\n")
        cut = _cut_query(LINE)
        v.search(cut, session="s1")
        v.search("tomatoes and basil " * 40, session="s1")  # cut elsewhere: stays
        v.search("who keeps the launch", session="s1")  # not cut: stays
        stored = _queries(root)
        assert stored[0].casefold().endswith(FRAGMENT) and len(stored[0]) == QUERY_CHARS
        v.forget(v.forget_plan(["diary"]))
        after = _queries(root)
        assert after[0] == "", after[0][-60:]
        assert after[1] == ("tomatoes and basil " * 40)[:QUERY_CHARS]
        assert after[2] == "who keeps the launch"
        assert not any(FRAGMENT in q.casefold() for q in after)
    finally:
        v.close()


def test_ending_in_part_starts_at_a_word() -> None:
    cut = ending_in_part([LINE, "Quillon"])
    assert cut("... who is Quil") and cut("... THE   launch\ncode of")
    assert cut("... a note about the") and cut("the launch code of the Marrow vault")
    assert not cut("... the launch code of the Marrow vault is under the loose floorboard!")
    assert not cut("... aquil") and not cut("... the launch pad") and not cut("")
    assert not ending_in_part([])("the launch")
