"""The SQL front: sqlglot parses, Rewind plans and executes (ARCHITECTURE: sql/).

Layer: above ``storage``, ``audit`` (its data model), ``lifecycle`` (the system views,
pins), ``security`` and ``statement`` (the context every statement runs in); below
``connection``. ``needs`` says what a statement needs and ``authorize``s it,
``recording`` writes its audit rows, ``tables`` writes its Delta versions; nothing
under ``rewind`` but the front ends imports this package (tests/unit/test_import_layers.py
keeps it so).
"""
