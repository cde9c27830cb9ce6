"""A search process never loads the erasure's steps (issue 33 item 5: a cold start pays for
what its search uses): `vault/erasure.py` imports `erasure_steps` and `storage.forgotten` where
an erasure runs or a pending one is read, not at every open. A real `rmh init` and search
process (the real MiniLM); a pending erasure still loads them (the open finishes it)."""

from __future__ import annotations

from pathlib import Path

from .cold_process import imported, linked_vault

STEPS = ("vault.erasure_steps", "vault.storage.forgotten")


def loaded(vault: Path, env: dict[str, str], *args: str) -> list[str]:
    """The STEPS modules one `rmh ARGS` process imported."""
    return imported(vault, env, STEPS, *args)[0]


def test_a_search_process_loads_no_erasure_steps(tmp_path: Path) -> None:
    env = linked_vault(tmp_path, 12)
    assert loaded(tmp_path, env, "search", "billing", "--json") == []
    # an erasure itself still has them (and the search after it does not)
    assert loaded(tmp_path, env, "forget", "N03.md", "--json") == list(STEPS)
    assert loaded(tmp_path, env, "search", "billing", "--json") == []
