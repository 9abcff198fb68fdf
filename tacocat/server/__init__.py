"""(to be built)"""
