"""Chunkers: a document in, span-exact chunks out."""
