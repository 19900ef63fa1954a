"""Result files (results/*.json): their one shape (``document``), the one writer (``files``), whether
a run reproduces a committed file (``reproduce``), and SQL views over them (``queries``, the one module
of the project importing duckdb).

Nothing is imported here so that ``import clear_rag.results`` does not pull in duckdb.
"""
