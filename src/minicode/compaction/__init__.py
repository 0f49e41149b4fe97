"""minicode.compaction"""
