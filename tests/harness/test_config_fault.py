"""RMH_FAULT_AFTER_OPS (harness/config.py): the store's fault-injection seam, read here only."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import ConfigError, load


def test_fault_after_ops_is_read_from_the_environment(tmp_path: Path) -> None:
    assert load(vault=tmp_path, env={}).fault_after_ops is None
    assert load(vault=tmp_path, env={"RMH_FAULT_AFTER_OPS": ""}).fault_after_ops is None
    assert load(vault=tmp_path, env={"RMH_FAULT_AFTER_OPS": "7"}).fault_after_ops == 7
    for bad in ("0", "-1", "x", "1.5"):
        with pytest.raises(ConfigError, match="RMH_FAULT_AFTER_OPS"):
            load(vault=tmp_path, env={"RMH_FAULT_AFTER_OPS": bad})
