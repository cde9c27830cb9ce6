"""Issue 13 item 5 through the facade: `as_of` replays the log up to a time, `learn=False`
records nothing, and the live learned vectors equal those of the replayed state."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from vault import LEDGER_FILE, Ledger, Vault
from vault.learning.ledger import learned_of

from .test_ledger_facade import Clock


def build(root: Path, clock: Clock) -> None:
    (root / ".rmh").mkdir(parents=True)
    ledger = Ledger.open(root / ".rmh" / LEDGER_FILE, clock=clock)
    with Vault.open(root, usage=ledger) as v:
        v.write("Billing.md", "Billing charges customers monthly. See [[Auth]].\n")
        v.write("Auth.md", "Auth issues tokens for billing customers.\n")
        v.write("Cats.md", "Cats sleep all day; customers like cats.\n")
        for s in range(3):
            ledger.start_session(f"s{s}", clock.t)
            v.search("billing customers", session=f"s{s}")
            v.read("Auth", session=f"s{s}")
            clock.t += 3600.0
            ledger.end_session(f"s{s}", clock.t)


def search_bytes(root: Path, clock: Clock, as_of: float | None, learn: bool) -> str:
    ledger = Ledger.open(root / ".rmh" / LEDGER_FILE, clock=clock)
    with Vault.open(root, usage=ledger) as v:
        result = v.search("customers", as_of=as_of, learn=learn)
        return json.dumps(result.to_json(receipt=True), sort_keys=True)  # receipts compared too


def test_as_of_is_byte_identical_across_copies_and_clocks(tmp_path: Path) -> None:
    clock = Clock()
    build(tmp_path / "a", clock)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    t = clock.t
    one = search_bytes(tmp_path / "a", clock, t, True)
    clock.t += 600.0  # ten minutes later, on the copy
    two = search_bytes(tmp_path / "b", clock, t, False)
    assert one == two
    live_later = search_bytes(tmp_path / "b", clock, None, False)
    assert live_later != one  # the live clock moved on: warmth decayed (that is the point)
    earlier = json.loads(search_bytes(tmp_path / "a", clock, 0.0, False))
    assert earlier["basis"]["learned_seq"] == 0  # before any event: nothing learned
    assert earlier["stages"]["prior"] == "skipped: zero"


def test_no_learn_and_as_of_record_nothing_and_live_equals_replay(tmp_path: Path) -> None:
    clock = Clock()
    build(tmp_path / "v", clock)
    ledger = Ledger.open(tmp_path / "v" / ".rmh" / LEDGER_FILE, clock=clock)
    with Vault.open(tmp_path / "v", usage=ledger) as v:
        before = ledger.event_counts()
        v.search("customers", learn=False)
        v.search("customers", as_of=clock.t)
        assert ledger.event_counts() == before
        ids = v.corpus().ids
        live = ledger.learned(ids)
        again = learned_of(ledger.replay(), ids, live.clock, ledger.params)
        assert live.seq == again.seq == ledger.state.last_seq
        assert np.array_equal(live.warmth, again.warmth)
        assert np.array_equal(live.prior, again.prior)
        assert live.cooccurrence.triples() == again.cooccurrence.triples()
        for query in ("billing customers", "which tokens does auth issue"):  # on / off topic
            live_q = ledger.learned(ids, query=query)
            again_q = learned_of(ledger.replay(), ids, live_q.clock, ledger.params, query)
            assert np.array_equal(live_q.prior, again_q.prior)
            assert live_q.free is not None and again_q.free is not None
            assert np.array_equal(live_q.free, again_q.free)
        auth = ids.index(v.resolve("Auth"))
        on, off = (ledger.learned(ids, query=q) for q in ("billing customers", "auth tokens"))
        assert on.prior[auth] > 0 and off.prior[auth] == 0.0  # v5: the gate splits q...
        assert off.free is not None and off.free[auth] == 0.0  # v8: no word of its use
        q = ledger.state.notes[v.resolve("Auth")].q
        near = ledger.learned(ids, query="auth tokens for customers")
        assert near.prior[auth] == 0.0  # no phrase of its use either, but a word: the part
        assert near.free is not None and 0.0 < near.free[auth] < q  # the gate left out acts,
        # by the share of the query's words its use held
        v.search("customers")
        assert sum(ledger.event_counts().values()) == sum(before.values()) + 1
