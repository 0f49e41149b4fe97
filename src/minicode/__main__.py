"""`python -m minicode` entry point."""

import sys

from minicode.cli import main

sys.exit(main())
