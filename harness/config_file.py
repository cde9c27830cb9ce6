"""Reading the bytes of `rmh.toml` (or the file `$RMH_CONFIG` names) without ever waiting on it.

A plain `open` of a FIFO waits for a writer, forever when there is none, and a device such
as /dev/zero never ends, so `RMH_CONFIG` naming one (or such a file put where the vault's
`rmh.toml` goes) held every command, `rmh serve` and the agent client's hooks included. Here:

- a regular file (a symlink to one is followed) is read whole, up to MAX_CONFIG_BYTES;
- a FIFO or pipe is read because the user named it (`RMH_CONFIG=<(pass show rmh)`, a secret
  kept out of files): opened non-blocking; with no writer at that moment it is refused at
  once (unless this process read it whole before: those bytes again, as the pipe of
  `<(...)` is drained by the first load), else read until its writer closes it, at most
  WAIT_S seconds and MAX_CONFIG_BYTES;
- anything else (a folder, a device, a socket) is refused without being opened (opening a
  device can act on it).

Every refusal is an OSError (the caller makes it a config_error naming the file).
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time
from collections.abc import Mapping
from pathlib import Path

MAX_CONFIG_BYTES = 1 << 20  # a configuration is a few KiB; more is not one
WAIT_S = 5.0  # the longest a FIFO's writer may take to write it all
# FIFOs this process read to their end, by (device, inode): a command that loads the
# configuration twice (hooks install, doctor) finds `<(...)` drained and writerless then
_READ: dict[tuple[int, int], bytes] = {}


def read_config(path: Path) -> bytes:
    """The bytes of the configuration file at `path` (module docstring); OSError when it is
    missing, not a regular file or FIFO, a FIFO with no writer or one slower than WAIT_S, or
    larger than MAX_CONFIG_BYTES."""
    mode = os.stat(path).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)  # swapped since the stat: checked on what was opened
        mode = st.st_mode
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read(MAX_CONFIG_BYTES + 1)
            if len(data) > MAX_CONFIG_BYTES:
                raise OSError(errno.EFBIG, f"larger than {MAX_CONFIG_BYTES} bytes", str(path))
            return data
        if not stat.S_ISFIFO(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        key = (st.st_dev, st.st_ino)
        try:
            data = _from_fifo(fd, path)
        except OSError as exc:
            if exc.errno == errno.ENXIO and key in _READ:  # read whole already: the same
                return _READ[key]
            raise
        _READ[key] = data
        return data
    finally:
        os.close(fd)


def config_text(data: bytes) -> str:
    """The text of a configuration file's bytes: UTF-8, a byte order mark first skipped
    (Windows Notepad writes one; tomllib refused it, "Invalid statement (at line 1, column
    1)", for a file that looks right in every editor: API8, session 34). ValueError, in
    words, for UTF-16 (Windows PowerShell's `>` writes it) or other bytes that are not
    UTF-8, naming the first bad byte's line and column."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise ValueError("it is UTF-16 text (Windows PowerShell's > writes that): save it as "
                         "UTF-8")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise ValueError(f"it is not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, "
                         f"column {column}): save it as UTF-8") from None


def _from_fifo(fd: int, path: Path) -> bytes:
    """A FIFO's bytes until its writer closes it. Linux answers a non-blocking read of a FIFO
    with no writer with end of file at once, of one with a writer and no data yet with EAGAIN:
    so an empty first read means nobody is there to write it."""
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + WAIT_S
    first = True
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise OSError(errno.ETIMEDOUT, f"a FIFO whose writer did not finish in "
                              f"{WAIT_S:g} s", str(path)) from None
            select.select([fd], [], [], left)
            first = False
            continue
        if not chunk:
            if first:
                raise OSError(errno.ENXIO, "a FIFO with no writer (nothing would ever be "
                              "written to it)", str(path))
            return b"".join(chunks)
        first = False
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_CONFIG_BYTES:
            raise OSError(errno.EFBIG, f"larger than {MAX_CONFIG_BYTES} bytes", str(path))


def user_path(text: str) -> Path:
    """`text` as a path, a leading `~` or `~user` expanded as a shell does: kept as written
    when there is no such user or no home to expand it to (`--vault '~nosuchuser/v'` and
    `RMH_VAULT='~old'` were a RuntimeError traceback from every command, `rmh serve`'s too)."""
    path = Path(text)
    try:
        return path.expanduser()
    except RuntimeError:  # "Could not determine home directory."
        return path


def expand_home(value: str, environ: Mapping[str, str]) -> str:
    """A leading `~/` replaced by $HOME from `environ` (left as it is without one)."""
    if value == "~" or value.startswith("~/"):
        home = environ.get("HOME", "")
        return home + value[1:] if home else value
    return value


def beside(value: object, config: Path) -> object:
    """A path setting of the configuration file `config` as that file means it: a relative
    one (not "", not `~...`) is taken from the file's folder, not from the working directory
    (an `rmh serve` that an agent client started elsewhere found no `model_dir = "models/x"`)."""
    if not isinstance(value, str) or not value or value.startswith("~"):
        return value
    return value if Path(value).is_absolute() else str(config.absolute().parent / value)


def fault_after(environ: Mapping[str, str]) -> int | None:
    """$RMH_FAULT_AFTER_OPS: a positive integer, or unset/"" (no fault injection)."""
    raw = environ.get("RMH_FAULT_AFTER_OPS", "")
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"RMH_FAULT_AFTER_OPS must be a positive integer, not {raw!r}")
    return int(raw)
