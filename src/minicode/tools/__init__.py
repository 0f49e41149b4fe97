"""minicode.tools: the registry and the seven tools of SPEC 9 (read, ls, glob, grep, write, edit, bash) and todo.

Import what you use from its module (``tools.base``, ``tools.registry``, …): the package
re-exports nothing.
"""
