"""minicode.telemetry"""
