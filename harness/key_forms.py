"""The spellings of the API key an endpoint's answer or error may carry, found and blanked.

An endpoint, a proxy or an echo server that quotes the request back puts the key into what
rmh passes on (an answer reaches the REPL, an error its caller): session 41 blanked the key
as it is only. An echo quotes it as the request held it, or as its own dump of the request
spells it: so besides the key itself `key_pattern` finds

- the key's bytes in hex (either case), URL-encoded (percent escapes either case), with JSON's
  escaped slashes (`\\/`), and reversed;
- base64 (the standard and the URL-safe alphabet) of the key at any byte offset of a longer
  text: for each offset modulo 3 the run of base64 characters that depends on the key's
  bytes alone, so the key is found in base64 of itself, of "Bearer KEY", of "Authorization:
  Bearer KEY", of a JSON dump of the headers, of a whole request;
- each of these broken by white space between any two characters (base64 wrapped at 76
  columns, a key wrapped by a terminal or split across lines).

Still passing, by design or because no list can hold them: other encodings (base32, ROT13,
XOR, a compressed stream: gzip has no fixed bytes for the key), the key with other
separators ("s-k-…", one character a numbered line), a case change of the whole key, a part of
the key alone (its first half), the key split across two answers. An endpoint that means to
leak the key can always encode it so; the scrub is against an echo, not against an adversary
who holds the key. Forms shorter than MIN_KEY characters are not looked for: a local server's
placeholder key ("none", "ollama", "EMPTY") would blank ordinary words.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from urllib.parse import quote

MASK = "***"
MIN_KEY = 8  # the shortest key (and form of it) looked for in an answer
_URLSAFE = str.maketrans("+/", "-_")


def _base64_runs(raw: bytes) -> Iterator[str]:
    """The base64 characters that depend on `raw` alone, at each of the 3 byte offsets it may
    stand at in a longer text (a group of 4 characters that holds a byte before or after it
    is left out); and the whole encodings of the key and of "Bearer KEY" (their padding)."""
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + raw).decode("ascii")
        start = 4 if offset else 0
        end = len(encoded) - (4 if (offset + len(raw)) % 3 else 0)
        yield encoded[start:end]
    yield base64.b64encode(raw).decode("ascii")
    yield base64.b64encode(b"Bearer " + raw).decode("ascii")


def key_forms(key: str) -> list[str]:
    """Every form of `key` looked for (module docstring), longest first (ties: in code point
    order), none shorter than MIN_KEY."""
    raw = key.encode("utf-8")
    url = quote(key, safe="")
    forms = {key, key[::-1], raw.hex(), raw.hex().upper(), url,
             re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), url), key.replace("/", "\\/")}
    for run in _base64_runs(raw):
        forms.update((run, run.translate(_URLSAFE)))
    return sorted((f for f in forms if len(f) >= MIN_KEY), key=lambda f: (-len(f), f))


def key_pattern(key: str) -> re.Pattern[str] | None:
    """One regex for every form of `key`, each allowing white space between any two of its
    characters; None for a key shorter than MIN_KEY."""
    if len(key) < MIN_KEY:
        return None
    return re.compile("|".join(r"\s*".join(re.escape(c) for c in form)
                               for form in key_forms(key)))


def scrubbed(text: str, pattern: re.Pattern[str] | None) -> str:
    """`text` with every form of the key `pattern` finds spelt MASK."""
    return text if pattern is None else pattern.sub(MASK, text)
