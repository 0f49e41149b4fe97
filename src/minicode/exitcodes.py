"""The process exit codes of SPEC 1, named once."""

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_FAILURE = 1  # API error, max turns, timeout, a tool/internal error that stopped the task
EXIT_USAGE = 2  # bad flag, bad configuration, unknown session id
EXIT_INTERRUPTED = 130  # interrupted by the user (Ctrl+C, SIGTERM)
