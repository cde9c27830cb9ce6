"""`rmh hooks install|uninstall CLIENT` and `rmh hook EVENT --client CLIENT`.

- ``rmh hooks install claude-code|codex|gemini [--project [DIR] | --user]``: write the
  client's hook settings (harness/hooks_install.py) so that it calls `rmh hook ...` with the
  absolute path of this rmh and of the vault (`--vault` or $RMH_VAULT). ``rmh hooks
  uninstall`` removes exactly those entries.
- ``rmh hook session-start|prompt|session-end|pre-compact --client C``: what the client runs;
  reads its JSON on stdin and answers in its format (harness/hooks.py, harness/hooks_memory.py).
  A hook never fails its client: an error is one line on stderr, the empty answer on stdout,
  exit 0.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import Any

from harness.config import home_dir, load
from harness.hooks import CLIENTS, EVENTS, HookInput, answer, session_key
from harness.hooks_client import (
    DAEMON_LATE,
    daemon_answer,
    read_input,
    too_long_line,
    unanswered_line,
)

from .output import counted, emit


def cmd_install(args: argparse.Namespace) -> int:
    from harness.compose import plain_vault
    from harness.hooks_index import refresh
    from harness.hooks_install import SettingsError, install
    from vault import operation_made

    cfg = load(vault=args.vault)
    vault = cfg.require_vault().resolve()  # the client runs elsewhere: no `..`, no link
    scope = "user" if args.user else "project"
    # The vault first: one that does not open (a folder that is not a vault, a read-only
    # one) fails the command before the client's settings are touched, never after.
    with plain_vault(args.vault) as v:  # the hooks' index, so the first session starts fast
        v.sync()
        index = refresh(v)
    try:
        doc = install(args.client, scope, vault, Path(args.project or "."), home_dir(),
                      done=functools.partial(operation_made, cfg.fault_after_ops))
    except SettingsError as exc:
        from .output import fail

        fail(str(exc))
    doc["index"] = index
    emit(args, doc, f"installed rmh hooks for {args.client} in {doc['settings']} "
         f"({', '.join(f'{k} -> {v}' for k, v in doc['events'].items())}; vault {vault})")
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    from harness.hooks_install import SettingsError, uninstall
    from vault import operation_made

    scope = "user" if args.user else "project"
    try:
        done = functools.partial(operation_made, load(vault=args.vault).fault_after_ops)
        doc = uninstall(args.client, scope, Path(args.project or "."), home_dir(), done=done)
    except SettingsError as exc:
        from .output import fail

        fail(str(exc))
    emit(args, doc, f"removed {doc['removed']} rmh hook(s) from {doc['settings']}")
    return 0


def _run_hook(args: argparse.Namespace, data: HookInput) -> str:
    client = CLIENTS[args.client]
    cfg = load(vault=args.vault)
    h = cfg.hooks
    root = cfg.require_vault()
    session = session_key(client, data.session_id)
    from harness.hooks_index import index_path

    if h.daemon and args.event in ("session-start", "prompt"):
        from harness import hooks_daemon

        if args.event == "session-start":
            hooks_daemon.spawn(root, session)  # never waits for it
        elif not DAEMON_LATE["prompt"]:  # (the fast path already waited in vain)
            t0 = time.monotonic()
            got, why = daemon_answer(root, {"event": "prompt", "prompt": data.prompt,
                                            "session": session, "own": data.session_id},
                                     h.daemon_wait_s)
            if got is not None and isinstance(got.get("text"), str):
                return str(got["text"])
            if why == "too large" or time.monotonic() - t0 >= h.daemon_wait_s:
                print(unanswered_line(why if why == "too large" else "late",
                                      h.daemon_wait_s), file=sys.stderr)
                DAEMON_LATE["prompt"] = True
            # no daemon (a dead one's socket), or a slow one: the hooks' own index answers
    if args.event == "session-start" and index_path(root).exists():  # no vault opened
        from harness.hooks_recall import brief

        if not h.daemon:  # notes edited outside rmh since the last refresh: recalled soon
            _refresh_later(root, args.client, data.session_id)
        return brief(root, data.cwd, h.start_words)
    # the fast path, no vault opened (also for a late daemon: the engine would cost seconds)
    if args.event == "prompt" and (not h.engine or DAEMON_LATE["prompt"]):
        from harness.hooks_index import journal_shown
        from harness.hooks_recall import recall

        text, notes = recall(root, data.prompt, h.prompt_words, k=h.k,
                             min_share=h.min_term_share, own_conversation=data.session_id)
        if notes:  # the append counts toward RMH_FAULT_AFTER_OPS (the crash sweeps)
            from vault import operation_made

            journal_shown(root, session, data.prompt, notes,
                          functools.partial(operation_made, cfg.fault_after_ops))
        return text
    from harness.compose import open_vault
    from harness.hooks_index import refresh, remember_used, take_shown
    from harness.hooks_memory import capture, end_only, prompt_memory
    from harness.hooks_recall import brief

    # Codex's Stop ends a turn, not the session: capture, but keep the session open.
    end = args.event == "session-end" and client.name != "codex"
    try:
        with open_vault(cfg, dense=h.dense) as v:
            if args.event == "prompt":
                return prompt_memory(v, data.prompt, h.prompt_words, k=h.k,
                                     min_share=h.min_term_share, session=session,
                                     own_conversation=data.session_id)
            if args.event == "session-start":  # the first time: build the hooks' index
                refresh(v)
                return brief(root, data.cwd, h.start_words)
            used: list[str] = []
            if end:
                for prompt, notes in take_shown(root, session):
                    v.shown(prompt, [n for n in notes if v.note_id(n) is not None],
                            session=session)
            if client.reads_transcript and data.transcript_path:
                try:
                    doc = capture(v, data.transcript_path, data.session_id, session, end=end,
                                  cfg=cfg)
                except Exception:
                    if end:  # a transcript rmh cannot read still ends the session
                        end_only(v, session)
                    raise
                used = list(doc.get("used", []))
                print(f"rmh hook {args.event}: {counted(doc['turns'], 'turn')}, "
                      f"{counted(doc['written'], 'note')} written, "
                      f"{counted(doc['skipped_lines'], 'line')} skipped", file=sys.stderr)
                from harness.extraction import fallback_lines

                for line in fallback_lines(doc.get("extraction", {})):
                    print(f"rmh hook {args.event}: {line}", file=sys.stderr)
            elif end:
                end_only(v, session)
            if used:
                remember_used(root, used)
            refresh(v)
    finally:
        if end and h.daemon:  # the last session's end stops it, whatever failed above
            from harness import hooks_daemon

            hooks_daemon.daemon_request(root, {"event": "end", "session": session})
    return ""


def _refresh_later(root: Path, client: str, session_id: str) -> None:
    """Bring the hooks' index in step with the folder in a background process, never waiting
    for it: a `pre-compact` hook without a transcript (the vault opened and synced, the
    index refreshed; errors in .rmh/hooks-daemon.log). With `[hooks] daemon = false` the
    index was otherwise refreshed only at a session's end or compaction, so a note added,
    edited or renamed outside rmh between two sessions was missed (a renamed one recalled
    under its old path) until the end of the next session."""
    import json
    import subprocess

    from harness.hooks_client import own_file
    from harness.hooks_daemon import LOG
    from vault import held_state

    log = own_file(held_state(root) / LOG, "ab")  # handed to the child
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "harness", "--vault", str(root), "hook", "pre-compact",
             "--client", client], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=log, start_new_session=True, close_fds=True)
    finally:
        log.close()
    if child.stdin is not None:
        with child.stdin:  # a few bytes: the pipe takes them without the child reading yet
            child.stdin.write(json.dumps({"session_id": session_id}).encode())


def cmd_daemon(args: argparse.Namespace) -> int:
    """`rmh hooks daemon`: serve warm prompt memory on VAULT/.rmh/hooks.sock (started by the
    session-start hook; harness/hooks_daemon.py)."""
    from harness.compose import open_vault
    from harness.hooks_daemon import Daemon, socket_path
    from vault import held_state

    cfg = load(vault=args.vault)
    h = cfg.hooks
    path = socket_path(cfg.require_vault())
    if path is None:
        print("rmh hooks daemon: the vault's path is too long for a Unix socket",
              file=sys.stderr)
        return 1
    path = held_state(cfg.require_vault()) / path.name  # its lock, pid, settings too
    with open_vault(cfg, dense=h.dense) as v:
        v.search("warm up", 1, learn=False)  # prepare the engine (and the embedder) now
        daemon = Daemon(v, words=h.prompt_words, k=h.k, min_share=h.min_term_share,
                        idle_s=args.idle, wait_s=h.daemon_wait_s, start_words=h.start_words)
        if args.session:
            daemon.sessions.add(args.session)
        daemon.serve(path)
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    """Run one hook; never fail the client (module docstring)."""
    client = CLIENTS[args.client]
    text = ""
    try:
        given = read_input(sys.stdin)
        if given is None:  # over the cap: drained, nothing done
            print(too_long_line(args.event), file=sys.stderr)
        else:
            text = _run_hook(args, HookInput.parse(given))
    except Exception as exc:  # a hook must not break its client, whatever went wrong
        print(f"rmh hook {args.event}: {_why(exc)}", file=sys.stderr)
        text = ""
    out = answer(client, args.event, text)
    if out:
        print(out)
    return 0


def _why(exc: Exception) -> str:
    """The stderr line of a hook that did nothing: a `.rmh` refused (a symlink or a folder
    put in the vault's state folder's place) says that nothing was read through it and what
    to do, not only the exception's name (HOUSE40)."""
    from vault import PathRefused, StateRefused

    if isinstance(exc, PathRefused) and exc.path == ".rmh":
        fix = exc.fix if isinstance(exc, StateRefused) else (
            "put the vault's own .rmh folder back in its place")
        where = f" ({exc.folder})" if isinstance(exc, StateRefused) else ""
        return (f"nothing recalled or recorded: the vault's .rmh is refused ({exc.reason})"
                f"{where}; rmh reads no memory through it. To fix: {fix}")
    return f"{type(exc).__name__}: {exc}"


def register(sub: Any) -> None:
    """Add `hooks` and `hook` to the `rmh` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "hooks", help="install or remove rmh's hooks in an agent client's settings")
    hs = p.add_subparsers(dest="hooks_command", metavar="SUBCOMMAND")
    hs.required = True
    for name, func, helptext in (
            ("install", cmd_install, "write the client's hook settings (absolute paths)"),
            ("uninstall", cmd_uninstall, "remove exactly the entries install wrote")):
        s = hs.add_parser(name, help=helptext)
        s.add_argument("client", choices=sorted(CLIENTS))
        scope = s.add_mutually_exclusive_group()
        scope.add_argument("--project", nargs="?", const=".", default=None, metavar="DIR",
                           help="the project's settings (default; DIR: default the current "
                           "folder)")
        scope.add_argument("--user", action="store_true", help="the user's settings (~/)")
        s.add_argument("--json", action="store_true", help="print one JSON document")
        s.set_defaults(func=func)
    d = hs.add_parser("daemon", help="serve warm prompt memory to the hooks (started by the "
                      "session-start hook)")
    d.add_argument("--session", default=None, help="a client session to count as open")
    d.add_argument("--idle", type=float, default=4 * 3600.0, help="exit after this many "
                   "seconds without a request")
    d.set_defaults(func=cmd_daemon)
    h: argparse.ArgumentParser = sub.add_parser(
        "hook", help="run one hook as an agent client calls it (JSON on stdin)")
    h.add_argument("event", choices=EVENTS)
    h.add_argument("--client", choices=sorted(CLIENTS), default="claude-code")
    h.set_defaults(func=cmd_hook)
