"""Canonical trace schema, one reader per native format, catalog, ingest and the trace factory."""
