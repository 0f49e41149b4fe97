"""Context compaction (SPEC 6): budget and trigger, cut and chunking, summary calls.

``trigger``, ``plan``, ``prompt`` and ``context`` are pure; ``compact`` does the I/O, only
through the Provider it is given. Import what you use from its module: the package
re-exports nothing.
"""
