"""`rmh forget --subject Ann` on a vault whose rmh.toml holds a folder path naming Ann (its
shared cache under her home folder): before, the proof found "ann" in rmh.toml and the command
exited 1 (`erasure_incomplete`) on every such vault; now it exits 0 and says where the subject
names a folder in settings (storage/erase.py). A comment naming Ann there is still a trace."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness.test_crash_forget import rmh


def settings(tmp_path: Path) -> str:
    """A graph cache under Ann's home folder, made under the test's temporary folder."""
    return f'[embed]\ngraph_cache = "{(tmp_path / "home" / "ann").as_posix()}/.cache/rmh"\n'


def _work(tmp_path: Path, toml: str) -> Path:
    work = tmp_path / "work"
    vault = work / "vault"
    assert rmh(work, "init", str(vault)).returncode == 0
    (vault / "rmh.toml").write_text(toml, encoding="utf-8")
    (vault / "Ann.md").write_text("Ann likes tea.\n", encoding="utf-8")
    (vault / "Bob.md").write_text("Bob likes coffee.\n", encoding="utf-8")
    assert rmh(work, "search", "tea", "--json").returncode == 0
    return work


def test_a_settings_path_naming_the_subject_is_no_failed_proof(tmp_path: Path) -> None:
    work = _work(tmp_path, settings(tmp_path))
    done = rmh(work, "forget", "--subject", "Ann", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    proof = json.loads(done.stdout)["proof"]
    assert proof["occurrences"] == 0
    assert proof["in_settings_paths"] == {"rmh.toml": ["embed.graph_cache"]}
    human = rmh(work, "forget", "--subject", "Bob")
    assert human.returncode == 0 and "settings" not in human.stdout


def test_a_comment_naming_the_subject_in_settings_is_a_trace(tmp_path: Path) -> None:
    work = _work(tmp_path, f"# Ann's vault\n{settings(tmp_path)}")
    done = rmh(work, "forget", "--subject", "Ann", "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["kind"] == "erasure_incomplete"
