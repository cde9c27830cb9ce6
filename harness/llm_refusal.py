"""Which request parameter an HTTP 400/422 from a chat-completions endpoint refuses.

OpenAI's reasoning models refuse `max_tokens` (they take `max_completion_tokens`) and any
`temperature` but the default; other servers refuse names they do not know. The provider
(harness/llm_provider.py) sends the other name, or none, when `refused_param` names one.

Read from the answer's structured fields first, as servers write them:

- OpenAI, Azure OpenAI, LiteLLM: the error object's `code` (REFUSAL_CODES: "unsupported_parameter",
  "unsupported_value", "unknown_parameter") and `param` (the parameter's name);
- FastAPI/pydantic servers (422): `detail` items of `type` "extra_forbidden" whose `loc` ends
  in the name.

An error with a textual `code` that is no refusal ("invalid_value": a value too large;
"context_length_exceeded") refuses nothing, whatever its message says: the cap is never
dropped for a server that only found it too large. Only an answer without such a code (none,
or vLLM's HTTP status as a number) is read by its English wording (WORDING), the parameter
named by `param` or in the message. LLMPLUG (session 28) read the wording only: a refusal
worded in another language failed every call; "not supported" about a value too large made
the provider rename the cap and then drop it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

ADAPTABLE = ("max_tokens", "max_completion_tokens", "temperature")  # what the provider adapts
REFUSAL_CODES = frozenset({"unsupported_parameter", "unsupported_value", "unknown_parameter",
                           "extra_forbidden"})
WORDING = re.compile(r"unsupported|not supported|unrecognized|unknown|extra|not permitted|"
                     r"forbidden|does not support|not allowed|only the default", re.I)


def refused_param(body: object, message: str, sent: Mapping[str, Any]) -> str:
    """The parameter of `sent` (one of ADAPTABLE) that an error answer refuses, or "".
    `body` is the error object the client decoded (the body's "error" member, else the whole
    body), `message` its text."""
    fields = body if isinstance(body, Mapping) else {}
    code, param = fields.get("code"), fields.get("param")
    detail = fields.get("detail")
    for item in detail if isinstance(detail, list) else ():  # pydantic: {"type", "loc"}
        loc = item.get("loc") if isinstance(item, Mapping) else None
        if (isinstance(loc, list) and loc and item.get("type") in REFUSAL_CODES
                and loc[-1] in ADAPTABLE and loc[-1] in sent):
            return str(loc[-1])
    if isinstance(code, str) and code.strip() and not code.strip().isdigit():
        if code not in REFUSAL_CODES:  # a structured answer that refuses nothing
            return ""
    elif not WORDING.search(message):
        return ""
    if isinstance(param, str) and param:  # the field names it (or names another one)
        return param if param in ADAPTABLE and param in sent else ""
    return _named(message, sent)


def _named(message: str, sent: Mapping[str, Any]) -> str:
    """The first of ADAPTABLE that `sent` holds and `message` names ("Use
    'max_completion_tokens' instead" names the other, not the refused one)."""
    message = message.split("max_completion_tokens' instead")[0]
    return next((n for n in ADAPTABLE if n in sent and re.search(rf"\b{n}\b", message)), "")
