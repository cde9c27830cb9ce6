"""`rmh archive`, `rmh restore`, `rmh replay`, `rmh learning` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.commands.learn import _story
from harness.compose import open_ledger
from tests.forks import run_cli
from vault import Vault

ROOT = Path(__file__).resolve().parents[2]


def rmh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    return run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, timeout=120)


@pytest.mark.slow
def test_archive_restore_replay_and_audit(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Zebra.md").write_text("zebra crossing notes, see [[Other]]\n", encoding="utf-8")
    (root / "Other.md").write_text("nothing to see\n", encoding="utf-8")
    assert rmh(root, "init").returncode == 0
    r = rmh(root, "archive", "Zebra", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["archived"] is True
    assert (root / "Zebra.md").is_file()
    # (search exclusion of archived notes is tested through the facade in
    # tests/vault/test_ledger_facade.py; the CLI search sees it once compose wires the ledger)
    assert json.loads(rmh(root, "restore", "Zebra", "--json").stdout)["restored"] is True
    check = rmh(root, "replay", "--check", "--json")
    assert check.returncode == 0 and json.loads(check.stdout)["matched"] is True
    audit = json.loads(rmh(root, "learning", "--json").stdout)
    assert audit["missing_rows"] == 0 and audit["replay_matches"] is True
    assert audit["events"] == {"archive": 1, "restore": 1}
    assert rmh(root, "archive", "NoSuchNote").returncode == 1


@pytest.mark.slow
@pytest.mark.parametrize("seq", ["-5", "x"])
def test_replay_until_takes_an_event_number(tmp_path: Path, seq: str) -> None:
    root = tmp_path / "v"
    root.mkdir()
    assert rmh(root, "init", "--no-dense").returncode == 0
    r = rmh(root, "replay", "--until", seq, "--json")
    assert r.returncode == 2
    assert json.loads(r.stdout)["error"]["kind"] == "usage" and "--until" in r.stderr


def test_the_story_names_the_demotion_of_a_note_surely_passed_over() -> None:
    doc = {"note": "people/Melanie.md", "id": 7, "q": -0.227, "prior": -0.227,
           "prior_scale": 0.2, "passed": -0.176, "used": 0.0, "skipped": 20.0,
           "use_rate": 0.023, "use_mean": 0.25, "state": {"skip_terms": {"melanie kids": 3}},
           "rewards": [], "events": [], "events_total": 0}
    on = _story({**doc, "passed_factor": 0.824, "multiplier": (1 - 0.2 * 0.227) * 0.824})
    assert "prior x0.7866 on a query wholly about what it was skipped for" in on
    assert "x0.8240 of it on every query: passed over surely (-0.1760 x weights.passed)" in on
    off = _story({**doc, "passed_factor": 1.0, "multiplier": 1 - 0.2 * 0.227})
    assert "prior x0.9546" in off and "less on others, x1 on a query about other things" in off


@pytest.mark.slow
def test_learning_note_reads_the_passed_factor_from_weights_passed(tmp_path: Path) -> None:
    """`rmh learning NOTE` computes the factor from the vault's `[search] weights.passed`:
    a note passed over in twenty sessions is x max(0.5, 1 + W p), x1 without the weight."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "Melanie.md").write_text("Melanie, a speaker\n", encoding="utf-8")
    (root / "Turn.md").write_text("the kids went camping\n", encoding="utf-8")
    assert rmh(root, "init").returncode == 0
    with Vault.open(root) as v:
        hub, turn = v.resolve("Melanie"), v.resolve("Turn")
    ledger = open_ledger(root)
    try:
        for k in range(20):  # the hub first in every list, the turn cited by a new note
            ledger.start_session(f"s{k}", 1000.0 + 10 * k)
            ledger.on_search(f"s{k}", f"question {k}", [(hub, 0, 1.0), (turn, 1, 0.63)])
            ledger.on_write(f"s{k}", 100 + k, True, [turn])
            ledger.end_session(f"s{k}", 1001.0 + 10 * k)
    finally:
        ledger.close()
    off = json.loads(rmh(root, "learning", "Melanie", "--json", "--no-dense").stdout)
    assert off["passed"] < -0.1 and off["passed_factor"] == 1.0
    for w, want in ((2.0, 1.0 + 2.0 * off["passed"]), (4.0, 0.5)):  # 4: at the floor
        (root / "rmh.toml").write_text(f"[search]\nweights = {{ passed = {w} }}\n",
                                       encoding="utf-8")
        on = json.loads(rmh(root, "learning", "Melanie", "--json", "--no-dense").stdout)
        assert on["passed"] == off["passed"] and want < 1.0
        assert on["passed_factor"] == pytest.approx(want)
        assert on["multiplier"] == pytest.approx(off["multiplier"] * want)


def test_the_story_of_a_used_note_says_what_learning_v9_does_on_other_queries() -> None:
    """Issue 31 item 5: the story gives the effect the ranking applies. Learning v9: the words
    channel adds w x q g c (the topic gate g, the word share c), the topic-free factor
    1 + s q (1 - g) c is x1 on a query sharing none of the note's words (v8)."""
    doc = {"note": "Studio.md", "id": 3, "q": 0.333, "prior": 0.333, "prior_scale": 0.2,
           "passed": 0.0, "used": 2.0, "skipped": 0.0, "use_rate": 0.6, "use_mean": 0.25,
           "state": {"use_terms": {"jon danc": 2}, "use_words": {"jon": 2, "danc": 2}},
           "rewards": [], "events": [], "events_total": 0, "passed_factor": 1.0,
           "multiplier": 1 + 0.2 * 0.333}
    story = _story(doc)
    assert "x q x the topic gate x their share of its words" in story
    assert "x1 on a query sharing none of its words" in story
    assert "the same on a query about other things" not in story
    # v10: a one-word query has no phrase; its gate is whether these words (or the about
    # list, a one-word query logged) hold it
    assert "a query of one word: 1 when the words above or the about list hold it" in story


@pytest.mark.slow
def test_a_replay_past_the_retention_horizon_is_no_damaged_file(tmp_path: Path) -> None:
    """`rmh replay --until` an event folded into the base (retention) fails naming the
    horizon, and without the damaged-file hint ("move it aside": it would throw the learned
    state away for a request that only asked too far back; session 26 review)."""
    root = tmp_path / "v"
    root.mkdir()
    for i in range(4):
        (root / f"n{i}.md").write_text(f"hiking auth n{i}\n", encoding="utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    (root / "rmh.toml").write_text("[learning]\nsession_bytes = 0\nlog_bytes = 2000\n",
                                   encoding="utf-8")
    ledger = open_ledger(root)
    try:
        for i in range(40):
            ledger.on_search(None, f"hiking {i}", [(1, 0, 1.0), (2, 1, 0.6)])
    finally:
        ledger.close()
    r = rmh(root, "replay", "--until", "1", "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["error"]["kind"] == "bad_argument"
    assert "folded into the base" in r.stderr and "move it aside" not in r.stderr, r.stderr


def test_restore_of_a_deleted_note_says_where_its_trash_copy_is(tmp_path: Path) -> None:
    """README calls `rmh delete` reversible and lists `rmh restore NOTE`: a reader who deleted
    a note tries `restore` (which brings back archived notes). It said only "note not found";
    it now names the trash copies and how to bring one back (session 37, NOTES-NEWUSER8)."""
    root = tmp_path / "v"
    (root / "ops").mkdir(parents=True)
    (root / "ops" / "Runbook.md").write_text("page the owner\n", encoding="utf-8")
    (root / "Other.md").write_text("nothing to see\n", encoding="utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    for _ in range(2):  # two deletions of one path: the trash keeps `Runbook (1).md` too
        assert rmh(root, "delete", "ops/Runbook").returncode == 0
        (root / "ops" / "Runbook.md").write_text("page the owner\n", encoding="utf-8")
    assert rmh(root, "delete", "ops/Runbook").returncode == 0
    for name in ("ops/Runbook", "runbook"):  # a vault path, a bare caseless name
        r = rmh(root, "restore", name, "--json")
        assert r.returncode == 1
        err = json.loads(r.stdout)["error"]
        assert err["kind"] == "note_not_found"
        assert ("its trash copies are '.rmh/trash/ops/Runbook.md', '.rmh/trash/ops/Runbook "
                "(1).md', '.rmh/trash/ops/Runbook (2).md': move one back") in err["message"]
        assert "rmh restore` brings back an archived note" in r.stderr
    r = rmh(root, "restore", "Missing")  # nothing in the trash: the plain answer
    assert (r.returncode, r.stderr.strip()) == (1, "rmh: note not found: 'Missing'")


def test_restore_names_the_trash_copy_of_a_note_whose_name_ends_with_a_copy_tag(
        tmp_path: Path) -> None:
    """A note's own name may end " (1)" (a browser's second download, `Invoice (1).md`): its
    first trash copy is `Invoice (1).md`, which the hint read as copy 1 of `Invoice.md` and so
    never named for `rmh restore "Invoice (1)"` (REV37, session 37)."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "Invoice (1).md").write_text("a download\n", encoding="utf-8")
    (root / "Other.md").write_text("nothing to see\n", encoding="utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    for _ in range(2):
        assert rmh(root, "delete", "Invoice (1)").returncode == 0
        (root / "Invoice (1).md").write_text("a download\n", encoding="utf-8")
    assert rmh(root, "delete", "Invoice (1)").returncode == 0
    r = rmh(root, "restore", "Invoice (1)", "--json")
    assert r.returncode == 1
    assert ("its trash copies are '.rmh/trash/Invoice (1).md', '.rmh/trash/Invoice (1) (1)"
            ".md', '.rmh/trash/Invoice (1) (2).md': move one back"
            ) in json.loads(r.stdout)["error"]["message"]
