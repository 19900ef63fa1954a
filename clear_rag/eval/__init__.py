"""Evaluation: metrics, datasets with relevance labels, and the runs that write results/."""
