"""Indexes: BM25 keyword search and exact vector search, both persisted and updated in place."""
