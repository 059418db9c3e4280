"""Step 6: data-quality validation of what a lifecycle run produced (SPEC R29).

The expectations, checked with Great Expectations on the run's retention plan, its
storage metrics rows, the catalog's file states and the table directories:

1. every table the run's plan saw live has a metrics row (SPEC R33);
2. the four byte columns are never negative, and over the account they add up to the
   bytes stored, counted independently: distinct inodes in the table directories plus
   the fail-safe manifest's files that no table directory holds (SPEC R33, R24);
3. every effective retention in the plan is 0..90 days, 0..1 for transient objects
   (SPEC R5, R7);
4. no fail-safe row is 7 days or more past leaving time travel — step 4 purges
   those — nor entered fail-safe before its window ended (SPEC R12, R31);
5. no file that left time travel is still in its table directory (SPEC R12, R30, R31):
   files in table directories are LIVE or REMOVED. RETAINED files are no exception:
   the clone that still uses one holds its own link, a LIVE file of the clone.

In-between states it tolerates: files of commits made after the lifecycle read the
log (a statement committed after step 5, or one not yet catalogued) are left to the
next run, and statement staging directories are not table data. Journal states
(MOVING, PURGING) count as fail-safe: a completed run leaves none, and a run killed
mid-step is finished by the next one before this step runs again. A file in no file
state written less than 7 days ago is a write not committed yet (another engine's job
still running, a statement between its rename and its commit), as Delta's VACUUM
assumes: left out and counted as ``files_in_flight``. Older but written since the
table's last listing, it is a failed writer's leftover in a table that got no commit
since, which no run could have tracked: left out and counted as ``leftovers_unseen``,
its table in ``leftover_tables``, which the next run lists (:func:`facts.unseen_files`).
Older than the last listing, it is named: a leftover a run missed, or a file back from
fail-safe.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable

from rewind.constants import FAILSAFE_DAYS, MAX_RETENTION_DAYS, MAX_TRANSIENT_RETENTION_DAYS
from rewind.errors import RewindError
from rewind.lifecycle import rules
from rewind.lifecycle.context import Run
from rewind.lifecycle.metrics import BYTE_COLUMNS
from rewind.lifecycle.plan import plan_path, system_table_exists
from rewind.quality import facts
from rewind.quality.expectations import Check, evaluate, require
from rewind.storage import location
from rewind.storage.location import Root

RETENTION = "EFFECTIVE_RETENTION_DAYS"
STATS_PRECISION = timedelta(milliseconds=1)


def lifecycle_checks(found: facts.RunFacts) -> list[Check]:
    """The suite of one run, defined in code (the module docstring lists it)."""
    return [
        Check(
            "every live table has a metrics row",
            "SPEC R33",
            facts.LIVE_TABLES,
            "ExpectColumnValuesToBeInSet",
            {"column": "ID", "value_set": found.metric_ids},
            "missing: {rows}",
            show_value=False,
        ),
        *[
            Check(
                f"{column} is never negative",
                "SPEC R33",
                facts.METRICS,
                "ExpectColumnValuesToBeBetween",
                {"column": column, "min_value": 0},
                "negative: {rows}",
            )
            for column in BYTE_COLUMNS
        ],
        Check(
            "the byte columns add up to the stored bytes",
            "SPEC R33",
            facts.METRICS,
            "ExpectColumnSumToBeBetween",
            {
                "column": facts.COUNTED_BYTES,
                "min_value": found.stored_bytes,
                "max_value": found.stored_bytes,
            },
            "counted {observed} bytes, stored {min_value}",
        ),
        *[
            Check(
                f"effective retention of {kind} objects is 0..{most} days",
                "SPEC R5, R7",
                facts.PLAN,
                "ExpectColumnValuesToBeBetween",
                {
                    "column": RETENTION,
                    "min_value": 0,
                    "max_value": most,
                    "row_condition": f"IS_TRANSIENT == {transient}",
                    "condition_parser": "pandas",
                },
                "out of range: {rows}",
            )
            for kind, most, transient in (
                ("permanent", MAX_RETENTION_DAYS, False),
                ("transient", MAX_TRANSIENT_RETENTION_DAYS, True),
            )
        ],
        Check(
            f"no fail-safe row is older than {FAILSAFE_DAYS} days",
            "SPEC R12, R31",
            facts.FAIL_SAFE,
            "ExpectColumnValuesToBeBetween",
            {
                "column": "DAYS_IN_FAILSAFE",
                "min_value": 0,
                "max_value": FAILSAFE_DAYS,
                "strict_max": True,
            },
            "days since it left time travel: {rows}",
        ),
        Check(
            "no file still in a table has vanished from its directory",
            "SPEC R42",
            facts.VANISHED,
            "ExpectColumnValuesToBeInSet",
            {"column": "ON_DISK", "value_set": [True]},
            "vanished outside Rewind: {rows}",
            show_value=False,
        ),
        Check(
            "every external table's Delta retention properties cover its time travel",
            "SPEC R42",
            facts.GUARDS,
            "ExpectColumnValuesToBeInSet",
            {"column": "COVERED", "value_set": [True]},
            "lowered by another writer (ALTER TABLE ... SET DATA_RETENTION_TIME_IN_DAYS "
            "raises them again): {rows}",
            show_value=False,
        ),
        Check(
            "no expired file is left in a table directory",
            "SPEC R12, R30, R31",
            facts.TABLE_FILES,
            "ExpectColumnValuesToBeInSet",
            {"column": "STATE", "value_set": [rules.LIVE, rules.REMOVED]},
            "still there: {rows}",
        ),
    ]


def validate(run: Run) -> dict[str, Any]:
    """Step 6 of SPEC R29 for ``run``; returns the step's JSON summary.

    Reads the run's plan partition, its metrics rows (AS_OF = the run's ``now``), the
    catalog and the table directories; writes nothing.

    Raises:
        ValidationFailed: when an expectation fails; the message names each failed
            expectation and the objects it failed on.
        RewindError: LIFECYCLE_ORDER when the run wrote no retention plan.
    """
    start = time.perf_counter()
    found = facts.gather(run)
    summary = evaluate(lifecycle_checks(found), found.frames)
    summary.update(
        stored_bytes=found.stored_bytes,
        files_checked=len(found.frames[facts.TABLE_FILES]),
        files_unread=found.unread_files,
        files_in_flight=found.unseen.in_flight,
        leftovers_unseen=found.unseen.leftovers,
        leftover_tables=found.unseen.leftover_tables,
        elapsed_s=round(time.perf_counter() - start, 3),
    )
    return require(summary)


def run_at(system_root: Root, now: datetime) -> str:
    """The id of the latest lifecycle run made at ``now`` (from its plan partition).

    Raises:
        RewindError: LIFECYCLE_ORDER when no run was made at ``now``.
    """
    path = plan_path(system_root)
    runs = []
    if system_table_exists(path):
        plans = DeltaTable(str(path), storage_options=location.storage_options(path))
        files = pa.table(plans.get_add_actions(flatten=True))
        runs = [
            (row["modification_time"], row["partition.RUN_ID"])
            for row in files.select(
                ["partition.RUN_ID", "max.AS_OF", "modification_time"]
            ).to_pylist()
            # Delta statistics keep milliseconds (SPEC R15 clocks may have microseconds).
            if row["max.AS_OF"] is not None and abs(row["max.AS_OF"] - now) < STATS_PRECISION
        ]
    if not runs:
        raise RewindError(
            f"No lifecycle run at {now.isoformat()}: run the lifecycle first.",
            code="LIFECYCLE_ORDER",
        )
    return str(max(runs)[1])
