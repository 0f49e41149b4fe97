"""The full-screen frontend (SPEC 7): the only package that imports prompt_toolkit.

Importing this package does nothing; `minicode.cli.frontends.tui.app.run` builds and runs the
Application. The modules split state (controller), keys, layout and the pure
transcript view (view, items, tool, history, heights, text, draft, markdown).
"""
