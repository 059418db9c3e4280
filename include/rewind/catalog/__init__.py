"""The catalog: objects, ids, names, retention, drop history, statements, versions."""
