"""A loaded YAML key as a JSON object key (frontmatter.py and its loader, yaml_loader.py)."""

from __future__ import annotations

import json


def key_str(key: object) -> str:
    """A YAML key as a JSON object key: `true`/`false`/`null` for those scalars, else str()."""
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    return str(key)
