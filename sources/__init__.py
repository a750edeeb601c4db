"""Canonical trace schema (schema.py), catalog, ingest (ingest.py: walk, read, write the three
tables), the storage base (storage.py), the plug-in registry (registry.py), one reader per native
format on one reader base (readers/) and the trace factory (factory/)."""
