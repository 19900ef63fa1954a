"""The store: documents, blocks, chunks (and later traces) in SQLite; indexes beside it."""

from clear_rag.store.snapshot import Snapshot
from clear_rag.store.sqlite import SCHEMA_VERSION, DocumentRecord, Store, StoreStats

__all__ = ["SCHEMA_VERSION", "DocumentRecord", "Snapshot", "Store", "StoreStats"]
