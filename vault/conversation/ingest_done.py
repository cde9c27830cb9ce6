"""What the attempts of one ingest wrote (conversation/ingest.py): the notes, the trash copies
they made, the conversations written whole, and a stop that came while one was written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core import Vault


@dataclass
class Done:
    """What the attempts of one ingest wrote, and the trash copies they made."""

    written: dict[str, None] = field(default_factory=dict)
    trashed: dict[str, str] = field(default_factory=dict)  # note -> its copy in the trash
    copied: dict[str, str] = field(default_factory=dict)  # note -> sha256 of that copy
    whole: int = 0  # conversations the last attempt wrote all of
    stopped: bool = False  # a stop came with half a conversation or more written: finished

    def copy(self, vault: Vault, path: str, current: str) -> None:
        """`path`'s bytes (sha256 `current`, as the index read them) into the trash, unless an
        earlier attempt copied those same bytes (a conflict elsewhere started it again)."""
        if self.copied.get(path) != current:
            self.trashed[path] = vault.trash_copy(path)
            self.copied[path] = current
