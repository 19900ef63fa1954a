"""The Dagster code location. ``definitions.py`` only wires; one module per asset group."""
