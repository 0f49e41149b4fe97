"""minicode.agent"""
