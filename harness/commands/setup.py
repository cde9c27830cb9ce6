"""`rmh setup CLIENT`: connect an agent client to the vault in one command.

For each client the one place its documentation says MCP servers live, and the shape there:

    client          scope    file                                              table
    claude-code     user     ~/.claude.json                                    mcpServers
                    project  ./.mcp.json                                       mcpServers
    claude-desktop  user     macOS ~/Library/Application Support/Claude/,      mcpServers
                             Windows %APPDATA%\\Claude\\, Linux ~/.config/Claude/
                             claude_desktop_config.json
    codex           user     $CODEX_HOME/config.toml (~/.codex/config.toml)    [mcp_servers.NAME]
                    project  ./.codex/config.toml                              [mcp_servers.NAME]
    cursor          user     ~/.cursor/mcp.json                                mcpServers
                    project  ./.cursor/mcp.json                                mcpServers
    generic         -        (printed: the {"mcpServers": ...} snippet most clients take)

The entry runs this very rmh by absolute path (the console script next to this interpreter,
else `python -m harness`), since a client does not see the virtual environment's PATH, with the
vault's absolute path. Setup initialises the vault when it is not one yet (asking first on a
terminal; `--yes` answers for you), merges the entry into the client's file
(harness.client_config: other servers kept, a backup of the old file), and finally spawns the
server as the client will and checks it answers the MCP handshake and lists its tools.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness.client_config import (
    ClientConfigError,
    encodable,
    json_text,
    locked,
    merge_json,
    merge_toml,
    read_json,
    read_text,
    toml_table,
    write_settings,
)
from harness.config import UserDirs, load, user_dirs
from harness.mcp_check import check_server

from .output import CommandFailed, counted, emit

Scope = Literal["user", "project"]
Locate = Callable[[UserDirs, Path, str], Path]


def _home(dirs: UserDirs) -> Path:
    if dirs.home is None:
        raise CommandFailed("no home folder ($HOME is not set); pass --config FILE")
    return dirs.home


def _desktop(dirs: UserDirs, platform: str) -> Path:
    if platform == "darwin":
        base = _home(dirs) / "Library" / "Application Support"
    elif platform.startswith("win"):
        base = dirs.appdata or _home(dirs) / "AppData" / "Roaming"
    else:
        base = dirs.xdg_config_home or _home(dirs) / ".config"
    return base / "Claude" / "claude_desktop_config.json"


@dataclass(frozen=True)
class Client:
    """One agent client: where its MCP settings live and in which format."""

    name: str
    title: str
    user: Callable[[UserDirs, str], Path] | None  # (dirs, sys.platform) -> file
    project: str | None  # the file relative to the project folder (cwd)
    fmt: Literal["json", "toml", "print"] = "json"
    typed: bool = False  # the entry says "type": "stdio" (Claude Code's own form)

    def path(self, scope: Scope, dirs: UserDirs, cwd: Path, platform: str) -> Path:
        if scope == "project":
            if self.project is None:
                raise CommandFailed(f"{self.name} has no project settings; use --scope user")
            return cwd / self.project
        if self.user is None:
            raise CommandFailed(f"{self.name} has no user settings; use --scope project")
        return self.user(dirs, platform)


CLIENTS: dict[str, Client] = {c.name: c for c in (
    Client("claude-code", "Claude Code", lambda d, _: _home(d) / ".claude.json", ".mcp.json",
           typed=True),
    Client("claude-desktop", "Claude Desktop", _desktop, None),
    Client("codex", "Codex CLI",
           lambda d, _: (d.codex_home or _home(d) / ".codex") / "config.toml",
           ".codex/config.toml", fmt="toml"),
    Client("cursor", "Cursor", lambda d, _: _home(d) / ".cursor" / "mcp.json",
           ".cursor/mcp.json"),
    Client("generic", "any MCP client", None, None, fmt="print"),
)}


def rmh_command() -> list[str]:
    """This rmh by absolute path: the console script beside this interpreter (a venv's
    bin/rmh), else this interpreter with `-m harness`. The interpreter path is kept as it
    is (not resolved): a venv's python is a link whose location selects the venv."""
    python = Path(sys.executable).absolute()
    for script in (python.parent / "rmh", python.parent / "rmh.exe"):
        if script.is_file():
            return [str(script)]
    return [str(python), "-m", "harness"]


def server_entry(client: Client, vault: Path, dense: bool) -> dict[str, Any]:
    command, *prefix = rmh_command()
    args = [*prefix, "--vault", str(vault), "serve", *([] if dense else ["--no-dense"])]
    entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    entry.update({"command": command, "args": args})
    return entry


def snippet(client: Client, name: str, entry: dict[str, Any]) -> str:
    """What `--print` shows: the file's part that names this server."""
    if client.fmt == "toml":
        return toml_table("mcp_servers", name, entry)
    return json_text({"mcpServers": {name: entry}})


def ensure_vault(root: Path, *, yes: bool, dense: bool) -> dict[str, Any] | None:
    """Initialise `root` when it is not a vault yet (asking on a terminal unless `yes`);
    None when it already was one."""
    if (root / ".rmh").is_dir():
        return None
    what = "create and initialise" if not root.exists() else "initialise"
    if not yes:
        if not sys.stdin.isatty():  # nobody to ask: not_a_vault, saying how to make it one
            from vault import NotAVault

            raise NotAVault(str(root), f"not an rmh vault yet: pass --yes to {what} it, "
                            f"or run `rmh init {root}` first")
        print(f"{root} is not an rmh vault yet. {what.capitalize()} it? [Y/n] ",
              end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("", "y", "yes"):
            raise CommandFailed(f"{root} not initialised; nothing written")
    from .notes import initialise

    return initialise(load(vault=root), dense=dense)


def _missing(root: Path) -> list[Path]:
    """The folders from `root` up that do not exist yet (the init makes them all), deepest
    first: what taking the init back removes, besides `.rmh/`."""
    made: list[Path] = []
    for folder in (root, *root.parents):
        if folder.exists() or folder.is_symlink():
            break
        made.append(folder)
    return made


def _undo_init(root: Path, made: list[Path]) -> str:
    """Take back the init of this run (its settings write failed): `.rmh/`, and the folders
    the init made (`made`, deepest first) that hold nothing else; the words the failure
    message ends with."""
    shutil.rmtree(root / ".rmh", ignore_errors=True)
    for folder in made:
        try:
            folder.rmdir()
        except OSError:  # not empty: something else was put there since; keep it and above
            break
    return f"; the vault this run initialised was taken back ({root} is as it was before)"


def merged(client: Client, path: Path, name: str, entry: dict[str, Any]) -> tuple[str, bool]:
    """The client's file with the entry merged in, and whether it replaced one; a file rmh
    cannot merge into is ClientConfigError (nothing written)."""
    if client.fmt == "toml":
        text, previous = merge_toml(read_text(path), "mcp_servers", name, entry, path)
    else:
        doc, previous = merge_json(read_json(path), ("mcpServers",), name, entry, path)
        text = json_text(doc)
    encodable(path, text)
    return text, previous is not None


def write_entry(client: Client, path: Path, name: str, entry: dict[str, Any],
                done: Callable[[], object] = lambda: None) -> tuple[Path | None, bool]:
    """Merge the entry into the client's file; (the backup, whether it replaced one).
    `done`: called after each file operation (`write_settings`)."""
    with locked(path):  # another rmh setup's entry is read before ours is merged in
        text, replaced = merged(client, path, name, entry)
        return write_settings(path, text, done=done), replaced


def cmd_setup(args: argparse.Namespace) -> int:
    client = CLIENTS[args.client]
    cfg = load(vault=args.vault)
    root = cfg.require_vault().resolve()  # the client runs elsewhere: no `..`, no link
    dense = not args.no_dense
    doc: dict[str, Any] = {"client": client.name, "vault": str(root), "name": args.name}
    entry = server_entry(client, root, dense)
    path = None if args.print or client.fmt == "print" else \
        Path(args.config).absolute() if args.config else client.path(
            args.scope, user_dirs(), Path.cwd(), sys.platform)
    if path is not None:  # a settings file it cannot merge into stops it before the init
        try:
            merged(client, path, args.name, entry)
        except ClientConfigError as exc:
            raise CommandFailed(str(exc)) from exc
    made = _missing(root)
    doc["initialised"] = ensure_vault(root, yes=args.yes, dense=dense)
    doc["server"] = entry
    lines: list[str] = []
    if doc["initialised"] is not None:
        lines.append(f"initialised {root} ({counted(doc['initialised']['notes'], 'note')})")
    if path is None:
        doc["config"] = None
        text = snippet(client, args.name, entry)
        if not args.json:
            sys.stdout.write(text)
    else:
        try:  # merged again: the client may have rewritten its file during the init
            from vault import operation_made

            backup, replaced = write_entry(client, path, args.name, entry, functools.partial(
                operation_made, cfg.fault_after_ops))
        except ClientConfigError as exc:
            undone = "" if doc["initialised"] is None else _undo_init(root, made)
            raise CommandFailed(f"{exc}{undone}") from exc
        doc.update({"config": str(path), "backup": str(backup) if backup else None,
                    "replaced": replaced})
        lines.append(f"{'updated' if replaced else 'added'} MCP server '{args.name}' in "
                     f"{path}" + (f" (old file kept as {backup})" if backup else ""))
    if not args.no_check:
        check = check_server(entry["command"], entry["args"])
        doc["check"] = check.to_json()
        lines.append(f"check: {check.server} answers over MCP ({check.protocol_version}), "
                     f"{len(check.tools)} tools" if check.ok else
                     f"check FAILED: {check.reason}\n{check.stderr}")
    if client.fmt != "print" and not args.print:
        lines.append(f"restart {client.title} to load it; then ask it to search your notes")
    if args.json:
        emit(args, doc, "")
    elif lines:
        printed = args.print or client.fmt == "print"  # stdout holds the snippet
        print("\n".join(lines), file=sys.stderr if printed else sys.stdout)
    return 0 if args.no_check or doc["check"]["ok"] else 1


def register(sub: Any) -> None:
    helptext = "connect an agent client (Claude Code, Claude Desktop, Codex, Cursor) to the vault"
    p: argparse.ArgumentParser = sub.add_parser("setup", help=helptext, description=helptext)
    p.add_argument("client", choices=sorted(CLIENTS),
                   help="the client; generic prints a JSON snippet for any other")
    p.add_argument("--vault", default=argparse.SUPPRESS, metavar="PATH",
                   help="the vault folder (as rmh --vault)")
    p.add_argument("--scope", choices=("user", "project"), default="user",
                   help="user: the client's settings for you (default); project: the "
                   "settings file in the current folder")
    p.add_argument("--config", default=None, metavar="FILE",
                   help="write this settings file instead of the client's usual one")
    p.add_argument("--name", default="rmh", help="the server's name in the client (rmh)")
    p.add_argument("--print", action="store_true",
                   help="print the configuration instead of writing it")
    p.add_argument("--yes", "-y", action="store_true",
                   help="initialise the vault without asking when it is not one yet")
    p.add_argument("--no-dense", action="store_true",
                   help="serve without the ONNX embedder (and initialise without embeddings)")
    p.add_argument("--no-check", action="store_true",
                   help="do not start the server to check that it answers")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_setup)
