"""The API key in an endpoint's answer or error, in the spellings an echo gives it
(harness/key_forms.py): generated keys (OpenAI-like and base64-like, with `/+=`) put into
generated text in each encoding, wrapped or not; afterwards an attacker reading the text
decodes every run of it every way listed and finds no key; text without the key is left as
it is. Through a real loopback endpoint and the real provider: an answer and an error body
echoing the request's Authorization header in base64, hex, URL-encoding, wrapped base64 of a
header dump, reach the caller without the key (session 41 blanked the exact key only)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import quote, unquote, unquote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.config import LlmSection
from harness.key_forms import MIN_KEY, key_pattern, scrubbed
from harness.llm import Broker
from harness.llm_types import LlmUnavailable

from .llm_stub_endpoint import ChatEndpoint, Reply

ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
KEYS = st.one_of(
    st.builds(lambda body: f"sk-{body}", st.text(ALNUM + "-_", min_size=20, max_size=120)),
    st.text(ALNUM + "/+=", min_size=MIN_KEY, max_size=90),  # an Azure-like key
)
FILLER = st.text("abcdefghij ,.:{}\"'\n0123456789", max_size=60)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


ENCODINGS: dict[str, Callable[[str, str, str], str]] = {  # (key, before, after) -> leak
    "exact": lambda k, a, b: k,
    "base64": lambda k, a, b: b64(k.encode()),
    "base64 of Bearer": lambda k, a, b: b64(f"Bearer {k}".encode()),
    "base64 of a header dump": lambda k, a, b: b64(json.dumps(
        {"host": a, "authorization": f"Bearer {k}", "user-agent": b}).encode()),
    "urlsafe base64 of a request": lambda k, a, b: base64.urlsafe_b64encode(
        f"POST /v1 HTTP/1.1\r\n{a}Authorization: Bearer {k}\r\n{b}".encode()).decode(),
    "mime base64 (76 columns)": lambda k, a, b: base64.encodebytes(
        f"{a}Authorization: Bearer {k}{b}".encode()).decode(),
    "hex": lambda k, a, b: k.encode().hex(),
    "HEX of Bearer": lambda k, a, b: f"Bearer {k}".encode().hex().upper(),
    "url-encoded": lambda k, a, b: quote(k, safe=""),
    "url-encoded, lower escapes": lambda k, a, b: re.sub(
        "%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(k, safe="")),
    "json, escaped slashes": lambda k, a, b: json.dumps({"auth": k}).replace("/", "\\/"),
    "reversed": lambda k, a, b: k[::-1],
    "wrapped at 10": lambda k, a, b: "\n".join(textwrap.wrap(k, 10)),
}


def _decodings(text: str) -> list[bytes]:
    """Everything an attacker may decode `text` into, every way the list names: as it is,
    without white space, reversed, URL-decoded, unescaped, and each run of base64 or hex
    characters decoded at every offset."""
    flat = "".join(text.split())
    out = [t.encode() for t in (text, flat, flat[::-1], unquote(flat), unquote_plus(flat),
                                flat.replace("\\/", "/"))]
    for alphabet, decode in ((r"[A-Za-z0-9+/=]", base64.b64decode),
                             (r"[A-Za-z0-9\-_=]", base64.urlsafe_b64decode)):
        for run in re.findall(alphabet + "{4,}", flat):
            for skip in range(4):
                part = run[skip:].rstrip("=")
                part = part[:-1] if len(part) % 4 == 1 else part + "=" * (-len(part) % 4)
                with contextlib.suppress(binascii.Error, ValueError):
                    out.append(decode(part))
    for run in re.findall("[0-9a-fA-F]{2,}", flat):
        for skip in range(2):
            part = run[skip:]
            out.append(bytes.fromhex(part[: len(part) - len(part) % 2]))
    return out


@settings(max_examples=400, deadline=None)
@given(key=KEYS, how=st.sampled_from(sorted(ENCODINGS)), before=FILLER, after=FILLER)
def test_no_listed_encoding_of_the_key_survives(key: str, how: str, before: str,
                                                after: str) -> None:
    leak = ENCODINGS[how](key, before, after)
    text = f"Your request was: {before}{leak}{after} -- end"
    assert any(key.encode() in d for d in _decodings(text))  # the attacker's reading works
    out = scrubbed(text, key_pattern(key))
    assert not any(key.encode() in d for d in _decodings(out)), (how, out)
    assert out.startswith("Your request was: ") and out.endswith(" -- end")


@settings(max_examples=200, deadline=None)
@given(key=KEYS, text=st.text(max_size=300), blob=st.binary(max_size=80))
def test_text_without_the_key_is_left_as_it_is(key: str, text: str, blob: bytes) -> None:
    plain = f"{text} {b64(blob)} {blob.hex()} {quote(text)}"
    if any(key.encode() in d for d in _decodings(plain)):
        return  # generated the key after all
    assert scrubbed(plain, key_pattern(key)) == plain


def test_a_short_placeholder_key_blanks_nothing() -> None:
    assert key_pattern("ollama") is None
    assert scrubbed("ollama says hi", key_pattern("ollama")) == "ollama says hi"


KEY = "sk-proj-Qm9vT2hYdWx3c/Zk+1VZpNn3TgHQ2LmR8xJ="


def _section(url: str) -> LlmSection:
    return replace(LlmSection(), base_url=url, api_key=KEY, model="m", timeout_s=10.0,
                   max_retries=0, retry_backoff_s=0.0)


def _echo(encode: Callable[[str], str], status: int) -> Callable[..., Reply]:
    def reply(n: int, body: dict[str, object]) -> Reply:
        said = encode(KEY)
        if status == 200:
            return Reply(text=f"Request headers seen: {said}")
        return Reply(status=status, raw=json.dumps(
            {"error": {"message": f"bad request, headers: {said}"}}).encode())
    return reply


@pytest.mark.parametrize("status", [200, 400])
@pytest.mark.parametrize("how", ["base64 of Bearer", "mime base64 (76 columns)", "hex",
                                 "url-encoded", "json, escaped slashes", "exact"])
def test_an_echoing_endpoint_hands_the_caller_no_key(status: int, how: str) -> None:
    """A real HTTP endpoint on loopback, the real provider and broker: what the caller gets,
    an answer or an error's message, holds no key the attacker's decodings find."""
    encode = ENCODINGS[how]
    with ChatEndpoint(_echo(lambda k: encode(k, "api.example", "rmh"), status)) as ep, \
            Broker.from_config(_section(ep.url)) as broker:
        try:
            out = broker.call("Alice likes tea.", "What does Alice like?", broker.new_budget())
        except LlmUnavailable as exc:
            out = str(exc)
        assert ep.headers[0]["authorization"] == f"Bearer {KEY}"
    assert ("Request headers seen: " if status == 200 else "bad request") in out
    assert not any(KEY.encode() in d for d in _decodings(out)), out
