"""The trace factory: real sandboxed collectors and a seeded scale generator."""
