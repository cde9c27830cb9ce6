"""The harness's vault calls over a freshly initialised vault, for tests that drive the
operations directly (no server): `Vault.init(root)` on its own thread, holding `notes`
(vault path -> text) when given, closed after."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from harness.vault_ops import VaultCalls, VaultThread
from vault import Vault


@contextlib.contextmanager
def vault_calls(root: Path, notes: Mapping[str, str] | None = None) -> Iterator[VaultCalls]:
    vault = Vault.init(root)
    for path, text in (notes or {}).items():
        vault.write(path, text)
    thread = VaultThread()
    try:
        yield VaultCalls(vault, thread, lambda: None)
    finally:
        thread.close()
        vault.close()
