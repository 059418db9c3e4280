"""Table data on disk: Delta tables through ``deltalake`` (ARCHITECTURE: Engines).

Layer: above ``catalog`` only; the Delta log reader (``log``), the version timeline
(``timeline``), column mapping (``columns``) and the table store (``delta``). What a SQL
statement writes to a table goes through ``rewind.sql.tables``.
"""
