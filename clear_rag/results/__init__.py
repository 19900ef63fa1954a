"""Result files (results/*.json) as SQL views; ``queries`` is the one module of the project importing duckdb.

Nothing is imported here so that ``import clear_rag.results`` does not pull in duckdb.
"""
