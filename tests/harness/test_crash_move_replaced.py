"""`rmh move` killed after each of its file operations; then, before the next process opens
the vault, one path of its plan no longer holds a note: the target's name taken by a folder,
or the moved note, its new name or a referrer replaced by a symlink leaving the vault (the
file's bytes kept beside it). The next open finishes the move or rolls it back, leaving
what is not a note as it is: nothing pending, nothing written through the symlink, every
note's text (before or after) still in the vault. On main the recovery failed at every open
(`note already exists`, `path refused ... symlink leaves the vault`): the intent pending for
good, the half-made move's links dangling (docs/measurements/session37/NOTES-STORE12.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.crash_move import NEW, OLD, make_template, reference, rmh
from tests.harness.test_crash_move import killed_moves

pytestmark = pytest.mark.slow
OUTSIDE = "Outside the vault, [[Target]].\n"


def _aside(path: Path) -> None:
    """Keep the file's bytes in the vault, hidden beside it, and free its name."""
    if path.is_file() and not path.is_symlink():
        path.with_name(f".{path.name}.aside").write_bytes(path.read_bytes())
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)


def _replacements(outside: Path) -> list[Callable[[Path], None]]:
    def folder_at_new(work: Path) -> None:
        _aside(work / NEW)
        (work / NEW).mkdir()

    def symlink_at(rel: str) -> Callable[[Path], None]:
        def put(work: Path) -> None:
            _aside(work / rel)
            (work / rel).symlink_to(outside)
        return put

    return [folder_at_new, symlink_at(OLD), symlink_at(NEW), symlink_at("r/Ref 001.md")]


def test_a_path_of_a_killed_move_replaced_by_a_folder_or_symlink_is_left_and_the_move_ends(
        tmp_path: Path) -> None:
    template = make_template(tmp_path / "template", 2)
    before, after = reference(template, tmp_path / "reference")
    outside = tmp_path / "outside.md"
    cases = _replacements(outside)
    work, recovered = tmp_path / "work", 0
    for n, runner in killed_moves(tmp_path, template, work):
        outside.write_text(OUTSIDE, encoding="utf-8")
        cases[n % len(cases)](work)  # every replacement at a kill point of every phase
        doc = rmh(work, "doctor", "--json", runner=runner)
        assert doc.returncode == 0, (n, doc.stderr)
        vault = json.loads(doc.stdout)["vault"]
        assert vault["intents"]["pending"] == [], (n, vault["intents"])
        recovered += bool(vault["intents"]["recovered"])
        assert outside.read_text(encoding="utf-8") == OUTSIDE, n
        kept = b"".join(p.read_bytes() for p in sorted(work.rglob("*"))
                        if p.is_file() and not p.is_symlink() and ".rmh" not in p.parts)
        lost = [p for p, b in before.items()
                if b not in kept and after[NEW if p == OLD else p] not in kept]
        assert lost == [], (n, lost)
    assert recovered > 10
