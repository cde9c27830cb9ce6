"""The markdown scan is linear on hostile input and cuts headings as the Obsidian rule says."""

from __future__ import annotations

import random
import re
import time

from vault.notes.markdown_scan import scan_body

# The heading rule as one regular expression (the form the scanner used before it was made
# linear): the reference for what `scan_body` reports as headings.
REFERENCE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?$", re.MULTILINE)


def reference_headings(text: str) -> tuple[str, ...]:
    return tuple(t for m in REFERENCE.finditer(text) if (t := (m.group(1) or "").strip()))


def test_headings_match_the_reference_rule_on_random_lines() -> None:
    rng = random.Random(20241201)
    alphabet = ["#", " ", "\t", "a", "\r", "\n", "b#", "  ", "x", "##"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
        assert scan_body(text).headings == reference_headings(text), repr(text)


def test_hostile_one_line_notes_scan_in_linear_time() -> None:
    n = 400_000
    for evil in ("# a" + " " * n + "x", "# " + " #" * (n // 2) + "x", "[[" * (n // 2),
                 "[[a|" * (n // 4), "#a" * (n // 2), "[a](" * (n // 4), "<!--" * (n // 4),
                 # `<!--` inside lines: literal, each with no `-->` after it or a far one
                 "a <!-- " * (n // 7), "a <!--\n" * (n // 7), "a <!--\n\n" * (n // 8) + "-->"):
        t = time.process_time()  # CPU, not wall: a loaded machine's waits do not count
        scan_body(evil)
        assert time.process_time() - t < 3.0, evil[:20]  # the heading rule took minutes
    assert scan_body("# Title ##\n## Sub\t#\n# #\n").headings == ("Title", "Sub", "#")
