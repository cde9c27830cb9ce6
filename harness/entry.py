"""The `rmh` command's entry point (and `python -m harness`'s).

A hook the warm daemon answers runs without loading the CLI (harness/hooks_fast.py): every
prompt of an agent client starts a new `rmh hook prompt` process, whose latency is mostly
start-up. Everything else is harness.cli.main, imported only then.
"""

from __future__ import annotations

import contextlib
import sys

TYPE_CHECKING = False  # nothing more is imported before the hook's fast path
if TYPE_CHECKING:
    from collections.abc import Sequence


# -X options of the run again in UTF-8 mode (`_in_utf8`): the locale's encodings
LOCALE_OPTION, STDOUT_OPTION = "rmh_locale", "rmh_stdout"


def main(argv: Sequence[str] | None = None) -> int:
    """Run `rmh` with `argv` (default sys.argv[1:]); the exit status. Ctrl-C (SIGINT) is one
    line and exit 1 wherever it lands, while the CLI's modules are still importing too. The
    standard streams are made safe first (harness/stdio.py): a closed one, a stdout that
    cannot be written (a full disk, a closed pipe) is one line (or none: EPIPE) and exit 1."""
    from .stdio import StreamError, install

    if argv is None:
        _in_utf8()
    install(sys._xoptions.get(STDOUT_OPTION))
    try:
        try:
            code = _run(_arguments() if argv is None else list(argv))
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


def _in_utf8() -> None:
    """Run this process again in Python's UTF-8 mode (`-X utf8`) when the locale's encoding is
    not UTF-8. Note names, their text and their links are UTF-8 whatever the locale says, but
    Python decodes file names in the locale's encoding: under `LANG=en_US.ISO-8859-1` a note
    `Zoë.md` was indexed as `ZoÃ«.md`, so `[[Zoë]]` dangled (`doctor` reported it,
    `backlinks` lost it); under an ASCII locale (`LC_ALL=C PYTHONUTF8=0`) `rmh read Zoë` was
    `path_refused` and `rmh write Zoë` refused. What the locale still decides is carried
    over: stdout and stderr keep the encoding they had (`-X rmh_stdout`), and an argument
    that is not UTF-8 is read in the locale's encoding (`-X rmh_locale`, `_arguments`)."""
    if sys.flags.utf8_mode or sys.getfilesystemencoding() == "utf-8" or not sys.executable:
        return
    words = sys.argv[1:]
    if words and sys.orig_argv[-len(words):] != words:  # not the command line that ran us
        return  # (a fork of a pre-imported interpreter, an embedding): nothing to run again
    import os

    locale = sys.getfilesystemencoding()
    stdout = getattr(sys.stdout, "encoding", None) or locale
    os.execv(sys.executable, [sys.executable, "-X", "utf8", "-X", f"{LOCALE_OPTION}={locale}",
                              "-X", f"{STDOUT_OPTION}={stdout}", *sys.orig_argv[1:]])


def _arguments() -> list[str]:
    """sys.argv[1:]; after `_in_utf8`, an argument whose bytes are not UTF-8 (typed on a
    Latin-1 terminal) decoded in the locale's encoding instead."""
    import os

    locale = sys._xoptions.get(LOCALE_OPTION)
    words = sys.argv[1:]
    if not isinstance(locale, str):
        return words
    out = []
    for word in words:
        raw = os.fsencode(word)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            with contextlib.suppress(UnicodeDecodeError, LookupError):
                word = raw.decode(locale)
        out.append(word)
    return out


def _run(words: list[str]) -> int:
    if "hook" in words:
        from .hooks_fast import run

        code = run(words)
        if code is not None:
            return code
    from .cli import main as cli_main

    return cli_main(words)
