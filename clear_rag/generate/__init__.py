"""Answers from retrieved passages: query rewriting and expansion, HyDE, the cited answer."""
