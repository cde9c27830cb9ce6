"""The extension points of rmh, in one literal table: where each kind of extension is
registered, as "module:attribute" (resolved only by who uses it; tests/harness/
test_extensions.py checks that every entry resolves).

- commands: a row of the command catalogue names the module whose `register(subparsers)`
  adds the command; a package outside harness registers its own (`rmh bench` and
  `rmh bench-ask` are bench's: bench/cli.py, bench/cli_ask.py), and harness never imports it;
- operations: a row of the operation table gives JSON-RPC, MCP, the REPL and, for the vault
  commands, the CLI (harness.commands.vault_commands);
- signals: the fused retrieval signals; tiers: the sandbox's isolation tiers; conversation
  formats: the transcript formats `ingest` reads.
"""

from __future__ import annotations

EXTENSION_POINTS: dict[str, str] = {
    "commands": "harness.commands.catalog:COMMANDS",
    "operations": "harness.operations:OPERATIONS",
    "signals": "vault.retrieval.signals.registry:REGISTRY",
    "tiers": "sandbox.registry:REGISTRY",
    "conversation formats": "vault:CONVERSATION_FORMATS",
}
