"""Table data on disk: Delta tables through ``deltalake`` (ARCHITECTURE: Engines)."""
