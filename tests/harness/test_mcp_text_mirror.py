"""Every read-only tool, called with arguments generated from its own `inputSchema`, answers
as a strict MCP client expects (MCP6): the text block is the serialized `structuredContent`
(lists too: they are `{"items": [...]}` in both), a success validates against the tool's
`outputSchema`, and no note changes by a byte."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # (a dependency of mcp; no stubs)
import pytest

from harness.mcp import TOOLS
from harness.methods import Harness

from .test_mcp_protocol import rpc

WORDS = ("Alpha", "Beta", "Alpha.md", "Beta.md", "links", "x")
READ_ONLY = sorted(t["name"] for t in TOOLS if t["annotations"]["readOnlyHint"]
                   and not t["annotations"]["openWorldHint"])


def generate(schema: dict[str, Any], rng: random.Random) -> Any:
    """A value `schema` accepts (the subset the tool schemas use)."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        if schema.get("format") == "date":
            return f"2026-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}"
        return rng.choice(WORDS)
    if kind == "integer":
        low = schema.get("minimum", 0)
        return rng.randint(low, min(schema.get("maximum", low + 5), low + 5))
    if kind == "number":
        return schema.get("minimum", 0) + rng.random()
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "object":
        required = schema.get("required", [])
        return {k: generate(v, rng) for k, v in schema["properties"].items()
                if k != "session" and (k in required or rng.random() < 0.4)}
    return rng.choice(WORDS)


def notes(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.glob("*.md"))}


@pytest.mark.parametrize("name", READ_ONLY)
def test_read_only_tools_mirror_their_structured_content(harness: Harness, name: str) -> None:
    tool = next(t for t in TOOLS if t["name"] == name)
    jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
    jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
    before = notes(harness.vault.root)
    for seed in range(12):
        args = generate(tool["inputSchema"], random.Random(f"{name}-{seed}"))
        jsonschema.validate(args, tool["inputSchema"])
        result = rpc(harness, "tools/call", {"name": name, "arguments": args})["result"]
        structured = result["structuredContent"]
        assert json.loads(result["content"][0]["text"]) == structured, (name, args)
        if result.get("isError"):
            assert len(structured["error"]["message"]) > 10, (name, args)
        else:
            jsonschema.validate(structured, tool["outputSchema"])
    assert notes(harness.vault.root) == before
