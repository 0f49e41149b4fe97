"""Agent Skills (``SKILL.md`` folders): parsing, discovery, the catalog and the ``skill`` tool (docs/skills.md)."""
