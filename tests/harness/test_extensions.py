"""The extension points table resolves, and the commands a package outside harness registers
are its own (harness imports none of them)."""

from __future__ import annotations

import importlib

from harness.commands.catalog import COMMANDS
from harness.extensions import EXTENSION_POINTS


def test_every_extension_point_resolves() -> None:
    for point, where in EXTENSION_POINTS.items():
        module, _, attribute = where.partition(":")
        assert getattr(importlib.import_module(module), attribute), point


def test_bench_registers_its_own_commands() -> None:
    assert COMMANDS["bench"][0] == "bench.cli" and COMMANDS["bench-ask"][0] == "bench.cli_ask"
    for name in ("bench", "bench-ask"):
        assert callable(importlib.import_module(COMMANDS[name][0]).register)
