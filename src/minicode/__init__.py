"""minicode: a terminal coding agent. Importing this package does nothing but set the version."""

__version__ = "0.1.0"
