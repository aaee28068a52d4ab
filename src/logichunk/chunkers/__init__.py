"""Chunkers: a signal + the shared boundary rules + recursion -> a chunk tree."""
