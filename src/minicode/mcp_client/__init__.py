"""MCP servers (issue 26) through the official SDK (``mcp``): configuration lives in ``config``,
this package connects (``link``, ``manager``; a remote server's OAuth sign-in: ``signin``),
offers the tools (``tools``) and shows them (``status``). Named ``mcp_client`` so it never
shadows the SDK's ``mcp``; nothing here is imported unless servers are configured (the SDK and
anyio cost ~0.3 s of start-up)."""
