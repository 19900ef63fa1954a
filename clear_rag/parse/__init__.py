"""Parsers: bytes in, canonical text plus typed blocks with spans out."""

from clear_rag.parse.base import Parsed, Parser
from clear_rag.parse.registry import backends, file_type_of, get_parser, register

__all__ = ["Parsed", "Parser", "backends", "file_type_of", "get_parser", "register"]
