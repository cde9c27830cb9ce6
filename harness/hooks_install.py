"""`rmh hooks install|uninstall CLIENT`: rmh's hook entries in a client's settings file.

Each client keeps hooks as ``{"hooks": {EVENT: [{"hooks": [{"type": "command", "command":
CMD, "timeout": S}]}]}}`` (Claude Code's `.claude/settings.json`, Codex CLI's
`.codex/hooks.json`, Gemini CLI's `.gemini/settings.json`; project or user scope). rmh adds one
matcher group per event whose only handler runs ``RMH --vault VAULT hook EVENT --client
CLIENT`` with absolute paths. An entry is rmh's when its command ends in ``hook EVENT
--client CLIENT`` with an rmh program before it (`is_ours`); install first removes rmh's old
entries (so installing twice, or from another checkout, leaves one set), uninstall removes
only those: every other key, event, group and handler stays as it was (an event or the
``hooks`` object left empty by the removal goes; a file left empty by it is deleted). When a
backup install left (NAME.bak...) is that file before rmh's entries came (`_before_install`),
uninstall writes its text back instead: the user's own bytes, an empty ``"hooks": {}`` or
``EVENT: []`` they had included (session 28 dropped those).

The file is read and rewritten by `harness.client_config` (as `rmh setup` does: atomic, its
mode kept, a symbolic link's target written, a FIFO or device refused unopened, the old file
backed up); a file that is not a JSON object is an error and is left untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .client_config import (
    ClientConfigError,
    json_text,
    locked,
    read_json,
    read_text,
    settings_file,
    write_settings,
)
from .hooks import CLIENTS, EVENTS, Client

Done = Callable[[], object]  # called after each file operation (vault `operation_made`)

TIMEOUT_S = {"session-start": 30, "prompt": 10, "session-end": 120, "pre-compact": 120}


class SettingsError(Exception):
    """The client's settings file cannot be read as a JSON object, or cannot be written."""


def rmh_program() -> list[str]:
    """The absolute command that runs this rmh: the `rmh` script beside this Python, else
    this Python with `-m harness`."""
    script = Path(sys.executable).parent / "rmh"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "harness"]


def hook_command(client: Client, event: str, vault: Path) -> str:
    """The shell command of one hook."""
    argv = [*rmh_program(), "--vault", str(vault.absolute()), "hook", event,
            "--client", client.name]
    return shlex.join(argv)


def is_ours(command: Any, client: Client) -> bool:
    """Whether a handler's command is an rmh hook of this client (module docstring)."""
    if not isinstance(command, str):
        return False
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    return (len(argv) >= 5 and argv[-4] == "hook" and argv[-3] in EVENTS
            and argv[-2:] == ["--client", client.name]
            and any(Path(a).name in ("rmh", "harness") for a in argv[:-4]))


def settings_path(client: Client, scope: str, project: Path, home: Path) -> Path:
    """The settings file of `scope` ("project" or "user")."""
    return (project / client.project_file) if scope == "project" else (home / client.user_file)


def _read(path: Path) -> dict[str, Any]:
    try:
        return read_json(path)
    except ClientConfigError as exc:
        raise SettingsError(f"cannot read {path} as a JSON object: {exc.reason}") from None


def _write(path: Path, doc: Mapping[str, Any], done: Done) -> None:
    _write_text(path, json_text(doc), done)


def _write_text(path: Path, text: str, done: Done) -> None:
    try:
        write_settings(path, text, done=done)
    except ClientConfigError as exc:
        raise SettingsError(str(exc)) from None
    except OSError as exc:
        raise SettingsError(f"cannot write {path}: {exc.strerror}") from None


def without_ours(doc: dict[str, Any], client: Client) -> tuple[dict[str, Any], int]:
    """`doc` less rmh's handlers, and how many were removed."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return doc, 0
    removed = 0
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept_groups.append(group)
                continue
            kept = [h for h in handlers
                    if not (isinstance(h, dict) and is_ours(h.get("command"), client))]
            removed += len(handlers) - len(kept)
            if kept or len(kept) == len(handlers):
                kept_groups.append({**group, "hooks": kept})
        if kept_groups or not groups:
            new_hooks[event] = kept_groups
    out = dict(doc)
    if new_hooks or not hooks:
        out["hooks"] = new_hooks
    else:
        del out["hooks"]
    return out, removed


MAX_BACKUPS = 64  # the newest backups looked at for the file as it was before install


def _bare(doc: Mapping[str, Any]) -> str:
    """`doc` less the empty `hooks` containers (which the removal drops), as ordered text."""
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        kept = {event: groups for event, groups in hooks.items() if groups != []}
        doc = {k: kept if k == "hooks" else v for k, v in doc.items() if k != "hooks" or kept}
    return json.dumps(doc, ensure_ascii=False)


def _before_install(path: Path, doc: Mapping[str, Any], client: Client) -> str | None:
    """The text of the newest backup of `path` (client_config's NAME.bak, NAME.bak.N) that
    holds none of rmh's entries and is `doc` (the file less rmh's entries) but for empty
    `hooks` containers, keys in the same order: the file before install, when nothing but
    rmh's entries changed since. None when no backup is."""
    try:
        target = settings_file(path)
        names = [p for p in target.parent.iterdir() if p.name == target.name + ".bak"
                 or (p.name.startswith(target.name + ".bak.")
                     and p.name[len(target.name) + 5:].isdigit())]
    except (ClientConfigError, OSError):
        return None
    names.sort(key=lambda p: -int(p.name[len(target.name) + 5:] or -1))
    want = _bare(doc)
    for backup in names[:MAX_BACKUPS]:
        try:
            text = read_text(backup)
            old = json.loads(text) if text.strip() else {}
        except (ClientConfigError, ValueError, RecursionError):
            continue
        if isinstance(old, dict) and not without_ours(old, client)[1] and _bare(old) == want:
            return text
    return None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """client_config.locked (two rmh writing the file at once both land), when the folder is
    there: uninstall makes no folder."""
    if not path.parent.is_dir():
        yield
        return
    try:
        with locked(path):
            yield
    except ClientConfigError as exc:
        raise SettingsError(str(exc)) from None


def install(client_name: str, scope: str, vault: Path, project: Path,
            home: Path, *, done: Done = lambda: None) -> dict[str, Any]:
    """Add rmh's four hooks to the client's settings (replacing rmh's earlier ones)."""
    client = CLIENTS[client_name]
    path = settings_path(client, scope, project, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        return _install(client, path, vault, done)


def _install(client: Client, path: Path, vault: Path, done: Done) -> dict[str, Any]:
    doc, replaced = without_ours(_read(path), client)
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f"{path}: 'hooks' is not an object")
    for event in EVENTS:
        name = client.events[event]
        groups = hooks.setdefault(name, [])
        if not isinstance(groups, list):
            raise SettingsError(f"{path}: hooks.{name} is not a list")
        groups.append({"hooks": [{"type": "command",
                                  "command": hook_command(client, event, vault),
                                  "timeout": TIMEOUT_S[event]}]})
    _write(path, doc, done)
    return {"client": client.name, "settings": str(path), "events": dict(client.events),
            "replaced": replaced}


def uninstall(client_name: str, scope: str, project: Path, home: Path,
              *, done: Done = lambda: None) -> dict[str, Any]:
    """Remove rmh's hooks (and nothing else) from the client's settings: the file as it was
    before install when a backup is that (`_before_install`), else a file left empty is
    deleted (a symlink's target is left holding `{}`, the link kept), and then its folder
    (`.claude/`, `.codex/`, `.gemini/`) when it is empty."""
    client = CLIENTS[client_name]
    path = settings_path(client, scope, project, home)
    with _locked(path):
        doc, removed = without_ours(_read(path), client)
        before = _before_install(path, doc, client) if removed else None
        if before is not None:
            _write_text(path, before, done)
        elif removed and (doc or path.is_symlink()):  # a link's target is written through
            _write(path, doc, done)                    # ({}), the link kept: deleting the
        elif removed:                                  # link left rmh's hooks in the target
            path.unlink()
            done()
    if removed and not doc and before is None:  # and the client's folder, when install made
        # it and it is empty
        with contextlib.suppress(OSError):
            path.parent.rmdir()
    return {"client": client.name, "settings": str(path), "removed": removed}
