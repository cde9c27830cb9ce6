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
    line and exit 1 wherever it lands, while the CLI's modules are still importing too. The
    standard streams are made safe first (harness/stdio.py): a closed one, a stdout that
    cannot be written (a full disk, a closed pipe) is one line (or none: EPIPE) and exit 1."""
    from .stdio import StreamError, install

    install()
    try:
        try:
            code = _run(sys.argv[1:] if argv is None else list(argv))
        finally:  # --help and --version exit through SystemExit: their text is flushed too
            sys.stdout.flush()
    except KeyboardInterrupt:
        from .interrupt import interrupted

        return interrupted()
    except StreamError as exc:  # a write outside the command's own handling, or the flush
        if not exc.broken_pipe:
            print(f"rmh: {exc}", file=sys.stderr)
        return 1
    return code


def _run(words: list[str]) -> int:
    if "hook" in words:
        from .hooks_fast import run

        code = run(words)
        if code is not None:
            return code
    from .cli import main as cli_main

    return cli_main(words)
