"""MCP prompts: short recipes that teach an agent to use the vault (prompts/mcp_*.md).

`prompts/list` names each with its arguments; `prompts/get` fills one in (string.Template,
arguments as given; a missing required argument is -32602 naming it) and returns it as one
user message. The texts are package data, edited without touching code.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Template
from typing import Any

from prompts import load
from rpc import AsyncMethod, RpcError, invalid_params

from .mcp_resources import one_page

MAX_ARGUMENT = 10_000  # characters of one prompt argument


@dataclass(frozen=True)
class PromptArg:
    name: str
    description: str
    required: bool = True


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str
    description: str
    arguments: tuple[PromptArg, ...]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "description": self.description,
                "arguments": [{"name": a.name, "description": a.description,
                               "required": a.required} for a in self.arguments]}


PROMPTS: dict[str, Prompt] = {p.name: p for p in (
    Prompt("recall", "Recall from my notes",
           "Search the vault and answer from the notes, citing them.",
           (PromptArg("topic", "what to recall"),)),
    Prompt("remember", "Remember in my notes",
           "Save something in the vault: update a note that covers it, or write a linked one.",
           (PromptArg("content", "what to remember"),)),
    Prompt("review", "Review my notes",
           "Look over recent changes, tags and links; report what needs attention.",
           (PromptArg("folder", "only this folder", required=False),)),
)}


def render(name: str, arguments: dict[str, str]) -> str:
    """The prompt's text with its arguments filled in."""
    values = dict(arguments)
    if name == "review":
        folder = values.get("folder", "")
        values["scope"] = f" in {folder}" if folder else ""
    return Template(load(f"mcp_{name}")).safe_substitute(values)


def prompt_methods() -> dict[str, AsyncMethod]:
    """prompts/list and prompts/get."""

    async def prompts_list(cursor: Any = None, _meta: Any = None) -> dict[str, Any]:
        one_page(cursor)
        return {"prompts": [p.to_json() for p in PROMPTS.values()]}

    async def prompts_get(name: Any, arguments: Any = None, _meta: Any = None) -> dict[str, Any]:
        if not isinstance(name, str) or name not in PROMPTS:
            raise RpcError(-32602, f"Unknown prompt: {str(name)[:100]}", {"param": "name"})
        if arguments is not None and not isinstance(arguments, dict):
            raise invalid_params("arguments", "must be an object")
        given = arguments or {}
        prompt = PROMPTS[name]
        values: dict[str, str] = {}
        for arg in prompt.arguments:
            value = given.get(arg.name)
            if value is None:
                if arg.required:
                    raise invalid_params(arg.name, "required")
                continue
            if not isinstance(value, str) or len(value) > MAX_ARGUMENT:
                raise invalid_params(arg.name, f"must be a string of at most {MAX_ARGUMENT} "
                                     "characters")
            values[arg.name] = value
        text = render(name, values)
        return {"description": prompt.description,
                "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}

    return {"prompts/list": prompts_list, "prompts/get": prompts_get}
