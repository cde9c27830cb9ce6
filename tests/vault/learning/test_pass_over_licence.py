"""A note passed over for another question holds the lifts that are not wholly about this one
(learning v25, retrieval/learned_stages.py, NOTES-LRN24.md): sessions that asked how to set a
custom domain for a Publish site read "Publish" and passed over "Security" below it, so
"Security" carries a negative learned score on the logged phrase "publish site". Asked how to
add a password to the site, "Security" ranks first without learning; v24 let any lift pass a
note with a negative score, and "Publish", lifted by its use for the domain question (a gate
partly about this one), passed it (the help vault's noisy agent at the second asking). A
pass-over wholly about the question still lets a lift pass."""

from __future__ import annotations

from pathlib import Path

from vault import LEDGER_FILE, Ledger, Vault

from .test_ledger_facade import Clock
from .used_sessions import held_and_replayed

DOMAIN = "How do I set a custom domain for my Publish site?"
PASSWORD = "How do I add a password to my Publish site?"


def vault_with(tmp_path: Path, clock: Clock) -> tuple[Vault, Ledger]:
    (tmp_path / ".rmh").mkdir()
    ledger = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    v = Vault.open(tmp_path, usage=ledger)
    v.write("Publish.md", "Obsidian Publish: a custom domain for your site, and a password.\n")
    v.write("Security.md", "Security and privacy: add a password to a Publish site; the "
            "password lets only readers you choose see it.\n")
    for name in ("Folders", "Tags", "Search"):
        v.write(f"{name}.md", f"{name} organise each note in a vault.\n")
    return v, ledger


def sessions(v: Vault, ledger: Ledger, clock: Clock, question: str, shown: list[str],
             read: str, tag: str) -> None:
    """Three sessions shown `shown` for `question` that read only `read`."""
    for s in range(3):
        ledger.start_session(f"{tag}{s}", clock.t)
        v.shown(question, shown, session=f"{tag}{s}")
        v.read(read, session=f"{tag}{s}")
        clock.t += 60.0
        ledger.end_session(f"{tag}{s}", clock.t)


def learned(v: Vault, ledger: Ledger) -> tuple[list[float], list[bool]]:
    got = ledger.learned([v.resolve("Publish"), v.resolve("Security")], query=PASSWORD,
                         held=v._held_in(v.corpus(), PASSWORD))
    assert got.whole is not None
    return [float(x) for x in got.prior], [bool(x) for x in got.whole]


def test_a_note_passed_over_for_another_question_holds_a_partial_lift(tmp_path: Path) -> None:
    clock = Clock()
    v, ledger = vault_with(tmp_path, clock)
    with v:
        assert [h.title for h in v.search(PASSWORD, learn=False).hits][:2] == [
            "Security", "Publish"]
        sessions(v, ledger, clock, DOMAIN, ["Publish", "Security"], "Publish", "d")
        prior, whole = learned(v, ledger)
        assert prior[0] > 0 and prior[1] < 0  # lifted partly, passed over partly
        assert whole == [False, False]
        hits = v.search(PASSWORD, learn=False)
        assert [h.title for h in hits.hits][:2] == ["Security", "Publish"]
        assert "1 held below notes ranked above them without learning" in hits.stages["prior"]
        held_and_replayed(v, hits, "Publish", PASSWORD, clock)
    ledger.close()


def test_a_pass_over_wholly_about_the_question_lets_the_lift_pass(tmp_path: Path) -> None:
    clock = Clock()
    v, ledger = vault_with(tmp_path, clock)
    with v:
        sessions(v, ledger, clock, DOMAIN, ["Publish", "Security"], "Publish", "d")
        sessions(v, ledger, clock, PASSWORD, ["Folders", "Security"], "Folders", "p")
        prior, whole = learned(v, ledger)
        assert prior[0] > 0 and prior[1] < 0 and whole == [False, True]
        hits = v.search(PASSWORD, learn=False)
        assert [h.title for h in hits.hits][:2] == ["Publish", "Security"]
        replayed = v.search(PASSWORD, as_of=clock.t).hits
        assert [(h.title, h.score) for h in hits.hits] == [(h.title, h.score) for h in replayed]
    ledger.close()
