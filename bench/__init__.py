"""Benchmarks: ratios measured side by side on this machine, written under results/bench/."""
