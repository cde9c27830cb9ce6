"""`rmh serve` where there is no vault yet, or one it cannot open: answer the client, and say
what to do.

A client (Claude Desktop, Claude Code, ...) that starts `rmh serve` on a folder that is not
an rmh vault (or with no vault configured, or a broken rmh.toml) would otherwise see only a
server that disconnects. Here the server still speaks MCP: `initialize` succeeds (its
instructions say what is wrong), `tools/list` lists the usual tools, and every `tools/call`
is a tool error (isError, kind "not_a_vault") whose message names the fix (`rmh init PATH`
or `rmh setup CLIENT`), so the model can tell the user. Resources and prompts are empty
lists; every JSON-RPC vault method answers -32001 not_a_vault with the same message.

The same holds for a vault whose `.rmh/index.sqlite` or `.rmh/learned.sqlite` cannot be
opened (damaged, or written by a newer rmh): the kind is then index_unusable (-32010) or
ledger_error (-32012) and the fix says what to do with that file (`STATE_FIX`); for one whose
`.rmh` or state file is a symlink rmh refuses (path_refused, -32002: the fix comes with it,
commands/serve.py); and for one with an erasure that could not finish (erasure_pending,
-32019: the vault stays closed until it does, vault/erasure_steps.py), without the erased
names.
"""

from __future__ import annotations

from typing import Any

from rpc import AsyncMethod, RpcError, application_error

from .errors import tool_result
from .mcp import CAPABILITIES, TOOLS, discover, negotiate, server_info
from .methods import ping
from .operations import OPERATIONS


def fix_hint(vault: str | None) -> str:
    if vault is None:
        return ("start the server with --vault PATH (or set RMH_VAULT); `rmh setup CLIENT "
                "--vault PATH` writes the client's configuration")
    return (f"run `rmh init {vault}` (or `rmh setup CLIENT --vault {vault}`) in a terminal, "
            "then restart this MCP server")


STATE_FIX = {  # also the CLI's one line (cli.py `_failed`); a server adds "then restart"
    "index_unusable": "`.rmh/index.sqlite` holds only what rmh derives from the notes: delete "
                      "it (with its -wal and -shm files; rmh rebuilds it) or use the rmh that "
                      "wrote it",
    "ledger_error": "`.rmh/learned.sqlite` is the learning log: use the rmh that wrote it, or, "
                    "if it is damaged, move it aside (learning starts again; no note is "
                    "affected)",
}


def unready_methods(reason: str, vault: str | None, kind: str = "not_a_vault",
                    fix: str | None = None, *, restart: bool = True) -> dict[str, AsyncMethod]:
    """The method table of a server with no usable vault: `reason` says why; `kind` is the
    error every tool call and vault method answers (not_a_vault, a key of STATE_FIX, or
    erasure_pending with its own `fix`); without `restart` the server serves the vault by
    itself once the fix is made (an erasure pending: commands/serve.py `Reopen`)."""
    if fix is not None:
        fix = (f"{fix}; then restart this MCP server" if restart else
               f"{fix}; this server serves the vault again by itself once it is finished")
    elif kind in STATE_FIX:
        fix = f"{STATE_FIX[kind]}, then restart this MCP server"
    else:
        fix = fix_hint(vault)
    message = f"rmh has no vault to serve: {reason}. To fix: {fix}."
    data = {"reason": reason, "fix": fix, **({"vault": vault} if vault else {})}
    code = application_error(kind, {}).code

    async def initialize(protocolVersion: Any = None, capabilities: Any = None,
                         clientInfo: Any = None, _meta: Any = None) -> dict[str, Any]:
        return {"protocolVersion": negotiate(protocolVersion), "capabilities": CAPABILITIES,
                "serverInfo": server_info(),
                "instructions": f"{message} Until then every tool call fails with this "
                "message; tell the user."}

    async def nothing(**_ignored: Any) -> None:
        return None

    async def server_discover(**_ignored: Any) -> dict[str, Any]:
        return {**discover(), "instructions": f"{message} Until then every tool call fails "
                "with this message; tell the user."}

    async def tools_list(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        return {"tools": [dict(t) for t in TOOLS]}

    async def tools_call(name: Any = None, arguments: Any = None,
                         _meta: Any = None) -> dict[str, Any]:
        error = {"kind": kind, "message": message, "code": code, **data}
        return tool_result({"error": error}, is_error=True)

    async def empty(key: str, cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        return {key: []}

    async def resources(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        return await empty("resources")

    async def templates(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        return await empty("resourceTemplates")

    async def prompts(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        return await empty("prompts")

    async def refuse(*_args: Any, **_kwargs: Any) -> Any:
        err = application_error(kind, data)
        raise RpcError(err.code, message[:500], err.data)

    table: dict[str, AsyncMethod] = {op.rpc: refuse for op in OPERATIONS if op.rpc is not None}
    table.update({"ping": ping, "initialize": initialize, "server/discover": server_discover,
                  "notifications/initialized": nothing,
                  "tools/list": tools_list, "tools/call": tools_call,
                  "resources/list": resources, "resources/templates/list": templates,
                  "resources/read": refuse, "prompts/list": prompts, "prompts/get": refuse})
    return table
