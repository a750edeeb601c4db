"""Training: CPT -> SFT -> RL (GSPO) of language world models on the curated splits.

A library (no Dagster import). Imports go one way: sources <- quality <- bench <- training.
"""
