"""The audit trail (SPEC R36): what each statement read and wrote, shown as Snowflake's
``REWIND.ACCOUNT_USAGE.ACCESS_HISTORY`` and ``QUERY_HISTORY`` views.

``recording`` captures it while a statement runs (with the column ``lineage`` sqlglot
finds and the ``ddl`` properties), ``views`` shapes it for SELECT, ``cleanup`` removes
what is older than 365 days in the nightly lifecycle.
"""
