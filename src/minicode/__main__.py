"""`python -m minicode` entry point (the same as the `minicode` executable)."""

import sys

from minicode.entry import main

sys.exit(main())
