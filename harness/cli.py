"""The `rmh` command line: argument parsing and dispatch to one module per command group.

Each module in `harness.commands` exposes `register(subparsers)`, which adds its commands and
sets `func(args) -> int` on them. Exit codes: 0 success, 1 operational error (one line on
stderr), 2 usage error (argparse's own convention).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from vault import VaultError

from .commands.output import CommandFailed
from .config import ConfigError

# Command modules, in help order. Each adds its own sub-commands.
COMMAND_MODULES: tuple[str, ...] = (
    "harness.commands.notes",
    "harness.commands.ask",
    "harness.commands.bench",
    "harness.commands.bench_ask",
    "harness.commands.learn",
    "harness.commands.serve",
    "harness.commands.repl",
    "harness.commands.ingest",
    "harness.commands.lifecycle",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the full parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="rmh",
        description="rmh, the recursive memory harness: an Obsidian vault as an agent's memory.",
    )
    parser.add_argument(
        "--vault",
        metavar="PATH",
        help="the vault folder (default: $RMH_VAULT; there is no other fallback)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rmh` console script and `python -m harness`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except BrokenPipeError:
        return 1
    except (CommandFailed, ConfigError, VaultError, OSError) as exc:
        print(f"rmh: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rmh: interrupted", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
