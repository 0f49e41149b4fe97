"""minicode.agent: the agent loop, its events, approvals, statistics and model context.

Import the submodules directly (``minicode.agent.loop``, ``.events``, ``.approval``...);
this package module imports nothing so that importing one part stays cheap.
"""
