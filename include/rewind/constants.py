"""Names and numbers fixed by SPEC.md."""

from __future__ import annotations

ACCOUNT_DEFAULT_RETENTION_DAYS = 1  # SPEC R5
ACCOUNT_DEFAULT_MIN_RETENTION_DAYS = 0  # SPEC R7
MAX_RETENTION_DAYS = 90  # SPEC R5, R7
MAX_TRANSIENT_RETENTION_DAYS = 1  # SPEC R5
FAILSAFE_DAYS = 7  # SPEC R12
AUDIT_RETENTION_DAYS = 365  # SPEC R36: ACCESS_HISTORY and QUERY_HISTORY

# The lifecycle states of a data file (SPEC R12, R30, R31; ``FileState``), used by the
# lifecycle's rules and by the catalog, which counts what is in fail-safe (R44, R48).
LIVE = "LIVE"
REMOVED = "REMOVED"
MOVING = "MOVING"
FAILSAFE = "FAILSAFE"
PURGING = "PURGING"
DELETING = "DELETING"
RETAINED = "RETAINED"
# A file in these states has a copy in the fail-safe store, or is on its way in or out.
IN_FAILSAFE = (MOVING, FAILSAFE, PURGING)

DEFAULT_USER = "ADMIN"
# SPEC R37: the nightly lifecycle's own role (it runs the lifecycle, and holds nothing
# else) and the service user scheduled Airflow runs act as.
LIFECYCLE_ROLE = "REWIND_LIFECYCLE"
SERVICE_USER = "REWIND_SERVICE"
# SPEC R36: the user of what Rewind does by itself (a table dropped at its expiration).
SYSTEM_USER = "SYSTEM"
ACCOUNTADMIN = "ACCOUNTADMIN"
PUBLIC_ROLE = "PUBLIC"  # SPEC R37: every user holds it; its grants reach every role
PUBLIC_SCHEMA = "PUBLIC"  # SPEC R1

RETENTION_PARAM = "DATA_RETENTION_TIME_IN_DAYS"
MIN_RETENTION_PARAM = "MIN_DATA_RETENTION_TIME_IN_DAYS"
# BigQuery's table option ``expiration_timestamp`` as its dialect hands it on (a name no
# Snowflake statement can give: the option is BigQuery's alone).
EXPIRATION_OPTION = "__REWIND_EXPIRATION_TIMESTAMP"
# and a dataset's ``default_table_expiration_days``, the lifetime of the tables made in it
TABLE_EXPIRATION_OPTION = "__REWIND_DEFAULT_TABLE_EXPIRATION_DAYS"

DATABASE = "DATABASE"
# Every database's views of itself (rewind.sql.information_schema): no schema takes the name.
INFORMATION_SCHEMA = "INFORMATION_SCHEMA"
SCHEMA = "SCHEMA"
TABLE = "TABLE"

# Delta table properties that keep other writers from deleting history Rewind owns; the
# same days keep a team's VACUUM from the files a clone references (SPEC R42, R47).
KEEP_FOREVER_DAYS = 36500
DELTA_TABLE_CONFIG = {
    "delta.logRetentionDuration": f"interval {KEEP_FOREVER_DAYS} days",
    "delta.deletedFileRetentionDuration": f"interval {KEEP_FOREVER_DAYS} days",
    "delta.enableExpiredLogCleanup": "false",
}
COMMIT_QUERY_ID_KEY = "rewind.queryId"
COMMIT_TIME_KEY = "rewind.commitTime"
COMMIT_UNDO_KEY = "rewind.undo"  # takes back the same statement's earlier commit (R28)
COMMIT_ID_KEY = "rewind.commitId"  # one per commit: a statement may commit more than once
# The commit adds files earlier versions hold (a restore): taking it back deletes none (R28)
COMMIT_READDS_KEY = "rewind.readds"
