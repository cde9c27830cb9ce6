"""Generated outside edits of a vault's folder, for the tests of a new process that catches up
from the stores saved for a base state (test_catch_up_search.py, test_caught_up_sums.py,
test_ivf_retrain_bound.py): a folder of generated notes made a vault, then steps of one to
three changes each (a note added, edited, renamed, or deleted). The three kept their own
copies of these step shapes (HOUSE40: `duplicates --change --base 0be5a799`)."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

from vault import Vault

WORDS = [f"{a}{b}" for a in ("red", "blue", "green", "amber", "violet", "grey")
         for b in ("fox", "owl", "elk", "yak", "cod", "emu", "gnu", "bee")]
Text = Callable[[random.Random], str]


def linked_text(rng: random.Random) -> str:
    """4 to 40 WORDS and up to two links to the first thirty notes (n0 .. n29)."""
    links = " ".join(f"[[n{rng.randrange(30)}]]" for _ in range(rng.randint(0, 2)))
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40))) + f" {links}\n"


def plain_text(rng: random.Random) -> str:
    """4 to 40 WORDS, no links."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40))) + "\n"


def make_vault(root: Path, rng: random.Random, notes: int, text: Text) -> list[str]:
    """A new folder `root` of `notes` notes n0.md .. made a vault (initialised, closed); their
    names, which `change` keeps up to date."""
    root.mkdir()
    names = [f"n{k}.md" for k in range(notes)]
    for name in names:
        (root / name).write_text(text(rng), encoding="utf-8")
    Vault.init(root).close()
    return names


def change(root: Path, rng: random.Random, names: list[str], step: int, text: Text,
           delete: bool = True) -> None:
    """One step: one to three outside changes, each a note added (30%), edited (30%; 50%
    without `delete`), deleted (20%, while more than five notes are left; else renamed) or
    renamed (20%)."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.3:
            name = f"new{step}-{rng.randrange(99)}.md"
            names.append(name)
        elif kind < 0.6 or (kind < 0.8 and not delete):
            name = rng.choice(names)
        elif kind < 0.8 and len(names) > 5:
            gone = names.pop(rng.randrange(len(names)))
            (root / gone).unlink()
            continue
        else:
            old = rng.choice(names)
            name = f"moved{step}-{rng.randrange(99)}.md"
            os.rename(root / old, root / name)
            names[names.index(old)] = name
            continue
        (root / name).write_text(text(rng), encoding="utf-8")
