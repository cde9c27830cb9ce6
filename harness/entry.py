"""The `rmh` command's entry point (and `python -m harness`'s).

A hook the warm daemon answers runs without loading the CLI (harness/hooks_fast.py): every
prompt of an agent client starts a new `rmh hook prompt` process, whose latency is mostly
start-up. Everything else is harness.cli.main, imported only then.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # nothing more is imported before the hook's fast path
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run `rmh` with `argv` (default sys.argv[1:]); the exit status. Ctrl-C (SIGINT) is one
    line and exit 1 wherever it lands, while the CLI's modules are still importing too."""
    try:
        return _run(sys.argv[1:] if argv is None else list(argv))
    except KeyboardInterrupt:
        from .interrupt import interrupted

        return interrupted()


def _run(words: list[str]) -> int:
    if "hook" in words:
        from .hooks_fast import run

        code = run(words)
        if code is not None:
            return code
    from .cli import main as cli_main

    return cli_main(words)
