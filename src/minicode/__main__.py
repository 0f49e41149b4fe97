"""`python -m minicode` entry point (the same as the `minicode` executable)."""

from minicode.entry import run

run()
