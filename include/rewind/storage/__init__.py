"""Table data on disk: Delta tables through ``deltalake`` (ARCHITECTURE: Engines).

Layer: above ``catalog`` only; the Delta log reader (``log``), the version timeline
(``timeline``), column mapping (``columns``), what a version holds (``snapshot``) and
the table store (``delta``, which commits). What a SQL
statement writes to a table goes through ``rewind.sql.tables``.
"""
