"""Dagster layer: wires the plain libraries (sources, quality, training, bench) to storage."""
