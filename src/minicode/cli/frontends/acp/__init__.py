"""minicode as an Agent Client Protocol agent (`minicode --acp`, docs/acp.md): the only importer of the ACP SDK."""
