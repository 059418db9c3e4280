"""The SQL front: sqlglot parses, Rewind plans and executes (ARCHITECTURE: sql/).

Layer: above ``storage``, ``audit`` (its data model), ``lifecycle`` (the system views,
pins), ``security`` and ``statement`` (the context every statement runs in, and the
:class:`~rewind.statement.Analysis` value); below ``connection``. One statement goes
``parse`` (with ``flatten`` and ``generator``) → ``execute.prepare``: ``functions.inline``, then
``analysis.analyse`` (every name resolved once: what it reads, writes, creates, drops
and alters) → ``needs.authorize`` (privileges from the analysis alone) →
``recording.StatementAudit`` (its audit rows, keyed from the analysis) around the
handler (``ddl``, ``alter``, ``dml``, ``merge``, ``query``, ``show``, ``grants``,
``functions``), which binds each table reference to the analysis's resolution
(``query.referenced``), writes Delta versions through ``tables`` and reads them through
``query`` (Spark SQL from ``spark_sql``, points from ``points``). Nothing under
``rewind`` but the front ends imports this package (tests/unit/test_import_layers.py
keeps it so).
"""
