"""An OpenAI-compatible endpoint's base URL and key as configured: how status shows them,
the URL the SDK is given, and why every call would fail before one is sent (status says that
reason, `llm.reason`, and each call raises it: harness/llm_provider.py)."""

from __future__ import annotations


def shown_endpoint(url: str) -> str:
    """`url` as status shows it (to the agent too): a password in it or a query, where keys
    go (`https://user:KEY@host/v1`, `?key=KEY`), spelt `***`."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError as exc:  # `http://[::1`: not shown at all, it may hold a key
        return f"(not a URL: {exc})"  # (a ValueError traceback from status and ask before)
    user, at, host = parts.netloc.rpartition("@")
    if at and ":" in user:
        user = user.split(":", 1)[0] + ":***"
    return urlunsplit((parts.scheme, user + at + host, parts.path,
                       "***" if parts.query else "", ""))


def endpoint_problem(url: str) -> str:
    """Why `url` cannot be a base URL ("" when it can): it must be http(s) with a host and a
    port above 0 (`localhost:11434/v1` reads as scheme "localhost")."""
    from urllib.parse import urlsplit

    try:
        base = urlsplit(url.strip())
        ok = base.scheme.lower() in ("http", "https") and bool(base.hostname) and (
            base.port is None or base.port > 0)
    except ValueError:  # `http://[::1`, a port of 99999
        ok = False
    return "" if ok else (f"base_url {shown_endpoint(url)!r} is no http(s) URL: write it as "
                          "http://HOST:PORT/v1")


def setup_problem(url: str, key: str) -> str:
    """Why every call to `url` with `key` fails before it is sent ("" when none can be
    named): status says it (`llm.reason`) and each call raises it (OpenAIProvider._open)."""
    from urllib.parse import urlsplit

    if any(not " " <= c < "\x7f" for c in key):  # else "cannot reach" (a line break) or
        return ("the API key ([llm] api_key or $OPENAI_API_KEY) holds a character an HTTP "
                "header cannot carry (a line break, a control or a non-ASCII one)")
    if problem := endpoint_problem(url):
        return problem
    if not key and (urlsplit(url.strip()).hostname or "").lower() == "api.openai.com":
        return ("api.openai.com needs an API key: set $OPENAI_API_KEY or [llm] api_key (or "
                "base_url, for a local server)")  # else a keyless 401, or "cannot reach"
    return ""


def base_url(url: str) -> str:
    """`url` as the SDK is given it: a pasted whole endpoint (…/v1/chat/completions) less
    the part the SDK appends itself."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        base = urlsplit(url.strip())
    except ValueError:  # `http://[::1`: no base URL (endpoint_problem says so)
        return url
    return urlunsplit(base._replace(path=base.path.rstrip("/").removesuffix("/chat/completions")))
