"""BigQuery's table snapshots and table expiration (SPEC R10, R12, R24, R27; the seeds'
BigQuery page: "use table snapshots", "restore a table that expired").

A snapshot is a zero-copy clone of a point that no statement changes; a table past its
``expiration_timestamp`` is dropped as of that instant and spends its time travel, then
its fail-safe week, from then on.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from test_dml import catalog, table_root

from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.dashboard import load_dashboard
from rewind.errors import RewindError
from rewind.runner import run_lifecycle

pytestmark = pytest.mark.spark

T0 = "2026-05-01T00:00:00+00:00"


def at(n: float) -> str:
    """T0 plus ``n`` hours, ISO 8601."""
    return (parse_timestamp(T0) + timedelta(hours=n)).isoformat()


def bq(conn: Any, sql: str) -> list[list[Any]]:
    return conn.sql(sql, dialect="bigquery")[-1].rows


def code_of(conn: Any, sql: str, dialect: str = "bigquery") -> str:
    with pytest.raises(RewindError) as error:
        conn.sql(sql, dialect=dialect)
    return error.value.code


def delta_log(home: Path, name: str) -> list[str]:
    return sorted(p.name for p in (table_root(home, name) / "_delta_log").iterdir())


@pytest.fixture
def dataset(connect: Any) -> Any:
    """Project P, dataset P.DS (BigQuery's default window: 168 hours)."""
    conn = connect(now=T0)
    conn.sql("CREATE DATABASE P")
    bq(conn, "CREATE SCHEMA P.DS")
    return connect


def test_a_snapshot_keeps_its_instant_read_only_and_a_clone_restores_it_r24_r27(
    dataset: Any, home: Path
) -> None:
    """SPEC R27 (and R24's zero copy): ``CREATE SNAPSHOT TABLE ... FOR SYSTEM_TIME AS OF``
    keeps the rows of that instant, sharing the source's files; every statement that would
    change its rows, columns or place fails with READ_ONLY_TABLE and changes nothing (it
    was refused as a whole before: UNSUPPORTED); its options change; ``CREATE TABLE ...
    CLONE`` of it is a writable table; ``DROP SNAPSHOT TABLE`` drops only snapshots."""
    bq(
        dataset(now=T0),
        "CREATE TABLE P.DS.T (ID INT64, NAME STRING); INSERT INTO P.DS.T VALUES (1, 'a'), (2, 'b')",
    )
    conn = dataset(now=at(2))
    bq(conn, "DELETE FROM P.DS.T WHERE ID = 1")
    bq(
        conn,
        "CREATE SNAPSHOT TABLE P.DS.SNAP CLONE P.DS.T FOR SYSTEM_TIME AS OF "
        "TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR) OPTIONS (description = 'x')",
    )
    assert bq(conn, "SELECT ID, NAME FROM P.DS.SNAP ORDER BY ID") == [[1, "a"], [2, "b"]]
    files = [p for p in table_root(home, "SNAP").iterdir() if p.suffix == ".parquet"]
    assert files and {p.stat().st_nlink for p in files} == {2}  # T's, linked: no byte copied
    logged = delta_log(home, "SNAP")
    refused = [
        "INSERT INTO P.DS.SNAP VALUES (3, 'c')",
        "UPDATE P.DS.SNAP SET NAME = 'z' WHERE TRUE",
        "DELETE FROM P.DS.SNAP WHERE ID = 1",
        "MERGE P.DS.SNAP s USING P.DS.T t ON s.ID = t.ID WHEN MATCHED THEN DELETE",
        "TRUNCATE TABLE P.DS.SNAP",
        "ALTER TABLE P.DS.SNAP ADD COLUMN X INT64",
        "ALTER TABLE P.DS.SNAP RENAME TO SNAP2",
        "ALTER TABLE P.DS.SNAP DROP COLUMN NAME",
    ]
    for sql in refused:
        assert code_of(conn, sql) == "READ_ONLY_TABLE", sql
    for sql in (
        "INSERT OVERWRITE INTO P.DS.SNAP SELECT * FROM P.DS.T",
        "ALTER TABLE P.DS.T SWAP WITH P.DS.SNAP",
        "ALTER TABLE P.DS.SNAP RENAME COLUMN NAME TO N",
        "COMMENT ON COLUMN P.DS.SNAP.NAME IS 'n'",
    ):
        assert code_of(conn, sql, "snowflake") == "READ_ONLY_TABLE", sql
    with pytest.raises(RewindError) as error:
        conn.restore("P.DS.SNAP", at=at(0.5))
    assert error.value.code == "READ_ONLY_TABLE"
    assert "read-only" in error.value.message
    assert delta_log(home, "SNAP") == logged
    assert bq(conn, "SELECT ID, NAME FROM P.DS.SNAP ORDER BY ID") == [[1, "a"], [2, "b"]]
    assert bq(conn, "SELECT ID FROM P.DS.T") == [[2]]  # nor did the SWAP touch T
    # Its options, retention and grants change (metadata only, as BigQuery's).
    bq(conn, "ALTER TABLE P.DS.SNAP SET OPTIONS (description = 'before the delete')")
    conn.sql("ALTER TABLE P.DS.SNAP SET DATA_RETENTION_TIME_IN_DAYS = 3")
    conn.sql("GRANT SELECT ON TABLE P.DS.SNAP TO ROLE PUBLIC")
    shown = conn.sql("SHOW TABLES LIKE 'SNAP' IN P.DS")[0]
    assert (shown.column("comment"), shown.column("retention_time")) == (
        ["before the delete"],
        [3],
    )
    assert bq(
        conn,
        "SELECT table_type, is_insertable_into, base_table_catalog, base_table_schema, "
        "base_table_name, snapshot_time_ms FROM P.DS.INFORMATION_SCHEMA.TABLES "
        "WHERE table_name = 'SNAP'",
    ) == [["SNAPSHOT", "NO", "P", "DS", "T", parse_timestamp(at(1))]]
    # BigQuery's restore of a snapshot: a clone of it, writable.
    bq(conn, "CREATE TABLE P.DS.BACK CLONE P.DS.SNAP; INSERT INTO P.DS.BACK VALUES (3, 'c')")
    assert bq(conn, "SELECT ID FROM P.DS.BACK ORDER BY ID") == [[1], [2], [3]]
    # DROP SNAPSHOT TABLE drops a snapshot, never a table.
    assert code_of(conn, "DROP SNAPSHOT TABLE P.DS.T") == "OBJECT_NOT_FOUND"
    bq(conn, "DROP SNAPSHOT TABLE IF EXISTS P.DS.BACK")
    assert bq(conn, "SELECT count(*) FROM P.DS.T") == [[1]]
    assert bq(conn, "SELECT count(*) FROM P.DS.BACK") == [[3]]
    bq(conn, "DROP SNAPSHOT TABLE P.DS.SNAP")
    dropped = conn.sql("SHOW TABLES HISTORY LIKE 'SNAP' IN P.DS")[0]
    assert dropped.column("dropped_on") == [parse_timestamp(at(2))]


def test_a_table_past_its_expiration_is_dropped_then_and_restorable_in_its_window_r10_r12_r27(
    dataset: Any, home: Path
) -> None:
    """SPEC R27 with R10 and R12: ``OPTIONS (expiration_timestamp = ...)`` drops the table
    as of that instant — no statement after it sees the table, a point before it reads and
    clones it, its name is free — and the lifecycle moves its files into fail-safe when
    the dataset's window after that instant ends, with no statement in between (refused
    before: "Unsupported parameter"). An expiration not in the future is refused (it would
    drop the table as of a past time, its time travel spent); NULL removes one; UNDROP
    brings an expired table back for good."""
    conn = dataset(now=T0)
    in_two_hours = "TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 2 HOUR)"
    for name in ("E", "G", "KEEP"):
        bq(
            conn,
            f"CREATE TABLE P.DS.{name} (A INT64) OPTIONS (expiration_timestamp = {in_two_hours})"
            f"; INSERT INTO P.DS.{name} VALUES (42)",
        )
    bq(
        conn,
        f"CREATE TABLE P.DS.F (A INT64) OPTIONS (expiration_timestamp = '{at(4)}'); "
        "INSERT INTO P.DS.F VALUES (7)",
    )
    bq(conn, "ALTER TABLE P.DS.KEEP SET OPTIONS (expiration_timestamp = NULL)")
    past = "TIMESTAMP '2020-01-01 00:00:00 UTC'"
    for sql in (
        f"CREATE TABLE P.DS.PAST (A INT64) OPTIONS (expiration_timestamp = {past})",
        f"ALTER TABLE P.DS.E SET OPTIONS (expiration_timestamp = {past})",
        "CREATE TABLE P.DS.NOW (A INT64) OPTIONS (expiration_timestamp = CURRENT_TIMESTAMP())",
    ):
        assert code_of(conn, sql) == "INVALID_VALUE", sql
    live = "SELECT name, expires_on FROM objects WHERE kind = 'TABLE' AND dropped_on IS NULL"
    assert sorted(catalog(home, live)) == [
        ("E", "2026-05-01 02:00:00.000000"),
        ("F", "2026-05-01 04:00:00.000000"),
        ("G", "2026-05-01 02:00:00.000000"),
        ("KEEP", None),
    ]
    assert bq(dataset(now=at(1)), "SELECT A FROM P.DS.E") == [[42]]
    # The page before any statement has dropped them in the catalog: E and G, expired at
    # 2:00, are dropped tables UNDROP restores (the page showed no drop, they looked live)
    board = load_dashboard(Config.load(home=home), parse_timestamp(at(3)), "ADMIN")
    shown = {d.name: (d.dropped_on, d.undrop_until) for d in board.dropped}
    window = (parse_timestamp(at(2)), parse_timestamp(at(2)) + timedelta(days=7))
    assert shown == {"P.DS.E": window, "P.DS.G": window}

    later = dataset(now=at(3))
    assert code_of(later, "SELECT A FROM P.DS.E") == "OBJECT_NOT_FOUND"
    assert bq(later, "SELECT A FROM P.DS.KEEP") == [[42]]
    history = later.sql("SHOW TABLES HISTORY LIKE 'E' IN P.DS")[0]
    assert history.column("dropped_on") == [parse_timestamp(at(2))]
    # Each expiration's drop is in the log, of the SYSTEM user, at its instant (R36).
    dropped_by = later.sql(
        "SELECT a.object_modified_by_ddl:objectName::string, "
        "a.object_modified_by_ddl:operationType::string, q.user_name, q.start_time, "
        "q.query_type, q.query_tag, q.execution_status "
        "FROM REWIND.ACCOUNT_USAGE.ACCESS_HISTORY a JOIN REWIND.ACCOUNT_USAGE.QUERY_HISTORY q "
        "ON a.query_id = q.query_id WHERE q.user_name = 'SYSTEM' ORDER BY 1"
    )[-1].rows
    expired = ["DROP", "SYSTEM", parse_timestamp(at(2)), "DROP", "expiration_timestamp"]
    assert dropped_by == [[f"P.DS.{name}", *expired, "SUCCESS"] for name in ("E", "G")]
    assert bq(later, "SELECT table_name FROM P.DS.INFORMATION_SCHEMA.TABLES ORDER BY 1") == [
        ["F"],
        ["KEEP"],
    ]
    bq(later, f"CREATE TABLE P.DS.E_BACK CLONE P.DS.E FOR SYSTEM_TIME AS OF '{at(1)}'")
    assert bq(later, "SELECT A FROM P.DS.E_BACK") == [[42]]
    bq(later, "CREATE TABLE P.DS.E (B STRING)")  # the name is free again
    later.sql("UNDROP TABLE P.DS.G")
    assert bq(dataset(now=at(5)), "SELECT A FROM P.DS.G") == [[42]]  # expired no more

    # F expires at +4 h, with no statement after it: the lifecycle's first step drops it
    # then, and its week of time travel (168 hours) ends at +4 h + 7 days.
    ((f_id,),) = catalog(home, "SELECT id FROM objects WHERE name = 'F'")
    config = Config.load(home=home)
    run_lifecycle(config, parse_timestamp(at(4 + 168 - 1)))
    assert catalog(home, "SELECT dropped_on FROM objects WHERE id = ?", f_id) == [
        ("2026-05-01 04:00:00.000000",)
    ]
    assert catalog(
        home,
        "SELECT s.user_name, s.start_time, s.text FROM statements s JOIN statement_objects o "
        "ON o.query_id = s.query_id WHERE o.object_id = ? AND o.operation = 'DROP'",
        f_id,
    ) == [
        (
            "SYSTEM",
            "2026-05-01 04:00:00.000000",
            "-- expiration_timestamp 2026-05-01T04:00:00+00:00 passed\nDROP TABLE P.DS.F",
        )
    ]
    held = "SELECT DISTINCT state FROM file_states WHERE table_id = ?"
    assert catalog(home, held, f_id) == [("LIVE",)]  # the dropped table's: time travel
    run_lifecycle(config, parse_timestamp(at(4 + 168 + 1)))
    assert catalog(home, held, f_id) == [("FAILSAFE",)]


def test_a_snapshot_of_a_deleted_table_outlives_its_window_and_fail_safe_r12_r27(
    dataset: Any, home: Path
) -> None:
    """The seed's BigQuery page: "if you reduce the time travel window duration, delete a
    table, and then realize that you need a longer period of recoverability, ... create a
    snapshot of the table from a point in time prior to the table deletion". The deleted
    table's window (48 hours) and fail-safe week pass and are purged; the snapshot still
    reads every row, its files kept for it (SPEC R12, R24, R27, R30)."""
    conn = dataset(now=T0)
    bq(
        conn,
        "ALTER SCHEMA P.DS SET OPTIONS (max_time_travel_hours = 48); "
        "CREATE TABLE P.DS.T (ID INT64); INSERT INTO P.DS.T VALUES (1), (2), (3)",
    )
    bq(dataset(now=at(1)), "DROP TABLE P.DS.T")
    bq(
        dataset(now=at(2)),
        "CREATE SNAPSHOT TABLE P.DS.KEEP CLONE P.DS.T FOR SYSTEM_TIME AS OF "
        "TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 90 MINUTE)",
    )
    config = Config.load(home=home)
    run_lifecycle(config, parse_timestamp(at(1 + 48 + 1)))  # T's window ends: fail-safe
    run_lifecycle(config, parse_timestamp(at(1 + 48 + 168 + 1)))  # and its week: purged
    late = dataset(now=at(1 + 48 + 168 + 2))
    assert code_of(late, f"SELECT * FROM P.DS.T FOR SYSTEM_TIME AS OF '{at(0.5)}'") == (
        "TIME_TRAVEL_UNAVAILABLE"
    )
    assert bq(late, "SELECT ID FROM P.DS.KEEP ORDER BY ID") == [[1], [2], [3]]


def test_a_datasets_default_table_lifetime_expires_each_table_made_in_it_after_r27(
    dataset: Any, home: Path
) -> None:
    """BigQuery's dataset option ``default_table_expiration_days`` (refused before): each
    table created in the dataset afterwards — by CREATE, a clone, a snapshot — expires that
    many days after its creation unless it names its own expiration; changing the option
    changes no existing table's."""
    conn = dataset(now=T0)
    bq(
        conn,
        "CREATE SCHEMA P.SHORT OPTIONS (default_table_expiration_days = 0.5, "
        "description = 'half a day')",
    )
    bq(conn, "CREATE TABLE P.SHORT.A (X INT64); INSERT INTO P.SHORT.A VALUES (1)")
    bq(conn, "CREATE TABLE P.SHORT.OWN (X INT64) OPTIONS (expiration_timestamp = NULL)")
    bq(conn, "CREATE SNAPSHOT TABLE P.SHORT.S CLONE P.SHORT.A")
    # BigQuery's option views show what is set (they were unknown views, OBJECT_NOT_FOUND).
    assert bq(conn, "SELECT * FROM P.INFORMATION_SCHEMA.SCHEMATA_OPTIONS ORDER BY 2, 3") == [
        ["P", "DS", "max_time_travel_hours", "INT64", "168"],
        ["P", "SHORT", "default_table_expiration_days", "FLOAT64", "0.5"],
        ["P", "SHORT", "description", "STRING", '"half a day"'],
        ["P", "SHORT", "max_time_travel_hours", "INT64", "168"],
    ]
    assert bq(conn, "SELECT * FROM P.SHORT.INFORMATION_SCHEMA.TABLE_OPTIONS ORDER BY 3") == [
        [
            "P",
            "SHORT",
            name,
            "expiration_timestamp",
            "TIMESTAMP",
            'TIMESTAMP "2026-05-01T12:00:00.000Z"',
        ]
        for name in ("A", "S")
    ]
    assert bq(conn, "SELECT * FROM P.SHORT.INFORMATION_SCHEMA.TABLE_SNAPSHOTS") == [
        ["P", "SHORT", "S", "P", "SHORT", "A", parse_timestamp(T0)]
    ]
    bq(
        dataset(now=at(1)),
        "ALTER SCHEMA P.SHORT SET OPTIONS (default_table_expiration_days = NULL, "
        "description = 'kept')",
    )
    bq(dataset(now=at(1)), "CREATE TABLE P.SHORT.LATER CLONE P.SHORT.A")
    expiring = "SELECT name, expires_on FROM objects WHERE kind = 'TABLE' ORDER BY name"
    assert catalog(home, expiring) == [
        ("A", "2026-05-01 12:00:00.000000"),
        ("LATER", None),
        ("OWN", None),
        ("S", "2026-05-01 12:00:00.000000"),
    ]
    noon = dataset(now=at(12))
    assert bq(noon, "SELECT table_name FROM P.SHORT.INFORMATION_SCHEMA.TABLES ORDER BY 1") == [
        ["LATER"],
        ["OWN"],
    ]
    assert noon.sql("SHOW SCHEMAS LIKE 'SHORT' IN P")[0].column("comment") == ["kept"]
