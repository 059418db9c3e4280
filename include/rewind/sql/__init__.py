"""The SQL front: sqlglot parses, Rewind plans and executes (ARCHITECTURE: sql/).

Layer: above ``storage``, ``audit`` (its data model), ``lifecycle`` (the system views,
pins), ``security`` and ``statement`` (the context every statement runs in); below
``connection``. One statement goes ``parse`` (with ``flatten``) → ``functions.inline``
→ ``analysis`` (the tables it reads, resolved once) → ``needs.authorize`` and
``recording`` (its audit rows), both from that analysis → the handler (``ddl``,
``alter``, ``dml``, ``merge``, ``query``, ``show``, ``grants``, ``functions``), which
writes Delta versions through ``tables`` and reads them through ``query`` (Spark SQL from
``spark_sql``, points from ``points``). Nothing
under ``rewind`` but the front ends imports this package (tests/unit/test_import_layers.py
keeps it so).
"""
