"""The audit trail's data (SPEC R36): what each statement read and wrote, shown as
Snowflake's ``REWIND.ACCOUNT_USAGE.ACCESS_HISTORY`` and ``QUERY_HISTORY`` views.

Layer: above ``catalog`` and ``security`` only. ``shape`` holds the rows' form, ``ddl``
the properties a DDL statement records, ``lineage`` the column lineage sqlglot finds,
``views`` shapes the rows for SELECT, ``cleanup`` removes what is older than 365 days
in the nightly lifecycle. A statement's rows are written by ``rewind.sql.recording``
(which resolves its names), and its QUERY_TYPE named by ``rewind.query_type``.
"""
