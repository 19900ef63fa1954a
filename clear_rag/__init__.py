"""clear-rag: retrieval you can watch, techniques with measured effects."""

__version__ = "0.1.0"
