"""README and site tables rendered from result files, and the check that they were not typed."""
