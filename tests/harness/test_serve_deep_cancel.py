"""A cancel whose id is a value nested to the decoder's limit, through a real `rmh serve`.

Such a frame is valid JSON the server has decoded: `$/cancelRequest` and MCP's
`notifications/cancelled` sent as notifications get no answer, the request form of
`$/cancelRequest` its `result: null` under its id, and nothing is cancelled (no request can
have an array or an object as its id). The server re-encoded the value to look it up, which
overflowed the stack at the deepest depths it decodes: each was answered -32603 with id null
(API8, session 34). The server's deepest depth depends on its own stack, so every depth
around it is sent, in four shapes, and the answers are counted.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .test_server_e2e import Server, make_vault

SHAPES = {"list[]": ("[", "]", "[]"), "list{}": ("[", "]", "{}"),
          "object[]": ('{"a":', "}", "[]"), "object{}": ('{"a":', "}", "{}"),
          "list1": ("[", "]", "1")}
DEPTHS = range(1010, 880, -1)  # around the decoder's limit (about 970 in `rmh serve`)
FORMS = {
    "rpc": '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":X}}',
    "mcp": '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":X}}',
    "request": '{"jsonrpc":"2.0","id":ID,"method":"$/cancelRequest","params":{"id":X}}',
}


def test_a_cancel_naming_a_deeply_nested_value_is_answered_as_any_cancel(
        tmp_path: Path) -> None:
    server = Server(make_vault(tmp_path / "vault"), tmp_path)
    try:
        for shape, (open_, close, inner) in SHAPES.items():
            for depth in DEPTHS:
                value = open_ * depth + inner + close * depth
                for form in FORMS.values():
                    rid = json.dumps(f"{shape}-{depth}")
                    server.send_raw(form.replace("ID", rid).replace("X", value).encode() + b"\n")
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    answers = [json.loads(line) for line in server.lines]
    codes = Counter(a["error"]["code"] if "error" in a else "result" for a in answers)
    assert set(codes) <= {-32700, "result"}, codes  # -32603 was the bug
    decoded = {a["id"] for a in answers if "result" in a}
    assert all(a["result"] is None for a in answers if "result" in a)
    for shape in SHAPES:
        # the request form is answered once at every depth: a result under its id where the
        # server decodes the frame, else one parse error (id null)
        deepest = max(d for d in DEPTHS if f"{shape}-{d}" in decoded)
        assert DEPTHS[-1] < deepest < DEPTHS[0], (shape, deepest)  # the limit was reached
        assert {f"{shape}-{d}" for d in DEPTHS if d <= deepest} <= decoded, shape
        assert not any(f"{shape}-{d}" in decoded for d in DEPTHS if d > deepest), shape
    # each form is the same nesting: one parse error per form for each depth past the limit
    undecoded = sum(1 for shape in SHAPES for d in DEPTHS if f"{shape}-{d}" not in decoded)
    assert codes[-32700] == len(FORMS) * undecoded, (codes, undecoded)
    assert len(answers) == codes[-32700] + len(decoded)
