"""minicode.provider"""
