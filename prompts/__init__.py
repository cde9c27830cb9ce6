"""Prompt templates as data: `prompts/NAME.md`, loaded by name.

Templates use `string.Template` placeholders (`$slice`, `$question`, ...). They are package
data (pyproject.toml ships `prompts/*.md`), read through importlib.resources so they work from
a checkout, a wheel or a zip.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_NAME = re.compile(r"[a-z][a-z0-9_]*")


class PromptNotFound(LookupError):
    """No template of that name ships with rmh."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no prompt template named {name!r}")
        self.name = name


@cache
def load(name: str) -> str:
    """The text of template `name` (`prompts/<name>.md`); PromptNotFound if there is none.

    Names are lowercase identifiers, so a name can never walk out of the package.
    """
    if not _NAME.fullmatch(name):
        raise PromptNotFound(name)
    resource = resources.files(__name__).joinpath(f"{name}.md")
    if not resource.is_file():
        raise PromptNotFound(name)
    return resource.read_text(encoding="utf-8")
