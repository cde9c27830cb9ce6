"""Generated hostile frames on a real `rmh serve`'s stdin (VAULT11, session 37).

Every JSON-RPC method and MCP tool of the operation table gets, per parameter, values drawn by a
seeded generator (wrong types, huge and long integers, `1e400`, `-0`, lone surrogates written as
escapes, 5,000-character strings, nesting deep and past the decoder's limit, a missing required
member, an unknown extra member, a member given twice), each frame written one of several ways
(a UTF-8 byte order mark first, CRLF line end, `ensure_ascii` or raw UTF-8, padding), mixed with
frames that are no JSON (`NaN` and `Infinity` literals, a byte that is no UTF-8, a lone
surrogate's raw bytes, a cut frame) and batches that mix all of these with invalid elements.

Checked for each seed: one answer line per frame; every answer a well-formed response; the ids
answered are exactly those sent (an unparseable frame, or an invalid batch element, is answered
once with id null); no -32603 and no MCP `internal` kind; no traceback on stdout or stderr; the
server exits 0 at the end of its input; and, for the phase holding only read operations, every
byte of every file outside `.rmh` unchanged. Before session 37 this was the one-off probe
`VAULT10_types.py.txt`."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.operations import OPERATIONS
from tests.harness.test_cli_notes import rmh

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

# exec/reset run code (tests/sandbox); ask/rlm need a model; ingest parses whole chats (its
# hostile values: tests/harness/test_hostile_params.py)
SKIP = frozenset({"exec", "reset", "ask", "rlm_call", "rlm_batch", "rlm_usage", "ingest"})
INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "wire", "version": "0"}}}


def _value(rng: random.Random) -> tuple[str, bool]:
    """(JSON text of a value, whether the text is valid JSON)."""
    deep = rng.choice([30, 900, 120_000])
    pool: list[tuple[str, bool]] = [
        ("null", True), ("true", True), ("false", True), ("0", True), ("-0", True),
        ("-1", True), ("1.5", True), ("1e400", True), ("-1e400", True),
        (str(rng.randrange(10**18, 10**30)), True), ("9" * 5000, True), ('""', True),
        ('" "', True), ('"\\ud800"', True), ('"a\\udfffb"', True), ('"\\u0000"', True),
        (json.dumps("x" * 5000), True), ('"Alpha"', True), ('"../../etc/passwd"', True),
        ('"\u2028é😀"', True), ("[]", True), ('["Alpha"]', True), ("{}", True),
        ('{"note": "Alpha"}', True), ("[" * deep + "]" * deep, deep < 1000),
        ('{"a":' * 40 + "1" + "}" * 40, True), ("NaN", False), ("Infinity", False),
        ("-Infinity", False), ("'x'", False), ('"\\x41"', False),
    ]
    return rng.choice(pool)


def _request(rid: Any, method: str, params: str) -> str:
    return f'{{"jsonrpc":"2.0","id":{json.dumps(rid)},"method":{json.dumps(method)},' \
        f'"params":{params}}}'


def _params(rng: random.Random, names: list[tuple[str, bool]], target: str) -> tuple[str, bool]:
    """Params with `target` given a drawn value, the required others plain, maybe one required
    left out, an extra member, or `target` written twice."""
    val, ok = _value(rng)
    members: list[str] = []
    shape = rng.randrange(5)
    for name, required in names:
        if name == target:
            members.append(f"{json.dumps(name)}:{val}")
            if shape == 1:
                members.append(f'{json.dumps(name)}:"Beta"')  # a duplicate key: the last wins
        elif required and shape != 2:
            members.append(f'{json.dumps(name)}:"Alpha"')
    if shape == 3:
        members.append('"zz_unknown":{"x":[1,2]}')
    return "{" + ",".join(members) + "}", ok


def _frames(seed: int, read_only: bool) -> tuple[list[bytes], collections.Counter[str]]:
    """Frames (each a line's bytes, newline included) and the answer ids expected (json text)."""
    rng = random.Random(seed)
    expect: collections.Counter[str] = collections.Counter()
    items: list[tuple[str, str | None]] = []  # (element text, id json or None: parse error)
    n = 0
    for op in OPERATIONS:
        if op.name in SKIP or op.read_only != read_only:
            continue
        names = [(p.name, p.required) for p in op.params]
        for surface in ("rpc", "mcp"):
            method = getattr(op, surface)
            if method is None:
                continue
            for target in [name for name, _ in names] or ["zz_none"]:
                for _ in range(3):
                    n += 1
                    rid: Any = [n, f"s{n}\u2028é", n + 0.5, -n][n % 4]
                    params, ok = _params(rng, names, target)
                    if surface == "mcp":
                        params = f'{{"name":{json.dumps(method)},"arguments":{params}}}'
                    text = _request(rid, "tools/call" if surface == "mcp" else method, params)
                    items.append((text, json.dumps(rid) if ok else None))
        for bad in ('"x"', "null", "1", "[1,2]"):
            n += 1
            items.append((_request(n, op.rpc or "vault.search", bad), json.dumps(n)))
    rng.shuffle(items)
    frames: list[bytes] = [json.dumps(INIT).encode() + b"\n"]
    expect[json.dumps("init")] += 1
    i = 0
    while i < len(items):
        size = rng.choice([1, 1, 1, 1, 3, 9])
        chunk = items[i:i + size]
        i += size
        if size > 1 and all(rid is not None for _, rid in chunk):
            invalid = rng.choice(["1", "{}", '{"jsonrpc":"2.0","id":true,"method":"x"}', '"s"'])
            elements = [text for text, _ in chunk] + [invalid]
            rng.shuffle(elements)
            text = "[" + ",".join(elements) + "]"
            for _, rid in chunk:
                expect[str(rid)] += 1
            expect["null"] += 1
        else:
            for text, rid in chunk:
                frames.append(_encode(rng, text))
                expect[rid if rid is not None else "null"] += 1
            continue
        frames.append(_encode(rng, text))
    for raw in (b'{"jsonrpc":"2.0","id":1,"method":"vault.read","params":{"note":"\xff"}}',
                b'{"jsonrpc":"2.0","id":2,"method":"vault.read","params":{"note":"\xed\xa0\x80"}}',
                b'{"jsonrpc":"2.0","id":3,"method":"vault.read","params":{"no',
                b'\xef\xbb\xbf\xef\xbb\xbf{}', b"\xc0\xaf", b"[]"):
        frames.insert(rng.randrange(1, len(frames)), raw + b"\n")
        expect["null"] += 1
    return frames, expect


def _encode(rng: random.Random, text: str) -> bytes:
    """One frame's line: the text's bytes (a lone surrogate only ever as an escape), maybe after
    a byte order mark, maybe padded, maybe ended by CRLF."""
    raw = text.encode("utf-8", "surrogatepass")
    if b"\xed\xa0" in raw or b"\xed\xbf" in raw:
        raw = text.encode("ascii", "backslashreplace")
    how = rng.randrange(6)
    if how == 1:
        raw = b"\xef\xbb\xbf" + raw
    elif how == 2:
        raw = b" \t " + raw + b"  "
    return raw + (b"\r\n" if how in (3, 4) else b"\n")


def _tree(vault: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for base, dirs, files in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if d != ".rmh")
        for name in files:
            path = Path(base) / name
            out[str(path.relative_to(vault))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _check(out: bytes, err: bytes, expect: collections.Counter[str], frames: int) -> None:
    assert b"Traceback" not in out and b"Traceback" not in err, err.decode(errors="replace")[-3000:]
    lines = [line for line in out.split(b"\n") if line.strip()]
    assert len(lines) == frames
    got: collections.Counter[str] = collections.Counter()
    for line in lines:
        answer = json.loads(line)
        for a in answer if isinstance(answer, list) else [answer]:
            assert a["jsonrpc"] == "2.0" and ("result" in a) != ("error" in a), a
            got[json.dumps(a["id"])] += 1
            if "error" in a:
                assert isinstance(a["error"]["code"], int) and a["error"]["code"] != -32603, a
                assert isinstance(a["error"]["message"], str)
            elif isinstance(a["result"], dict) and a["result"].get("isError"):
                kind = a["result"].get("structuredContent", {}).get("error", {}).get("kind")
                assert kind != "internal", a
    assert got == expect, (got - expect, expect - got)


@pytest.mark.parametrize("read_only", [True, False], ids=["reads", "writes"])
@pytest.mark.parametrize("seed", [1, 2])
def test_every_generated_frame_gets_one_answer_with_its_id(
        tmp_path: Path, seed: int, read_only: bool) -> None:
    vault = tmp_path / "v"
    (vault / "sub").mkdir(parents=True)
    (vault / "Alpha.md").write_text("---\naliases: [A1]\n---\n# Alpha\nkiwi [[Beta]]\n",
                                    encoding="utf-8")
    (vault / "Beta.md").write_text("Beta mango [[Alpha#Alpha]] ![[Alpha#^x]]\n", encoding="utf-8")
    (vault / "sub" / "Gamma.md").write_text("gamma ^x\n", encoding="utf-8")
    assert rmh("--vault", str(vault), "init", "--no-dense").returncode == 0
    before = _tree(vault)
    frames, expect = _frames(seed, read_only)
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    p = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), "serve",
                        "--no-dense"], input=b"".join(frames), capture_output=True, env=env,
                       cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    _check(p.stdout, p.stderr, expect, len(frames))
    if read_only:
        assert _tree(vault) == before
