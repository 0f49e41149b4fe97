"""minicode.tools"""
