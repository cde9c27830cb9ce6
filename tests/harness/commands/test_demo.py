"""`rmh demo PATH` (harness/commands/demo.py), real processes: it writes the sample notes
only into a new or empty folder, never into a folder of someone's notes (README's own
`rmh demo /tmp/rmh-demo` run twice works: the second run finds its demo vault), never
replaces a note, and `--json` prints one JSON document."""

from __future__ import annotations

import json
from pathlib import Path

from harness.commands.demo import DEMO_NOTES
from tests.harness.test_cli_notes import rmh


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_a_folder_of_notes_is_refused_untouched(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "People").mkdir(parents=True)
    (notes / "People" / "Alice.md").write_text("my own Alice\n", encoding="utf-8")
    (notes / ".obsidian").mkdir()
    before = tree(notes)
    r = rmh("demo", str(notes), "--no-dense")
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr == (f"rmh: {notes} is not empty and not a demo vault: `rmh demo` writes "
                        "its sample notes only into a new or empty folder\n")
    assert tree(notes) == before  # no note, no .rmh/


def test_json_and_a_second_run_that_keeps_an_edited_demo_note(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    r = rmh("demo", str(demo), "--no-dense", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["vault"], doc["notes"]) == (str(demo), len(DEMO_NOTES))
    assert [s["query"] for s in doc["searches"]] == ["who owns the billing service?",
                                                     "what broke on Monday"]
    assert all(len(s["hits"]) == 3 and set(s["hits"][0]) == {"note", "score"}
               for s in doc["searches"])
    (demo / "People" / "Alice.md").write_text("edited by me\n", encoding="utf-8")
    r = rmh("demo", str(demo), "--no-dense")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"demo vault with {len(DEMO_NOTES)} notes at {demo}\n")
    assert (demo / "People" / "Alice.md").read_text(encoding="utf-8") == "edited by me\n"


def test_the_folder_is_path_else_vault_never_rmh_vault(tmp_path: Path) -> None:
    demo, mine = tmp_path / "demo", tmp_path / "mine"
    r = rmh("--vault", str(demo), "demo", "--no-dense", env={"RMH_VAULT": str(mine)})
    assert r.returncode == 0 and r.stdout.startswith(f"demo vault with 9 notes at {demo}\n")
    assert not mine.exists()
    r = rmh("--vault", str(demo), "demo", str(mine), "--no-dense")
    assert (r.returncode, r.stderr) == (1, f"rmh: two vaults given: {mine} and --vault {demo}\n")


def test_a_demo_a_ctrl_c_left_unfinished_is_finished(tmp_path: Path) -> None:
    """The demo's own unfinished vault (`.rmh/` and the first notes, as Ctrl-C while it writes
    leaves it) was refused as 'not a demo vault', and so was every later `rmh demo` there;
    now it is finished. A demo-named note whose text is not the demo's is still refused."""
    from vault import Vault

    demo = tmp_path / "demo"
    with Vault.init(demo) as v:
        for path in sorted(DEMO_NOTES)[:3]:
            v.write(path, DEMO_NOTES[path], overwrite=False)
    (demo / "People").mkdir()
    (demo / "People" / ".Alice.md.rmh-tmp-1-1").write_text("half", encoding="utf-8")
    r = rmh("demo", str(demo), "--no-dense", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["notes"] == len(DEMO_NOTES)
    assert all((demo / path).read_text(encoding="utf-8") == text
               for path, text in DEMO_NOTES.items())

    mine = tmp_path / "mine"
    (mine / "People").mkdir(parents=True)
    (mine / "People" / "Bob.md").write_text(DEMO_NOTES["People/Bob.md"] + "mine\n", "utf-8")
    r = rmh("demo", str(mine), "--no-dense")
    assert r.returncode == 1 and "not a demo vault" in r.stderr, r.stderr
    assert sorted(p.name for p in mine.rglob("*")) == ["Bob.md", "People"]
