"""The log of recovered intents that left files (storage/intents.py `Journal.report`):
`.rmh/intents-left.json`, the latest `LEFT_KEPT` outcomes, so that a recovery made by any
command (`rmh read`, an `rmh serve` taking the lock) is shown by the next doctor, not only by
a doctor that made it itself."""

from __future__ import annotations

import json
import os
from typing import Any

from .fileops import create_temp, open_regular
from .store import Store

LEFT_NAME = "intents-left.json"  # in the held `.rmh/` (Store.state)
LEFT_KEPT = 50  # outcomes that log keeps, the latest


def keep_left(store: Store, folder: str, outcomes: list[dict[str, Any]]) -> None:
    """Add `outcomes` to the log (its temporary in the intents `folder`: a leftover there is
    removed as an intent's)."""
    log = os.path.join(store.state, LEFT_NAME)
    tmp = os.path.join(folder, ".left.json.tmp")
    with create_temp(tmp) as fh:
        kept = read_left(store)  # a run again after a kill: the same outcome once
        doc = [*kept, *(o for o in outcomes if o not in kept)][-LEFT_KEPT:]
        fh.write(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
    store.count_op()
    os.replace(tmp, log)
    store.count_op()


def read_left(store: Store) -> list[dict[str, Any]]:
    """The outcomes in the log ([] when there is none, or it cannot be read)."""
    try:
        with open_regular(os.path.join(store.state, LEFT_NAME)) as fh:
            doc = json.loads(fh.read())
    except (OSError, ValueError, RecursionError):
        return []
    return [o for o in doc if isinstance(o, dict)] if isinstance(doc, list) else []
