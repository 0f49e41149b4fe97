"""Test support shared by unit, end-to-end, UI tests and benchmarks."""
