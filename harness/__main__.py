"""`python -m harness` is the same as the `rmh` command."""

import sys

from harness.entry import main

sys.exit(main())
