"""minicode.session"""
