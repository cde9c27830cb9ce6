"""vault.storage.forgotten: a record that cannot be read is never replaced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault.storage import forgotten


@pytest.mark.parametrize("bad", [b'{"version": 1, "subjects": [[1, "x"', b"[]", b"\xff",
                                 b'{"version": 2, "subjects": []}', None])
def test_an_erasure_never_writes_over_a_record_it_cannot_read(tmp_path: Path,
                                                               bad: bytes | None) -> None:
    """A truncated (or damaged, or newer) `.rmh/forgotten.json` read as empty, and the next
    `rmh forget` wrote a record of its own subject alone over it: the subjects erased before
    were dropped for good and came back at the next ingest of their transcript (session 25,
    STORE). The erasure now stops before any change, the record as it was."""
    forgotten.remember(tmp_path, "Quillon", ["q.md"])
    record = tmp_path / forgotten.NAME
    if bad is None:  # not a regular file
        record.unlink()
        os.mkfifo(record)
    else:
        record.write_bytes(bad)
    with pytest.raises(OSError, match="cannot be read"):
        forgotten.remember(tmp_path, "Zed", [])
    with pytest.raises(OSError, match="cannot be read"):  # nor do its readers take it
        forgotten.load(tmp_path)  # as empty (an ingest wrote the erased turns back)
    if bad is not None:
        assert record.read_bytes() == bad
    assert sorted(p.name for p in tmp_path.iterdir()) == [forgotten.NAME]
