"""The editor of `bench_hooks.py --edit-between`: its edits and how an answer is judged."""

from __future__ import annotations

from pathlib import Path

from bench.bench_hooks_edits import edit, fresh


def _vault(root: Path) -> Path:
    for a in range(2):
        (root / f"area-{a:04d}").mkdir(parents=True)
        for n in range(3):
            (root / f"area-{a:04d}" / f"Note {a}-{n}.md").write_text(f"# Note {a}-{n}\n\nbody\n",
                                                                     encoding="utf-8")
    return root


def test_edits_add_update_rename_in_turn(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    assert edit(v, 0) == ("add", 0)
    assert "zqedit0" in (v / "edits" / "new-0.md").read_text(encoding="utf-8")
    assert edit(v, 1) == ("update", 1)
    updated = [p for p in v.glob("area-*/*.md") if "zqedit1" in p.read_text(encoding="utf-8")]
    assert len(updated) == 1 and updated[0].read_text(encoding="utf-8").startswith("# Note")
    assert edit(v, 2) == ("rename", 0)
    assert not (v / "edits" / "new-0.md").exists()
    assert "zqedit0" in (v / "edits" / "renamed-0.md").read_text(encoding="utf-8")


def test_edits_are_the_same_on_two_copies(tmp_path: Path) -> None:
    a, b = _vault(tmp_path / "a"), _vault(tmp_path / "b")
    for i in range(6):
        assert edit(a, i) == edit(b, i)
    files = sorted(str(p.relative_to(a)) for p in a.rglob("*.md"))
    assert files == sorted(str(p.relative_to(b)) for p in b.rglob("*.md"))
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes()


def test_fresh_judges_word_paths_and_timeouts() -> None:
    assert fresh("add", 3, "- edits/new-3.md [d]: The zqedit3 team", "") == "fresh"
    assert fresh("update", 4, "- area-0001/x.md [d]: other memory", "") == "stale"
    assert fresh("add", 3, "", "") == "empty"
    assert fresh("add", 3, "", "rmh hook prompt: the hooks daemon did not answer in time\n") \
        == "timeout"
    assert fresh("rename", 3, "- edits/renamed-3.md [d]: The zqedit3 team", "") == "fresh"
    assert fresh("rename", 3, "- edits/new-3.md [d]: The zqedit3 team", "") == "stale"
    assert fresh("rename", 3, "- edits/renamed-3.md: zqedit3\n- edits/new-3.md: zqedit3",
                 "") == "stale"
