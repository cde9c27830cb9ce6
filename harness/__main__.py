"""`python -m harness` is the same as the `rmh` command."""

import sys

from harness.cli import main

sys.exit(main())
