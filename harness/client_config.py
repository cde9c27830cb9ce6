"""Agent clients' settings files: read one, merge one entry in, write it back safely.

Used by `rmh setup` (an MCP server entry) and meant for any command that adds rmh to a
client's settings. The contract, for JSON (Claude Code, Claude Desktop, Cursor) and TOML
(Codex CLI) alike:
- only the entry named is added or replaced; every other key, server and comment (TOML) is
  kept as it was;
- a file that cannot be parsed, or whose shape is not what the client documents (the
  servers table not an object), is refused with `ClientConfigError` and left untouched;
- the write is atomic (a temporary file in the same folder, fsync, rename) and keeps the old
  file's permission bits; a temporary an rmh killed mid-write left is removed by the next
  write (its name marks it rmh's); the old file, when there was one, is first copied to
  `NAME.bak` (`NAME.bak.1`, ... when that exists), never overwritten;
- a symbolic link (a dotfiles folder's) is followed: its target is read and replaced, the link
  stays; a dangling link, or a path that is not a regular file (a FIFO, a device, a folder),
  is refused without being opened (reading a FIFO or /dev/zero never ends);
- a read-merge-write runs under `locked` (an advisory lock on the file's folder), so two
  rmh commands writing the same file at once both land (one rewrote the other's before);
- text that UTF-8 cannot hold (a vault path with undecodable bytes) is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import stat
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

TEMP_MARK = "rmh-tmp-"  # in the name of a settings write's temporary (`_temp_prefix`)
LOCK_WAIT_S = 10.0  # the longest another rmh's read-merge-write of the same file may hold us


class ClientConfigError(Exception):
    """A client's settings file cannot be read or merged safely; nothing was written."""

    code_name = "client_config"

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"path": str(self.path), "reason": self.reason}


def settings_file(path: Path) -> Path:
    """The file behind `path`: itself, or a symbolic link's final target (which must exist);
    ClientConfigError when that is there and not a regular file."""
    real = path
    if path.is_symlink():
        try:
            real = path.resolve()
        except (OSError, RuntimeError) as exc:  # a loop of links
            raise ClientConfigError(path, f"cannot follow the link ({exc})") from exc
        if not real.exists():
            raise ClientConfigError(path, f"a symbolic link to {real}, which does not exist; "
                                    "create that file or remove the link first")
    try:
        mode = real.stat().st_mode
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise ClientConfigError(path, f"cannot read it ({exc})") from exc
    if not stat.S_ISREG(mode):
        raise ClientConfigError(path, "not a regular file; move it away first")
    return real


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on the folder of the file behind `path` (made when
    missing) for a read-merge-write: a folder, so no lock file is left in the user's home;
    ClientConfigError when another holder keeps it past LOCK_WAIT_S."""
    folder = settings_file(path).parent
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ClientConfigError(path, f"another rmh held {folder} for "
                                            f"{LOCK_WAIT_S:g} s; try again") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # and the lock with it


def encodable(path: Path, text: str) -> Path:
    """`path`, when UTF-8 can hold `text`; else ClientConfigError (a vault path whose name
    has bytes that are not UTF-8 has no form in the client's file)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ClientConfigError(path, f"UTF-8 cannot hold what would be written ({exc}); "
                                "rename the vault's folder to a UTF-8 name") from exc
    return path


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in `path` ({} when the file does not exist or is empty)."""
    text = read_text(path)
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClientConfigError(path, f"not valid JSON ({exc}); fix or move it first") from exc
    except RecursionError:  # a traceback from `rmh setup` and `rmh hooks install` (PLUG5)
        raise ClientConfigError(path, "not JSON a client writes (nested past the parser's "
                                "depth); fix or move it first") from None
    if not isinstance(doc, dict):
        raise ClientConfigError(path, "not a JSON object")
    return doc


def merge_json(doc: Mapping[str, Any], keys: Sequence[str], name: str,
               entry: Mapping[str, Any], path: Path) -> tuple[dict[str, Any], Any]:
    """A copy of `doc` with `entry` at doc[keys...][name], and the entry it replaced (None).
    Missing tables on the way are created; one that is not an object is refused."""
    out = json.loads(json.dumps(doc))
    table = out
    for key in keys:
        table = table.setdefault(key, {})
        if not isinstance(table, dict):
            raise ClientConfigError(path, f"'{key}' is not an object")
    previous = table.get(name)
    table[name] = dict(entry)
    return out, previous


def json_text(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, str):  # JSON's escapes are TOML's too; TOML also bars DEL
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}"
                                for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {type(value).__name__}")


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE.match(key) else json.dumps(key, ensure_ascii=False)


def toml_table(table: str, name: str, entry: Mapping[str, Any]) -> str:
    """`[table.name]` with one `key = value` line per field of `entry`."""
    lines = [f"[{table}.{_toml_key(name)}]"]
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def _header_path(line: str) -> str | None:
    match = _HEADER.match(line)
    if match is None:
        return None
    parts = [p.strip().strip('"').strip("'") for p in match.group(1).split(".")]
    return ".".join(parts)


def merge_toml(text: str, table: str, name: str, entry: Mapping[str, Any],
               path: Path) -> tuple[str, Any]:
    """`text` with the table `[table.name]` (and its sub-tables) replaced by `entry`, or the
    table appended; and the entry it replaced (None). The result is parsed back and must hold
    exactly `entry` there, or nothing is written."""
    try:
        before = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:  # (nested: a traceback, PLUG5)
        raise ClientConfigError(path, f"not valid TOML ({exc}); fix or move it first") from exc
    servers = before.get(table, {})
    if not isinstance(servers, dict):
        raise ClientConfigError(path, f"'{table}' is not a table")
    previous = servers.get(name)
    ours = f"{table}.{name}"
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        header = _header_path(line)
        if header is not None:
            skipping = header == ours or header.startswith(ours + ".")
        if not skipping:
            kept.append(line)
    body = "".join(kept)
    if body and not body.endswith("\n"):
        body += "\n"
    merged = body + ("\n" if body.strip() else "") + toml_table(table, name, entry)
    try:
        after = tomllib.loads(merged)
    except tomllib.TOMLDecodeError as exc:  # e.g. the server defined inline elsewhere
        raise ClientConfigError(path, f"cannot merge [{ours}] ({exc}); edit it by hand") from exc
    if after.get(table, {}).get(name) != dict(entry):
        raise ClientConfigError(path, f"[{ours}] is defined in a form rmh does not edit; "
                                "edit it by hand")
    return merged, previous


def read_text(path: Path) -> str:
    """The file's text ("" when it does not exist)."""
    try:
        return settings_file(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ClientConfigError(path, f"cannot read it ({exc})") from exc


def backup_path(path: Path) -> Path:
    """The first free backup name: NAME.bak, NAME.bak.1, NAME.bak.2, ..."""
    candidate = path.with_name(path.name + ".bak")
    n = 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.bak.{n}")
    return candidate


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.{TEMP_MARK}"


def _drop_stale_temps(path: Path) -> None:
    """Remove the temporaries an rmh killed mid-write left beside `path` (named by
    `_temp_prefix`: no other program's file). Called under `locked`, so none is in use."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            if entry.name.startswith(_temp_prefix(path)) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _copy_whole(src: Path, dst: Path, done: Callable[[], object]) -> None:
    """Copy `src` to `dst` (a free name: the caller holds `locked`) whole or not at all: a
    temporary beside it (one `_drop_stale_temps` removes), fsynced, then renamed. A copy made
    in place was cut short by a crash and left a backup that was not the old file."""
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(src), suffix=".tmp", dir=src.parent)
    os.close(fd)
    try:
        shutil.copy2(src, tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        done()
        os.rename(tmp, dst)
        done()
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_settings(path: Path, text: str, *, done: Callable[[], object] = lambda: None
                   ) -> Path | None:
    """Write `text` to `path` atomically, keeping its mode; return the backup of the old
    file (None when there was none, or it already held exactly `text`). A link's target is
    written (module docstring). Call under `locked`: the temporaries a killed rmh left
    beside it are removed first. `done` is called after each file operation (the backup's
    temporary written, its rename, the new file's temporary written, its rename): the fault
    injection's count (vault `operation_made`), so a crash sweep kills between any two."""
    path = settings_file(encodable(path, text))
    _drop_stale_temps(path)
    backup: Path | None = None
    mode: int | None = None
    if path.exists() and read_text(path) == text:
        return None
    tmp = ""
    try:  # any refusal (a name past 255 bytes, a full disk): no backup or temporary left
        if path.exists():
            mode = path.stat().st_mode & 0o7777
            backup = backup_path(path)
            _copy_whole(path, backup, done)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        done()
        os.replace(tmp, path)
        done()
    except BaseException as exc:
        for made in (Path(tmp) if tmp else None, backup):
            if made is not None:
                made.unlink(missing_ok=True)
        if isinstance(exc, OSError):  # an immutable file, a full disk: say which file
            raise ClientConfigError(path, f"cannot write it ({exc.strerror}); it was left "
                                    "as it was") from exc
        raise
    return backup
