"""The SQL front: sqlglot parses, Rewind plans and executes (ARCHITECTURE: sql/)."""
