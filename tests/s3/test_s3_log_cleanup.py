"""The nightly clean-up of a Rewind table's Delta log on S3 (issue 28 item 4; SPEC R32, R43,
R44, R50; rewind/lifecycle/logs.py), on a real S3 server (SeaweedFS), counted in requests:
the night it is due, one LIST of the table's ``_delta_log`` and one DeleteObjects; a night
with nothing due, none. delta-rs and Rewind read the table from its checkpoint on.
The rules of what stays (time travel, fail-safe, pins, external tables), on local disk:
tests/spark/test_log_cleanup.py.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from test_s3_external import options, rows
from test_s3_lifecycle import requests, step
from test_s3_warehouse import START, at, ids_of, s3_home

from rewind.storage import location, log

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3_lifecycle")]


def night(home: Path, lake: Any, run_id: str, days: float) -> tuple[dict[str, Any], Counter[str]]:
    """A night ``days`` after the scenario's start, its steps in this process (nothing
    to move: no Spark job): the purge step's summary and the requests it made."""
    now = START + timedelta(days=days)
    for name in ("effective_retention", "expire_versions"):
        step(home, name, run_id, now)
    counted = requests(lake)
    purge = step(home, "purge_failsafe", run_id, now)
    return purge, requests(lake) - counted


def test_a_table_log_on_s3_is_cleaned_up_with_one_list_and_one_batch_delete_r32_r50(
    lake: Any, connect: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s3_home(lake, monkeypatch)
    conn = connect(now=at(0))
    conn.sql("CREATE DATABASE D; USE DATABASE D; CREATE TABLE P (ID INT)")
    conn.sql("; ".join(f"INSERT INTO P VALUES ({n})" for n in range(1, 12)))  # versions 1..11
    (table_id,) = ids_of(home, "P")
    uri = f"s3://{lake.name}/warehouse/{table_id}"
    names = set(location.names(location.of(uri) / log.LOG))
    old = {n for n in names if n[:20].isdigit() and int(n[:20]) < 10}
    assert len(old) == 10 and "00000000000000000010.checkpoint.parquet" in names

    purge, idle = night(home, lake, "first", 1)
    assert purge["log_entries_removed"] == 0  # all in time travel
    purge, made = night(home, lake, "due", 9)  # past its 1 day and 7 of fail-safe
    assert (purge["tables_log_cleaned"], purge["log_entries_removed"]) == (1, 10)
    assert set(location.names(location.of(uri) / log.LOG)) == names - old
    assert made["LIST"] == idle["LIST"] + 1, (made, idle)  # the table's _delta_log, once
    assert made["DELETE"] == idle["DELETE"] + 1 == 1, (made, idle)  # one DeleteObjects

    purge, made = night(home, lake, "next", 10)
    assert purge["log_entries_removed"] == 0
    assert made == idle, (made, idle)  # nothing due: not a request more than a first night

    assert rows(connect(now=at(60 * 24 * 10)), "SELECT COUNT(*) FROM D.PUBLIC.P") == [(11,)]
    assert len(DeltaTable(uri, version=10, storage_options=options()).file_uris()) == 10
    with pytest.raises(Exception, match=r"(?i)version|log|checkpoint|not found"):
        DeltaTable(uri, version=9, storage_options=options())
