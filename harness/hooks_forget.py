"""Erasure of the hooks' own files (`rmh forget`): the hooks' index is dropped (derived: the
caller rebuilds it from what remains), and every session journal line and used-lately entry
that names an erased string is removed (harness/hooks_index.py keeps the index,
harness/hooks_used.py the journals and the used-lately list)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from vault import held_state

from .hooks_index import INDEX_FILE
from .hooks_used import JOURNAL_DIR, PROMPT_CHARS, USED_FILE, journal_lock, update_used


def _cut_into(line: str, cut: Callable[[str], bool]) -> bool:
    """Whether a journal line's prompt was cut at PROMPT_CHARS and ends in the beginning of
    an erased string (vault `ending_in_part`: the cut end may be an erased line's start)."""
    try:
        prompt = json.loads(line).get("prompt")
    except (ValueError, AttributeError, RecursionError):
        return False
    return isinstance(prompt, str) and len(prompt) >= PROMPT_CHARS and cut(prompt)


def forget(root: Path, needles: Iterable[str], done: Callable[[], object] = lambda: None
           ) -> bool:
    """Erasure (`rmh forget`): drop the hooks' index (derived; True when there was one, so
    the caller rebuilds it from what remains), and every journal line and used-lately entry
    that names an erased string. A journal file is rewritten whole (`replace_whole`: it was
    written in place, so a kill cut the lines it kept); a killed writer's temporary (its
    process gone) is removed, a running hook's left to it. `done` is called after each file
    operation (the fault-injection count)."""
    index = held_state(root) / INDEX_FILE  # never the plain path: a swap had it unlink there
    had = index.exists()
    for suffix in ("", "-wal", "-shm", "-journal"):
        if Path(f"{index}{suffix}").exists():
            Path(f"{index}{suffix}").unlink(missing_ok=True)
            done()
    from vault import dead_temps, ending_in_part, mentioning, replace_whole  # here: the
    # prompt hook imports this module, not this function

    needles = list(needles)
    names = mentioning(needles)  # whole words, as the erasure picks notes (vault)
    cut = ending_in_part(needles)
    folder = held_state(root) / JOURNAL_DIR
    dead = set(dead_temps(folder, ".*.tmp"))  # a running hook's temporary is its own
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        if path.is_symlink():  # not rmh's file: rewriting it changed the file it named
            path.unlink()
        if not path.is_file():
            continue
        if path.name.startswith(".") and path.name.endswith(".tmp"):  # a killed writer's
            if path in dead:  # (its pid gone) is removed; a live writer renames its own
                path.unlink()
                done()
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name == USED_FILE:
            update_used(root, lambda old: [n for n in old if not names(n)])
            continue
        lines = [ln for ln in text.splitlines(keepends=True)
                 if not names(ln) and not _cut_into(ln, cut)]
        if len(lines) == len(text.splitlines(keepends=True)):
            continue
        with journal_lock(folder):  # a prompt hook's append waits (else lost to the rewrite)
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = [ln for ln in text.splitlines(keepends=True)
                     if not names(ln) and not _cut_into(ln, cut)]
            if lines:
                replace_whole(path, ("".join(lines).encode("utf-8"),), count_op=_ticks(done))
            else:
                path.unlink()
                done()
    return had


def _ticks(done: Callable[[], object]) -> Callable[[], None]:
    """`done` as a `count_op` (its value dropped)."""

    def tick() -> None:
        done()

    return tick
