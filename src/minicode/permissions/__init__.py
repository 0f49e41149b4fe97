"""Permission rules: which side-effect calls run without asking, which never run.

``rules`` (the ``tool(pattern)`` syntax, strict ``[permissions]`` tables), ``patterns``
(command and path matchers), ``shell``/``shell_words`` (our own bash parser), ``wrappers``
and ``bash_check`` (every command a bash string runs), ``suggest`` (the rule "always allow"
offers), ``policy`` (the verdict for one call; pure but for ``realpath``), ``listing``
(rows for ``/permissions``) and ``store`` (the rules in effect and the workspace's rules
file). Knows nothing of tools, providers, sessions or terminals (tests/test_architecture.py).
Import what you use from its module: the package re-exports nothing.
"""
