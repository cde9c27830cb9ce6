"""The proof and a settings file (storage/erase.py `scan`, `settings`): a file-system path in a
setting that names the subject (Ann's home folder in rmh.toml when forgetting Ann) is the user's
layout, reported apart (`Proof.settings`), not a trace; before, the proof failed (exit 1) on
every such vault, for good. The subject anywhere else in the file, every other needle, and any
note holding that folder's path still count. The home folder is made under the test's
temporary folder: no path of a machine is written here."""

from __future__ import annotations

import time
from pathlib import Path

from vault import LEDGER_FILE, Ledger, Vault
from vault.storage.erase import scan


def home(tmp_path: Path) -> str:
    """An absolute folder path naming Ann (her home, as the user's settings would hold it)."""
    return (tmp_path / "home" / "ann").as_posix()


def settings(tmp_path: Path) -> str:
    return (f'[embed]\nshared_cache = "{home(tmp_path)}/.cache/rmh/embeddings.sqlite"\n'
            'graph_cache = "~/ann/graphs"\n[rerank]\nmodel_dir = "C:/Users/Ann/models"\n')


def _scan(tmp_path: Path, text: str, needles: tuple[str, ...] = ("Ann",)) -> tuple[int, dict[
        str, list[str]]]:
    config = tmp_path / "rmh.toml"
    config.write_text(text, encoding="utf-8")
    proof = scan([config], needles, "Ann", tmp_path, (), settings=[config])
    return proof.occurrences, proof.settings


def test_a_settings_path_naming_the_subject_is_reported_apart(tmp_path: Path) -> None:
    occurrences, apart = _scan(tmp_path, settings(tmp_path))
    assert occurrences == 0
    assert apart == {"rmh.toml": ["embed.shared_cache", "embed.graph_cache",
                                  "rerank.model_dir"]}
    config = tmp_path / "rmh.toml"
    assert scan([config], ["Ann"], "Ann", tmp_path).occurrences == 3  # not named as settings


def test_the_subject_elsewhere_in_a_settings_file_is_a_trace(tmp_path: Path) -> None:
    assert _scan(tmp_path, f"# Ann's vault\n{settings(tmp_path)}")[0] == 1  # a comment
    assert _scan(tmp_path, '[llm]\nmodel = "ann-7b"\n')[0] == 1  # a value, not a path
    assert _scan(tmp_path, f'[embed]\nshared_cache = "{home(tmp_path)}"\n[x\n')[0] == 1  # no TOML
    escaped = f'[embed]\nshared_cache = "{home(tmp_path)[:-3]}\\u0061nn/x"\n# Ann\n'
    assert _scan(tmp_path, escaped)[0] == 1  # the comment: a path not as written is no cover
    line = "Ann keeps the spare key under the blue flowerpot"
    occurrences, _ = _scan(tmp_path, f'{settings(tmp_path)}# {line}\n', ("Ann", line))
    assert occurrences == 2  # an erased line is a trace wherever it is


def test_forget_keeps_the_strict_proof_for_notes(tmp_path: Path) -> None:
    root = tmp_path / "v"
    usage = Ledger.open(Vault.state_dir(root, create=True) / LEDGER_FILE, clock=time.time)
    v = Vault.init(root, usage=usage)
    try:
        (root / "rmh.toml").write_text(settings(tmp_path), encoding="utf-8")
        v.write("Ann.md", "Ann likes tea.\n")
        v.write("paths.md", f"The old export is in {home(tmp_path)}/export.\n")
        v.write("Bob.md", "Bob likes coffee.\n")
        done = v.forget(v.forget_plan(subject="Ann"), settings=[root / "rmh.toml"])
        assert sorted(done.plan.notes) == ["Ann.md", "paths.md"]  # her home's path names Ann
        assert done.proof.occurrences == 0
        assert list(done.proof.to_json()["in_settings_paths"]) == ["rmh.toml"]
        assert "not a trace" in done.proof.summary()
    finally:
        v.close()
