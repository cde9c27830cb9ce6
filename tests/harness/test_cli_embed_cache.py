"""`rmh index` and the shared embedding cache as a user meets them (real subprocesses), and one
onnxruntime session per process however many vaults and commands it serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import vault.retrieval.encoders as encoders
from harness import compose
from harness.cli import main

from .test_cli_notes import rmh

NOTES = {
    "Alice.md": "Alice owns the [[Billing]] service. She moved to Lisbon last spring.\n",
    "Billing.md": "Billing charges customers every month. #service\n",
    "Carla.md": "Carla rotates the certificates with [[Alice]] on Fridays.\n",
}


def make_folder(root: Path, notes: dict[str, str] = NOTES) -> Path:
    root.mkdir(parents=True)
    for name, text in notes.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def init(root: Path, cache: Path | str) -> tuple[dict[str, Any], str]:
    """`rmh init` (which embeds every chunk) under `cache`: (the index counts, init's stderr)."""
    env = {"RMH_EMBED_CACHE": str(cache)}
    r = rmh("--vault", str(root), "init", env=env)
    assert r.returncode == 0, r.stderr
    counted = rmh("--vault", str(root), "index", "--json", env=env)
    assert counted.returncode == 0 and "embedding:" not in counted.stderr, counted.stderr
    doc: dict[str, Any] = json.loads(counted.stdout)
    return doc, r.stderr


def test_a_second_vault_with_the_same_notes_embeds_nothing(tmp_path: Path) -> None:
    shared = tmp_path / "user-cache" / "embeddings.sqlite"
    a, a_err = init(make_folder(tmp_path / "a"), shared)
    assert "embedding:" in a_err and shared.is_file()
    b, b_err = init(make_folder(tmp_path / "b"), shared)
    assert "embedding:" not in b_err  # every chunk came from the shared cache
    assert b["counts"]["embeddings"] == a["counts"]["embeddings"] == a["prepared"]["chunks"]
    # with the shared cache off, a third vault embeds for itself
    _, c_err = init(make_folder(tmp_path / "c"), "")
    assert "embedding:" in c_err


def test_a_broken_shared_cache_does_not_break_rmh_init(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    doc, err = init(make_folder(tmp_path / "v"), blocker / "embeddings.sqlite")
    assert doc["counts"]["embeddings"] == doc["prepared"]["chunks"] > 0
    assert err.count("shared embedding cache") == 1 and "vault's own cache" in err


def test_one_onnx_session_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    real = encoders.cpu_session

    def counting(model: bytes | str, threads: int, **options: Any) -> Any:
        made.append(threads)
        return real(model, threads, **options)

    monkeypatch.setattr(encoders, "cpu_session", counting)
    compose.shared_encoder.cache_clear()  # a fresh process's state
    a, b = make_folder(tmp_path / "a"), make_folder(tmp_path / "b", {"X.md": "Other text.\n"})
    assert main(["--vault", str(a), "init"]) == 0
    assert main(["--vault", str(b), "init"]) == 0
    (a / "New.md").write_text("A new note arrives.\n", encoding="utf-8")
    assert main(["--vault", str(a), "index"]) == 0
    assert main(["--vault", str(b), "search", "other text"]) == 0
    assert made == [1]
