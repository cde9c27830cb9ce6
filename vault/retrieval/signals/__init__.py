"""retrieval/signals"""
