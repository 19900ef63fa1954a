"""The store: documents, blocks, chunks (and later traces) in SQLite; indexes beside it."""

from clear_rag.store.reading import DocumentRecord
from clear_rag.store.schema import SCHEMA_VERSION
from clear_rag.store.snapshot import Snapshot
from clear_rag.store.sqlite import Store, StoreStats

__all__ = ["SCHEMA_VERSION", "DocumentRecord", "Snapshot", "Store", "StoreStats"]
