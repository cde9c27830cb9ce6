"""Suite-wide settings.

Under CI (`CI=true`, as `.ci/run` is started) hypothesis runs derandomized: the same examples on
every run, so a landing never depends on luck. Locally it explores with fresh random seeds,
which is how new edge cases get found (and then pinned as plain tests).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")
