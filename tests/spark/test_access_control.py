"""Access control through SQL and the Python API (SPEC R37, R38, R39; R28 for denials).

ADMIN (role ACCOUNTADMIN) builds D.PUBLIC.T with two rows, a role ANALYST and a user
ANA holding it; each test grants what it needs and checks what ANA may and may not do.
A denial is ACCESS_DENIED with one line naming the missing privilege, the object and
the role, and leaves every catalog row and file as it was (R28).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_atomicity import observe
from test_dml import assert_refused, catalog, clock, query

from rewind.errors import RewindError
from rewind.runner import STEPS

pytestmark = pytest.mark.spark

ON_T = "on table D.PUBLIC.T."


@pytest.fixture
def admin(connect: Callable[..., Any]) -> Any:
    """ADMIN at T0 on database D: table T (ID, V) with two rows, role ANALYST held by ANA.
    ANALYST may read D.PUBLIC.SEEN, so D and D.PUBLIC exist for it; it holds nothing on T,
    which therefore answers it as a missing table (SPEC R37: no existence leak)."""
    session = connect(now=clock())
    session.sql(
        "CREATE DATABASE D; CREATE TABLE T (ID INT, V VARCHAR); "
        "INSERT INTO T VALUES (1, 'a'), (2, 'b'); CREATE TABLE SEEN (ID INT); "
        "CREATE ROLE ANALYST; CREATE USER ANA DEFAULT_ROLE = ANALYST; "
        "GRANT ROLE ANALYST TO USER ANA; GRANT SELECT ON TABLE D.PUBLIC.SEEN TO ROLE ANALYST"
    )
    return session


@pytest.fixture
def ana(connect: Callable[..., Any], admin: Any) -> Any:
    """ANA's session an hour later, acting as ANALYST (her default role) in D."""
    session = connect(now=clock(hours=1), user="ANA")
    session.sql("USE DATABASE D")
    return session


def denied(conn: Any, statement: str, code: str = "ACCESS_DENIED") -> str:
    """Run a statement that must be refused with ``code``; its message."""
    with pytest.raises(RewindError) as error:
        conn.sql(statement)
    assert error.value.code == code, error.value
    assert "\n" not in error.value.message  # SPEC R39: one line
    return error.value.message


def hidden(conn: Any, statement: str) -> str:
    """A statement on an object the role holds nothing on: refused as if it were missing."""
    return denied(conn, statement, "OBJECT_NOT_FOUND")


MISSING_T = "Table 'D.PUBLIC.T' does not exist or not authorized."


def lacks(privilege: str, on: str = ON_T, role: str = "ANALYST") -> str:
    return f"Insufficient privileges: role {role} lacks {privilege} {on}"


# -- reading (SPEC R37: SELECT or ownership, at any point) -------------------------------------
READS = [
    "SELECT ID FROM T ORDER BY ID",
    "SELECT ID FROM T AT(OFFSET => -60) ORDER BY ID",
    "SELECT T.ID FROM MINE JOIN T ON MINE.ID = T.ID ORDER BY T.ID",
    "SELECT ID FROM MINE WHERE ID IN (SELECT ID FROM T) ORDER BY ID",
    "WITH C AS (SELECT ID FROM T) SELECT ID FROM C ORDER BY ID",
]


CHANGES = "SELECT ID FROM T CHANGES(INFORMATION => DEFAULT) AT(OFFSET => -60)"


def test_reading_needs_select_or_ownership_at_any_point(admin: Any, ana: Any) -> None:
    admin.sql("GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE ANALYST")
    ana.sql("CREATE TABLE MINE (ID INT); INSERT INTO MINE VALUES (1), (2)")
    assert query(ana, "SELECT ID FROM MINE ORDER BY ID") == [(1,), (2,)]  # its owner reads it
    for statement in [*READS, CHANGES]:
        assert hidden(ana, statement) == MISSING_T

    admin.sql("GRANT SELECT ON TABLE D.PUBLIC.T TO ROLE ANALYST")
    for statement in READS:
        assert query(ana, statement) == [(1,), (2,)], statement

    admin.sql("REVOKE SELECT ON TABLE D.PUBLIC.T FROM ROLE ANALYST")
    assert hidden(ana, READS[1]) == MISSING_T
    admin.sql("GRANT INSERT ON TABLE D.PUBLIC.T TO ROLE ANALYST")  # T exists for it now
    assert denied(ana, READS[1]) == lacks("SELECT")
    assert denied(ana, CHANGES) == lacks("SELECT")  # its changes are its rows


def test_reads_inside_writes_and_clones_need_select(admin: Any, ana: Any) -> None:
    admin.sql("GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE ANALYST")
    ana.sql("CREATE TABLE MINE (ID INT, V VARCHAR)")
    for statement in [
        "INSERT INTO MINE SELECT * FROM T",
        "MERGE INTO MINE USING T ON MINE.ID = T.ID "
        "WHEN NOT MATCHED THEN INSERT (ID, V) VALUES (T.ID, T.V)",
        "UPDATE MINE SET V = 'x' WHERE ID IN (SELECT ID FROM T)",
        "DELETE FROM MINE WHERE ID IN (SELECT ID FROM T)",
        "UPDATE MINE SET V = T.V FROM T WHERE MINE.ID = T.ID",
        "DELETE FROM MINE USING T AT(OFFSET => -60) WHERE MINE.ID = T.ID",
        "CREATE TABLE C AS SELECT * FROM T",
        "CREATE TABLE C CLONE T",
        "CREATE TABLE C CLONE T AT(OFFSET => -60)",
        "SET N = (SELECT count(*) FROM T)",  # a session variable's query (SPEC R37)
        "SELECT * FROM IDENTIFIER('T')",
    ]:
        assert hidden(ana, statement) == MISSING_T, statement
    assert denied(ana, "SELECT * FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS") == (
        "Reading REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS requires role ACCOUNTADMIN "
        "(current role ANALYST)."
    )

    admin.sql("GRANT SELECT ON TABLE D.PUBLIC.T TO ROLE ANALYST")
    ana.sql("INSERT INTO MINE SELECT * FROM T; CREATE TABLE C CLONE T AT(OFFSET => -60)")
    assert query(ana, "SELECT ID FROM C ORDER BY ID") == [(1,), (2,)]
    shown = ana.sql("SHOW TABLES LIKE 'C'")[0]
    assert shown.column("owner") == ["ANALYST"]  # the creating role owns the clone


# -- a denial changes nothing and is logged (SPEC R28, R36, R39) -----------------------------------
DENIALS = [
    ("INSERT INTO T VALUES (3, 'c')", MISSING_T),
    ("UPDATE T SET V = 'x'", MISSING_T),
    ("DELETE FROM T", MISSING_T),
    ("TRUNCATE TABLE T", MISSING_T),
    (
        "MERGE INTO T USING (SELECT 1 AS ID) S ON T.ID = S.ID WHEN MATCHED THEN DELETE",
        MISSING_T,
    ),
    ("INSERT OVERWRITE INTO T VALUES (9, 'z')", MISSING_T),
    ("DROP TABLE T", MISSING_T),
    ("ALTER TABLE T ADD COLUMN X INT", MISSING_T),
    ("ALTER TABLE T RENAME TO T2", MISSING_T),
    ("ALTER TABLE T SET DATA_RETENTION_TIME_IN_DAYS = 5", MISSING_T),
    ("DROP TABLE SEEN", lacks("OWNERSHIP", "on table D.PUBLIC.SEEN.")),
    (
        "ALTER SCHEMA PUBLIC SET DATA_RETENTION_TIME_IN_DAYS = 5",
        lacks("OWNERSHIP", "on schema D.PUBLIC."),
    ),
    ("DROP DATABASE D", lacks("OWNERSHIP", "on database D.")),
    ("CREATE TABLE N (A INT)", lacks("CREATE TABLE", "on schema D.PUBLIC.")),
    ("CREATE TABLE N CLONE T", lacks("CREATE TABLE", "on schema D.PUBLIC.")),
    ("CREATE SCHEMA S", lacks("CREATE SCHEMA", "on database D.")),
    ("GRANT SELECT ON TABLE T TO ROLE ANALYST", MISSING_T),
    ("SHOW GRANTS ON TABLE T", MISSING_T),
    ("CREATE DATABASE E", "CREATE DATABASE requires role ACCOUNTADMIN (current role ANALYST)."),
    (
        "CREATE DATABASE E CLONE D",
        "CREATE DATABASE requires role ACCOUNTADMIN (current role ANALYST).",
    ),
    (
        "ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = 5",
        "ALTER ACCOUNT requires role ACCOUNTADMIN (current role ANALYST).",
    ),
    ("CREATE ROLE R2", "CREATE ROLE requires role ACCOUNTADMIN (current role ANALYST)."),
    ("CREATE USER BOB", "CREATE USER requires role ACCOUNTADMIN (current role ANALYST)."),
    ("DROP USER ADMIN", "DROP USER requires role ACCOUNTADMIN (current role ANALYST)."),
    (
        "GRANT ROLE ACCOUNTADMIN TO USER ANA",
        "GRANT ROLE requires role ACCOUNTADMIN (current role ANALYST).",
    ),
]


def test_a_denied_statement_changes_nothing_and_is_logged(admin: Any, ana: Any, home: Path) -> None:
    before = observe(home, admin)
    for statement, message in DENIALS:
        assert denied(ana, statement, code_of(message)) == message, statement
    assert observe(home, admin) == before
    logged = catalog(
        home,
        "SELECT text, status, error_code, error_message, role_name FROM statements "
        "WHERE user_name = 'ANA' AND status = 'FAILED' ORDER BY start_time, rowid",
    )
    assert logged == [
        (statement, "FAILED", code_of(message), message, "ANALYST")
        for statement, message in DENIALS
    ]


def code_of(message: str) -> str:
    return "OBJECT_NOT_FOUND" if message == MISSING_T else "ACCESS_DENIED"


# -- writing (SPEC R26, R37) ---------------------------------------------------------------------
def test_writes_need_the_matching_privilege(admin: Any, ana: Any) -> None:
    admin.sql("GRANT INSERT, UPDATE ON TABLE D.PUBLIC.T TO ROLE ANALYST")
    ana.sql("INSERT INTO T VALUES (3, 'c'); UPDATE T SET V = 'x' WHERE ID = 1")
    upsert = (
        "MERGE INTO T USING (SELECT 2 AS ID UNION ALL SELECT 4 AS ID) S ON T.ID = S.ID "
        "WHEN MATCHED THEN UPDATE SET V = 'y' "
        "WHEN NOT MATCHED THEN INSERT (ID, V) VALUES (S.ID, 'n')"
    )
    ana.sql(upsert)  # UPDATE and INSERT clauses, both held
    for statement in [
        "DELETE FROM T WHERE ID = 3",
        "TRUNCATE TABLE T",
        "INSERT OVERWRITE INTO T VALUES (9, 'z')",  # it deletes what there was
        "MERGE INTO T USING (SELECT 3 AS ID) S ON T.ID = S.ID WHEN MATCHED THEN DELETE",
    ]:
        assert denied(ana, statement) == lacks("DELETE"), statement
    assert query(admin, "SELECT ID, V FROM T ORDER BY ID") == [
        (1, "x"),
        (2, "y"),
        (3, "c"),
        (4, "n"),
    ]

    admin.sql("REVOKE ALL ON TABLE D.PUBLIC.T FROM ROLE ANALYST")
    admin.sql("GRANT DELETE ON TABLE D.PUBLIC.T TO ROLE ANALYST")
    assert denied(ana, "UPDATE T SET V = 'w'") == lacks("UPDATE")
    ana.sql("DELETE FROM T WHERE ID > 2")
    assert query(admin, "SELECT ID FROM T ORDER BY ID") == [(1,), (2,)]


# -- creating, owning, dropping (SPEC R20, R21, R25, R37) ------------------------------------------
def test_create_needs_create_on_the_parent_and_the_creator_owns(admin: Any, ana: Any) -> None:
    admin.sql("GRANT CREATE SCHEMA ON DATABASE D TO ROLE ANALYST")
    ana.sql("CREATE SCHEMA S")  # ANALYST owns S, so it may create tables in it
    ana.sql("CREATE TABLE S.X (A INT); ALTER SCHEMA S SET DATA_RETENTION_TIME_IN_DAYS = 3")
    assert admin.sql("SHOW SCHEMAS LIKE 'S' IN DATABASE D")[0].column("owner") == ["ANALYST"]
    assert admin.sql("SHOW TABLES IN SCHEMA D.S")[0].column("owner") == ["ANALYST"]

    admin.sql("GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE ANALYST")
    ana.sql("CREATE TABLE PUBLIC.N (A INT)")
    # OR REPLACE drops what it replaces: that is its owner's call.
    assert denied(ana, "CREATE OR REPLACE TABLE PUBLIC.T (A INT)") == lacks("OWNERSHIP")
    ana.sql("CREATE OR REPLACE TABLE PUBLIC.N (B INT)")


def test_a_function_needs_create_function_to_make_and_nothing_to_call(admin: Any, ana: Any) -> None:
    """A SQL function reads only its arguments, so calling one opens nothing: the statement
    needs what it reads. Creating one needs CREATE FUNCTION on the schema; replacing or
    dropping another role's function needs OWNERSHIP of the schema."""
    on_public = "on schema D.PUBLIC."
    create = "CREATE FUNCTION PUBLIC.TWICE(X INT) RETURNS INT AS 'X * 2'"
    assert denied(ana, create) == lacks("CREATE FUNCTION", on_public)
    admin.sql(create.replace("PUBLIC.", "D.PUBLIC."))
    assert ana.sql("SELECT PUBLIC.TWICE(21)")[0].rows == [[42]]
    assert hidden(ana, "SELECT PUBLIC.TWICE(ID) FROM T") == MISSING_T

    admin.sql("GRANT CREATE FUNCTION ON SCHEMA D.PUBLIC TO ROLE ANALYST")
    ana.sql("CREATE FUNCTION PUBLIC.PLUS(X INT) RETURNS INT AS 'X + 1'")
    assert ana.sql("SELECT PUBLIC.PLUS(PUBLIC.TWICE(1))")[0].rows == [[3]]
    assert denied(ana, f"{create.replace('CREATE', 'CREATE OR REPLACE')}") == lacks(
        "OWNERSHIP", on_public
    )
    assert denied(ana, "DROP FUNCTION PUBLIC.TWICE(INT)") == lacks("OWNERSHIP", on_public)
    ana.sql("DROP FUNCTION PUBLIC.PLUS(INT)")


def test_drop_alter_rename_and_swap_need_ownership(admin: Any, ana: Any) -> None:
    admin.sql("GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE ANALYST; CREATE SCHEMA D.OTHER")
    ana.sql("CREATE TABLE MINE (A INT)")
    assert hidden(ana, "ALTER TABLE MINE SWAP WITH T") == MISSING_T
    # Moving a table into another schema creates it there.
    # ... and D.OTHER, where it holds nothing, is not there for it (SPEC R37).
    assert hidden(ana, "ALTER TABLE MINE RENAME TO D.OTHER.MINE") == (
        "Schema 'D.OTHER' does not exist or not authorized."
    )
    admin.sql("GRANT CREATE TABLE ON SCHEMA D.OTHER TO ROLE ANALYST")
    ana.sql("ALTER TABLE MINE RENAME TO D.OTHER.MINE; ALTER TABLE D.OTHER.MINE ADD COLUMN B INT")
    admin.sql("GRANT SELECT, INSERT ON TABLE D.PUBLIC.T TO ROLE ANALYST")
    assert denied(ana, "ALTER TABLE T ALTER COLUMN V COMMENT 'x'") == lacks("OWNERSHIP")
    assert denied(ana, "ALTER TABLE T SET CHANGE_TRACKING = TRUE") == lacks("OWNERSHIP")
    ana.sql("ALTER TABLE D.OTHER.MINE ALTER COLUMN B SET NOT NULL")  # no row: none is NULL
    ana.sql("DROP TABLE D.OTHER.MINE")
    assert admin.sql("SHOW TABLES IN SCHEMA D.OTHER")[0].rows == []


def test_undrop_needs_ownership_of_the_dropped_object_and_create_on_its_parent(
    admin: Any, ana: Any
) -> None:
    """SPEC R37, word for word."""
    admin.sql("GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE ANALYST")
    ana.sql("CREATE TABLE MINE (A INT); DROP TABLE MINE")
    admin.sql("REVOKE CREATE TABLE ON SCHEMA D.PUBLIC FROM ROLE ANALYST")
    assert denied(ana, "UNDROP TABLE MINE") == lacks("CREATE TABLE", "on schema D.PUBLIC.")

    admin.sql(
        "GRANT SELECT ON TABLE T TO ROLE ANALYST; DROP TABLE T; "
        "GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE ANALYST"
    )
    assert denied(ana, "UNDROP TABLE T") == lacks("OWNERSHIP", "on dropped table D.PUBLIC.T.")
    ana.sql("UNDROP TABLE MINE")
    admin.sql("UNDROP TABLE T")
    # Grants belong to the incarnation: UNDROP brings them back, a new one starts bare.
    assert admin.sql("SHOW GRANTS ON TABLE T")[0].column("privilege") == ["OWNERSHIP", "SELECT"]
    admin.sql("CREATE OR REPLACE TABLE T (ID INT)")
    assert admin.sql("SHOW GRANTS ON TABLE T")[0].column("privilege") == ["OWNERSHIP"]


def test_restore_in_place_needs_ownership(admin: Any, ana: Any) -> None:
    admin.sql("GRANT SELECT, INSERT, DELETE ON TABLE T TO ROLE ANALYST")
    with pytest.raises(RewindError) as error:
        ana.restore("D.PUBLIC.T", at="-60")
    assert (error.value.code, error.value.message) == ("ACCESS_DENIED", lacks("OWNERSHIP"))
    admin.sql("GRANT OWNERSHIP ON TABLE T TO ROLE ANALYST")
    assert "already holds the state" in ana.restore("D.PUBLIC.T", at="-60").rows[0][0]


def test_a_schema_clone_needs_select_on_every_table_it_takes(
    admin: Any, ana: Any, home: Path
) -> None:
    admin.sql("GRANT CREATE SCHEMA ON DATABASE D TO ROLE ANALYST")
    tables_before = catalog(home, "SELECT count(*) FROM objects")
    assert denied(ana, "CREATE SCHEMA S2 CLONE D.PUBLIC") == lacks("SELECT")
    assert catalog(home, "SELECT count(*) FROM objects") == tables_before
    admin.sql("GRANT SELECT ON TABLE T TO ROLE ANALYST")
    ana.sql("CREATE SCHEMA S2 CLONE D.PUBLIC")
    assert query(ana, "SELECT ID FROM S2.T ORDER BY ID") == [(1,), (2,)]


# -- account-level actions (SPEC R12, R37, R38) ----------------------------------------------------
def test_failsafe_and_the_lifecycle_need_accountadmin(admin: Any, ana: Any, home: Path) -> None:
    for call, what in [
        (ana.failsafe_list, "Fail-safe recovery requires role ACCOUNTADMIN"),
        (
            lambda: ana.failsafe_recover(1, "D.PUBLIC.X"),
            "Fail-safe recovery requires role ACCOUNTADMIN",
        ),
        (ana.lifecycle, "The lifecycle requires role ACCOUNTADMIN or REWIND_LIFECYCLE"),
    ]:
        with pytest.raises(RewindError) as error:
            call()
        assert error.value.code == "ACCESS_DENIED"
        assert error.value.message == f"{what} (current role ANALYST)."
    assert catalog(home, "SELECT count(*) FROM lifecycle_runs") == [(0,)]

    steps = admin.lifecycle("run-1")
    assert [s["step"] for s in steps] == list(STEPS)
    assert catalog(home, "SELECT run_id FROM lifecycle_runs") == [("run-1",)]
    assert catalog(
        home, "SELECT user_name, status FROM statements WHERE text = 'LIFECYCLE RUN' ORDER BY rowid"
    ) == [("ANA", "FAILED"), ("ADMIN", "SUCCESS")]


# -- grants, ownership, roles and users (SPEC R37) -------------------------------------------------
def test_owners_grant_and_grant_ownership_transfers_it(admin: Any, ana: Any) -> None:
    admin.sql("CREATE ROLE R2; GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE ANALYST")
    ana.sql("CREATE TABLE MINE (A INT); GRANT SELECT, INSERT ON TABLE MINE TO ROLE R2")
    grants = ana.sql("SHOW GRANTS ON TABLE MINE")[0]
    assert [(r[1], r[5], r[6], r[7]) for r in grants.rows] == [
        ("OWNERSHIP", "ANALYST", "true", "ANALYST"),
        ("INSERT", "R2", "false", "ANALYST"),
        ("SELECT", "R2", "false", "ANALYST"),
    ]
    ana.sql("GRANT OWNERSHIP ON TABLE MINE TO ROLE R2")
    assert admin.sql("SHOW TABLES LIKE 'MINE'")[0].column("owner") == ["R2"]
    gone = "Table 'D.PUBLIC.MINE' does not exist or not authorized."  # it holds nothing on it
    assert hidden(ana, "DROP TABLE MINE") == gone
    assert hidden(ana, "REVOKE SELECT ON TABLE MINE FROM ROLE R2") == gone

    admin.sql("GRANT OWNERSHIP ON TABLE MINE TO ROLE ANALYST REVOKE CURRENT GRANTS")
    assert ana.sql("SHOW GRANTS ON TABLE MINE")[0].column("privilege") == ["OWNERSHIP"]


def test_show_grants_has_snowflake_columns_and_answers_members(admin: Any, ana: Any) -> None:
    admin.sql(
        "GRANT SELECT ON TABLE T TO ROLE ANALYST; GRANT CREATE SCHEMA ON DATABASE D TO ROLE ANALYST"
    )
    to_role = ana.sql("SHOW GRANTS TO ROLE ANALYST")[0]
    assert to_role.columns == [
        "created_on",
        "privilege",
        "granted_on",
        "name",
        "granted_to",
        "grantee_name",
        "grant_option",
        "granted_by",
    ]
    assert [row[1:] for row in to_role.rows] == [
        ["CREATE SCHEMA", "DATABASE", "D", "ROLE", "ANALYST", "false", "ACCOUNTADMIN"],
        ["SELECT", "TABLE", "D.PUBLIC.SEEN", "ROLE", "ANALYST", "false", "ACCOUNTADMIN"],
        ["SELECT", "TABLE", "D.PUBLIC.T", "ROLE", "ANALYST", "false", "ACCOUNTADMIN"],
    ]
    mine = ana.sql("SHOW GRANTS")[0]  # the current user's roles
    assert mine.columns == ["created_on", "role", "granted_to", "grantee_name", "granted_by"]
    assert [row[1:] for row in mine.rows] == [["ANALYST", "USER", "ANA", "ACCOUNTADMIN"]]
    assert admin.sql("SHOW GRANTS OF ROLE ANALYST")[0].column("grantee_name") == ["ANA"]
    assert denied(ana, "SHOW GRANTS TO USER ADMIN") == (
        "SHOW GRANTS TO USER ADMIN requires role ACCOUNTADMIN (current role ANALYST)."
    )
    assert denied(ana, "SHOW GRANTS OF ROLE ACCOUNTADMIN") == (
        "Insufficient privileges: role ACCOUNTADMIN is not granted to user ANA "
        "(current role ANALYST)."
    )


def test_show_roles_and_users_list_what_the_role_may_know(admin: Any, ana: Any) -> None:
    # SPEC R37: ACCOUNTADMIN sees every role and user; another role sees the roles its
    # user holds (and PUBLIC) and its own user, nothing of anyone else's.
    roles = admin.sql("SHOW ROLES")[0]
    assert roles.columns[:6] == [
        "created_on",
        "name",
        "is_default",
        "is_current",
        "is_inherited",
        "assigned_to_users",
    ]
    by_name = {row[1]: row for row in roles.rows}
    assert set(by_name) >= {"ACCOUNTADMIN", "PUBLIC", "ANALYST"}
    assert by_name["ANALYST"][2:6] == ["N", "N", "N", 1]  # held by ANA, not ADMIN's default
    assert by_name["ACCOUNTADMIN"][2:4] == ["Y", "Y"]
    assert ana.sql("SHOW ROLES")[0].column("name") == ["ANALYST", "PUBLIC"]
    assert ana.sql("SHOW ROLES LIKE 'ana%'")[0].column("is_current") == ["Y"]
    assert "ANA" in admin.sql("SHOW USERS")[0].column("name")
    mine = ana.sql("SHOW USERS")[0]
    assert (mine.column("name"), mine.column("default_role")) == (["ANA"], ["ANALYST"])
    assert ana.sql("SHOW USERS LIKE 'ADM%'")[0].rows == []
    # SHOW COLUMNS lists the columns of the tables the role reaches, nothing of T's.
    columns = ana.sql("SHOW COLUMNS IN SCHEMA D.PUBLIC")[0]
    assert (columns.column("table_name"), columns.column("column_name")) == (["SEEN"], ["ID"])
    assert admin.sql("SHOW COLUMNS LIKE 'v' IN DATABASE D")[0].column("table_name") == ["T"]
    assert hidden(ana, "SHOW COLUMNS IN TABLE D.PUBLIC.T") == MISSING_T
    assert denied(ana, "USE SECONDARY ROLES ALL", "UNSUPPORTED") == (
        "USE SECONDARY ROLES is not supported."
    )  # an INTERNAL_ERROR before


def test_use_role_takes_only_granted_roles_and_a_revoked_one_falls_back_to_public(
    admin: Any, ana: Any, home: Path
) -> None:
    admin.sql("CREATE ROLE LOADER; GRANT ROLE LOADER TO USER ANA")
    assert denied(ana, "USE ROLE ACCOUNTADMIN") == (
        "Requested role ACCOUNTADMIN is not granted to user ANA."
    )
    ana.sql("USE ROLE LOADER")
    no_d = "Database 'D' does not exist or not authorized."  # LOADER holds nothing in D
    assert hidden(ana, "DROP TABLE T") == no_d
    admin.sql("REVOKE ROLE LOADER FROM USER ANA")
    assert hidden(ana, "DROP TABLE T") == no_d  # nor does PUBLIC
    ana.sql("USE ROLE ANALYST")
    assert catalog(
        home, "SELECT role_name FROM statements WHERE user_name = 'ANA' ORDER BY start_time, rowid"
    ) == [("ANALYST",), ("ANALYST",), ("LOADER",), ("LOADER",), ("PUBLIC",), ("ANALYST",)]


def test_show_lists_only_what_the_role_reaches(admin: Any, ana: Any) -> None:
    admin.sql(
        "CREATE SCHEMA D.HIDDEN; CREATE TABLE D.HIDDEN.H (A INT); "
        "CREATE DATABASE E; CREATE TABLE E.PUBLIC.SECRET (A INT); "
        "GRANT SELECT ON TABLE D.PUBLIC.T TO ROLE ANALYST; "
        "GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE ANALYST"
    )
    ana.sql("CREATE TABLE MINE (A INT); DROP TABLE MINE")
    assert ana.sql("SHOW DATABASES")[0].column("name") == ["D"]
    assert ana.sql("SHOW SCHEMAS IN DATABASE D")[0].column("name") == ["PUBLIC"]
    assert ana.sql("SHOW TABLES HISTORY IN SCHEMA D.PUBLIC")[0].column("name") == [
        "SEEN",
        "T",
        "MINE",  # dropped ones after the live ones, as Snowflake lists them
    ]
    assert hidden(ana, "SHOW TABLES IN DATABASE E") == (
        "Database 'E' does not exist or not authorized."
    )
    assert admin.sql("SHOW DATABASES")[0].column("name") == ["D", "E"]


def test_information_schema_lists_what_the_role_reaches_in_snowflakes_columns_r22_r37(
    admin: Any, ana: Any
) -> None:
    """``<db>.INFORMATION_SCHEMA.TABLES / COLUMNS / SCHEMATA / DATABASES`` (and
    ``INFORMATION_SCHEMA.<view>`` in the current database) were OBJECT_NOT_FOUND. Every
    role reads them, each row an object the role reaches (as SHOW lists them, R37), live
    objects only (dropped ones are SHOW ... HISTORY's, R22), with SHOW's figures; they
    have no past, and no schema takes their name. BigQuery's dialect has its own
    (``dataset.INFORMATION_SCHEMA.TABLES`` ...), in its columns and type names."""
    admin.sql(
        "CREATE SCHEMA D.HIDDEN; CREATE TABLE D.HIDDEN.H (A INT); "
        "CREATE TRANSIENT SCHEMA D.SCRATCH DATA_RETENTION_TIME_IN_DAYS = 0; "
        "CREATE TABLE D.PUBLIC.GONE (A INT); DROP TABLE D.PUBLIC.GONE; "
        "CREATE DATABASE E; CREATE TABLE E.PUBLIC.SECRET (A INT); "
        "CREATE TABLE D.PUBLIC.CODES (ID INT NOT NULL, CODE VARCHAR(3), AT TIMESTAMP_NTZ, "
        "N NUMBER(10,2)) COMMENT = 'codes'; GRANT SELECT ON TABLE D.PUBLIC.CODES TO ROLE ANALYST"
    )
    tables = (
        "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, IS_TRANSIENT, ROW_COUNT, "
        "RETENTION_TIME, COMMENT FROM {}INFORMATION_SCHEMA.TABLES ORDER BY 1, 2"
    )
    assert query(admin, tables.format("D.")) == [
        ("HIDDEN", "H", "BASE TABLE", "NO", 0, 1, None),
        ("PUBLIC", "CODES", "BASE TABLE", "NO", 0, 1, "codes"),
        ("PUBLIC", "SEEN", "BASE TABLE", "NO", 0, 1, None),
        ("PUBLIC", "T", "BASE TABLE", "NO", 2, 1, None),
    ]
    assert query(ana, tables.format("")) == [
        ("PUBLIC", "CODES", "BASE TABLE", "NO", 0, 1, "codes"),
        ("PUBLIC", "SEEN", "BASE TABLE", "NO", 0, 1, None),
    ]
    assert query(
        ana,
        "SELECT COLUMN_NAME, ORDINAL_POSITION, IS_NULLABLE, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, "
        "NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION FROM d.information_schema.columns "
        "WHERE TABLE_NAME = 'CODES' ORDER BY ORDINAL_POSITION",
    ) == [
        ("ID", 1, "NO", "NUMBER", None, 38, 0, None),
        ("CODE", 2, "YES", "TEXT", 3, None, None, None),
        ("AT", 3, "YES", "TIMESTAMP_NTZ", None, None, None, 9),
        ("N", 4, "YES", "NUMBER", None, 10, 2, None),
    ]
    # LAST_DDL / LAST_DDL_BY: the statement log's (they were NULL, SPEC R36).
    admin.sql("ALTER TABLE D.PUBLIC.CODES SET COMMENT = 'codes'")
    assert query(
        ana,
        "SELECT LAST_DDL_BY, LAST_DDL IS NOT NULL, LAST_ALTERED >= LAST_DDL "
        "FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME = 'CODES'",
    ) == [("ADMIN", True, True)]
    ((altered,),) = query(
        admin,
        "SELECT MAX(START_TIME) FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
        "WHERE QUERY_TEXT LIKE 'ALTER TABLE D.PUBLIC.CODES%'",
    )
    assert query(
        admin, "SELECT LAST_DDL FROM D.INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME = 'CODES'"
    ) == [(altered,)]
    schemata = "SELECT SCHEMA_NAME, IS_TRANSIENT, RETENTION_TIME FROM D.INFORMATION_SCHEMA.SCHEMATA"
    assert query(admin, schemata) == [
        ("HIDDEN", "NO", 1),
        ("PUBLIC", "NO", 1),
        ("SCRATCH", "YES", 0),
    ]
    assert query(ana, schemata) == [("PUBLIC", "NO", 1)]
    databases = "SELECT DATABASE_NAME FROM D.INFORMATION_SCHEMA.DATABASES"
    assert (query(admin, databases), query(ana, databases)) == ([("D",), ("E",)], [("D",)])
    assert hidden(ana, "SELECT * FROM E.INFORMATION_SCHEMA.TABLES") == (
        "Database 'E' does not exist or not authorized."
    )
    assert "does not exist" in hidden(ana, "SELECT * FROM D.INFORMATION_SCHEMA.VIEWS")
    assert "no time travel" in denied(
        ana, "SELECT * FROM INFORMATION_SCHEMA.TABLES AT(OFFSET => -60)", "UNSUPPORTED"
    )
    for statement in (
        "CREATE SCHEMA INFORMATION_SCHEMA",
        "ALTER SCHEMA D.HIDDEN RENAME TO INFORMATION_SCHEMA",
    ):
        assert "reserved" in denied(admin, statement, "INVALID_VALUE")
    # BigQuery's: a dataset's TABLES and COLUMNS, a project's SCHEMATA, in its columns.
    bigquery = ana.sql(
        "SELECT table_name, table_type, is_insertable_into FROM "
        "`D.PUBLIC`.INFORMATION_SCHEMA.TABLES ORDER BY table_name",
        dialect="bigquery",
    )[-1].rows
    assert [tuple(r) for r in bigquery] == [
        ("CODES", "BASE TABLE", "YES"),
        ("SEEN", "BASE TABLE", "YES"),
    ]
    columns = ana.sql(
        "SELECT column_name, is_nullable, data_type FROM D.PUBLIC.INFORMATION_SCHEMA.COLUMNS "
        "WHERE table_name = 'CODES' ORDER BY ordinal_position",
        dialect="bigquery",
    )[-1].rows
    assert [tuple(r) for r in columns] == [
        ("ID", "NO", "INT64"),
        ("CODE", "YES", "STRING(3)"),
        ("AT", "YES", "DATETIME"),
        ("N", "YES", "NUMERIC(10, 2)"),
    ]
    schemata = "SELECT schema_name FROM {}.INFORMATION_SCHEMA.SCHEMATA ORDER BY 1"
    datasets = admin.sql(schemata.format("D"), dialect="bigquery")[-1].rows
    assert [r[0] for r in datasets] == ["HIDDEN", "PUBLIC", "SCRATCH"]
    region = ana.sql(schemata.format("`region-us`"), dialect="bigquery")[-1].rows
    assert [r[0] for r in region] == ["PUBLIC"]  # of D, her current database


def test_the_query_history_functions_answer_each_user_their_own_statements_r36_r37(
    connect: Callable[..., Any], ana: Any
) -> None:
    """SPEC R36, R37: TABLE(INFORMATION_SCHEMA.QUERY_HISTORY()), how an analyst finds the
    query id to travel back before, was refused ("Only catalog tables can be read"), and
    BigQuery's INFORMATION_SCHEMA.JOBS_BY_USER did not exist; the ACCOUNT_USAGE view is
    ACCOUNTADMIN's. A role sees its user's statements only, ACCOUNTADMIN every user's; the
    latest first, RESULT_LIMIT of them, in the END_TIME range."""
    ana.sql("SELECT count(*) FROM SEEN")
    history = "TABLE(INFORMATION_SCHEMA.QUERY_HISTORY{}())"
    mine = query(ana, f"SELECT USER_NAME, QUERY_TEXT FROM {history.format('')} ORDER BY 2")
    assert mine == [("ANA", "SELECT count(*) FROM SEEN"), ("ANA", "USE DATABASE D")]
    assert query(ana, f"SELECT count(*) FROM {history.format('_BY_SESSION')}") == [(3,)]
    by_admin = "TABLE(INFORMATION_SCHEMA.QUERY_HISTORY_BY_USER(USER_NAME => 'ADMIN'))"
    assert query(ana, f"SELECT count(*) FROM {by_admin}") == [(0,)]
    assert denied(ana, "SELECT * FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY").startswith(
        "Reading REWIND.ACCOUNT_USAGE.QUERY_HISTORY requires role ACCOUNTADMIN"
    )
    # BigQuery's JOBS_BY_USER, in its dialect: the same statements as jobs; JOBS is an admin's.
    jobs = "`region-us`.INFORMATION_SCHEMA.JOBS"
    assert query(
        ana,
        f"SELECT user_email, statement_type, error_result.reason FROM {jobs}_BY_USER "
        "WHERE query LIKE '%SEEN%'",
        dialect="bigquery",
    ) == [("ANA", "SELECT", None)]
    assert query(
        ana, f"SELECT COUNT(*) FROM {jobs}_BY_USER WHERE state = 'DONE'", dialect="bigquery"
    ) == [(7,)]  # her seven statements before this one, the refused one too
    with pytest.raises(RewindError) as error:
        ana.sql(f"SELECT * FROM {jobs}", dialect="bigquery")
    assert error.value.code == "ACCESS_DENIED"
    failed = f"SELECT error_result.reason FROM {jobs}_BY_USER WHERE error_result IS NOT NULL"
    assert query(ana, failed, dialect="bigquery") == [("ACCESS_DENIED",)] * 2  # both refusals

    later = connect(now=clock(hours=2))
    later.sql("USE DATABASE D")
    users = query(later, f"SELECT DISTINCT USER_NAME FROM {history.format('')} ORDER BY 1")
    assert users == [("ADMIN",), ("ANA",)]
    every_job = "SELECT DISTINCT user_email FROM `region-us`.INFORMATION_SCHEMA.JOBS ORDER BY 1"
    assert query(later, every_job, dialect="bigquery") == users
    later.sql("SET N = 1")  # a session variable is a constant there too
    latest = query(
        later,
        "SELECT USER_NAME FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY(RESULT_LIMIT => $N, "
        "END_TIME_RANGE_END => DATEADD(minute, -30, CURRENT_TIMESTAMP())))",
    )
    assert latest == [("ANA",)]  # ANA's statements an hour after ADMIN's: the latest first
    window = "END_TIME_RANGE_START => DATEADD(minute, -30, CURRENT_TIMESTAMP())"
    # this session's five statements before this one
    assert query(later, f"SELECT count(*) FROM {history.format('')[:-3]}({window}))") == [(5,)]
    assert_refused(
        later,
        [
            (
                "SELECT * FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY(RESULT_LIMIT => 0))",
                "INVALID_VALUE",
            ),
            ("SELECT * FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY(10))", "UNSUPPORTED"),
            ("SELECT * FROM INFORMATION_SCHEMA.QUERY_HISTORY", "OBJECT_NOT_FOUND"),
        ],
    )


def test_describe_table_answers_only_a_role_that_reaches_the_table(admin: Any, ana: Any) -> None:
    # SPEC R37: DESCRIBE TABLE and GET_DDL list the columns to a role holding something on
    # the table; to any other it is missing, as every statement says.
    assert hidden(ana, "DESCRIBE TABLE T") == MISSING_T
    assert hidden(ana, "SELECT GET_DDL('TABLE', 'D.PUBLIC.T')") == MISSING_T
    admin.sql("GRANT SELECT ON TABLE D.PUBLIC.T TO ROLE ANALYST")
    (described,) = ana.sql("DESC TABLE T")
    assert described.column("name") == ["ID", "V"]
    (ddl,) = ana.sql("SELECT GET_DDL('TABLE', 'T')")
    assert ddl.rows[0][0].startswith("create or replace TABLE T (\n\tID ")
    assert "SHOW TABLES IN SCHEMA" in denied(admin, "DESCRIBE SCHEMA D.PUBLIC", "UNSUPPORTED")


def test_copy_grants_and_the_children_of_a_container_clone_keep_what_was_granted(
    admin: Any, ana: Any
) -> None:
    # SPEC R37 with Snowflake's rules: a clone starts with no grants; COPY GRANTS gives a
    # new table those of the table it replaces, else of the one it clones (never the
    # OWNERSHIP: the creating role owns it); each child of a schema or database clone
    # keeps the grants on its source. Restoring by clone no longer locks readers out.
    admin.sql(
        "GRANT SELECT ON TABLE D.PUBLIC.T TO ROLE ANALYST; "
        "CREATE OR REPLACE TABLE T CLONE T COPY GRANTS; CREATE TABLE PLAIN CLONE T; "
        "CREATE TABLE COPIED CLONE T COPY GRANTS; CREATE DATABASE D2 CLONE D"
    )
    for table in ("T", "COPIED", "D2.PUBLIC.T"):
        assert query(ana, f"SELECT COUNT(*) FROM {table}") == [(2,)], table
    assert hidden(ana, "SELECT * FROM PLAIN") == (
        "Table 'D.PUBLIC.PLAIN' does not exist or not authorized."
    )
    (copied,) = admin.sql("SHOW GRANTS ON TABLE D.PUBLIC.COPIED")
    assert list(zip(copied.column("privilege"), copied.column("grantee_name"), strict=True)) == [
        ("OWNERSHIP", "ACCOUNTADMIN"),
        ("SELECT", "ANALYST"),
    ]
    assert denied(admin, "CREATE OR REPLACE SCHEMA D.S COPY GRANTS", "UNSUPPORTED") == (
        "COPY GRANTS applies to tables."
    )


def test_public_grants_reach_every_role_and_a_user_without_a_role_acts_as_public(
    admin: Any, ana: Any, connect: Callable[..., Any]
) -> None:
    admin.sql("CREATE USER BOB; GRANT SELECT ON TABLE T TO ROLE PUBLIC")
    bob = connect(now=clock(hours=1), user="BOB")
    assert bob.state.role == "PUBLIC"
    assert query(bob, "SELECT ID FROM D.PUBLIC.T ORDER BY ID") == [(1,), (2,)]
    assert query(ana, "SELECT count(*) FROM T") == [(2,)]  # ANALYST has PUBLIC's grants
    assert denied(bob, "INSERT INTO D.PUBLIC.T VALUES (3, 'c')") == lacks("INSERT", role="PUBLIC")


def test_roles_and_users_are_kept_by_accountadmin(
    admin: Any, ana: Any, connect: Callable[..., Any]
) -> None:
    """SPEC R37 (and R39: each refusal has its code)."""
    admin.sql(
        "CREATE ROLE IF NOT EXISTS ANALYST; GRANT CREATE TABLE ON SCHEMA PUBLIC TO ROLE ANALYST"
    )
    ana.sql("CREATE TABLE MINE (A INT)")
    for statement, code in [
        ("CREATE ROLE ANALYST", "OBJECT_ALREADY_EXISTS"),
        ("CREATE USER X DEFAULT_ROLE = NOPE", "OBJECT_NOT_FOUND"),
        ("GRANT ROLE NOPE TO USER ANA", "OBJECT_NOT_FOUND"),
        ("GRANT SELECT ON TABLE T TO ROLE NOPE", "OBJECT_NOT_FOUND"),
        ("DROP ROLE ACCOUNTADMIN", "INVALID_VALUE"),
        ("DROP ROLE PUBLIC", "INVALID_VALUE"),
        ("DROP USER ADMIN", "INVALID_VALUE"),  # not itself
        ("REVOKE ROLE ACCOUNTADMIN FROM USER ADMIN", "INVALID_VALUE"),  # the last admin
    ]:
        with pytest.raises(RewindError) as error:
            admin.sql(statement)
        assert error.value.code == code, statement

    admin.sql("DROP ROLE ANALYST")  # what it owned passes to the dropping role
    assert admin.sql("SHOW TABLES LIKE 'MINE'")[0].column("owner") == ["ACCOUNTADMIN"]
    assert admin.sql("SHOW GRANTS ON SCHEMA PUBLIC")[0].column("privilege") == ["OWNERSHIP"]
    # Now acting as PUBLIC, which holds nothing in D (SPEC R37: no existence leak).
    assert hidden(ana, "SELECT * FROM MINE") == "Database 'D' does not exist or not authorized."
    admin.sql("DROP USER ANA; DROP USER IF EXISTS ANA")
    for call in (lambda: ana.sql("SHOW TABLES"), lambda: connect(user="ANA")):
        with pytest.raises(RewindError) as error:
            call()
        assert error.value.code == "UNKNOWN_USER"
