"""The pure rules of access control and the grammar of its statements (SPEC R37, R39)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from rewind.errors import InvalidValue, RewindError, SqlSyntaxError, UnsupportedError
from rewind.security import acting_roles, expand, owns, with_ancestors
from rewind.sql.access import (
    CreatePrincipal,
    DropPrincipal,
    GrantPrivileges,
    GrantRole,
    ShowGrants,
    UseRole,
    parse_access,
)
from rewind.sql.parse import parse

pytestmark = pytest.mark.unit


# -- privileges (SPEC R37) ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("words", "kind", "expected"),
    [
        (["ALL"], "TABLE", ["SELECT", "INSERT", "UPDATE", "DELETE"]),
        (["ALL PRIVILEGES"], "SCHEMA", ["CREATE TABLE", "CREATE FUNCTION"]),
        (["ALL"], "DATABASE", ["CREATE SCHEMA"]),
        (["SELECT", "ALL", "SELECT"], "TABLE", ["SELECT", "INSERT", "UPDATE", "DELETE"]),
        (["OWNERSHIP"], "SCHEMA", ["OWNERSHIP"]),
        (["DELETE", "INSERT"], "TABLE", ["DELETE", "INSERT"]),
    ],
)
def test_privileges_expand_per_object_kind(
    words: list[str], kind: str, expected: list[str]
) -> None:
    """SPEC R37: ALL [PRIVILEGES] is every privilege of the kind but OWNERSHIP."""
    assert expand(words, kind) == expected


@pytest.mark.parametrize(
    ("words", "kind", "error", "text"),
    [
        (["SELECT"], "SCHEMA", InvalidValue, "Privilege SELECT cannot be granted on a schema."),
        (["CREATE TABLE"], "TABLE", InvalidValue, "cannot be granted on a table"),
        (["CREATE SCHEMA"], "SCHEMA", InvalidValue, "cannot be granted on a schema"),
        (["USAGE"], "DATABASE", UnsupportedError, "Privilege USAGE is not supported"),
        (["TRUNCATE"], "TABLE", UnsupportedError, "Privilege TRUNCATE is not supported"),
    ],
)
def test_privileges_that_do_not_apply_are_refused(
    words: list[str], kind: str, error: type[RewindError], text: str
) -> None:
    """SPEC R39: a stable code and a message naming the privilege."""
    with pytest.raises(error, match=text):
        expand(words, kind)


def test_accountadmin_and_public_ownership_reach_every_role() -> None:
    """SPEC R37: ACCOUNTADMIN can do everything; what PUBLIC owns, every role owns."""
    assert owns("ACCOUNTADMIN", "ANALYST")
    assert owns("ANALYST", "ANALYST")
    assert owns("ANALYST", "PUBLIC")
    assert not owns("ANALYST", "ACCOUNTADMIN")
    assert not owns("PUBLIC", "ANALYST")
    assert acting_roles("PUBLIC") == ("PUBLIC",)
    assert acting_roles("ANALYST") == ("ANALYST", "PUBLIC")


def test_visible_objects_bring_their_containers() -> None:
    """SHOW lists a table's schema and database too (SPEC R37 keeps SHOW from leaking)."""
    parents = {30: 20, 20: 10, 10: 0, 21: 10, 40: 41}
    assert with_ancestors([30], parents) == {30, 20, 10}
    assert with_ancestors([21, 30], parents) == {10, 20, 21, 30}
    assert with_ancestors([40], parents) == {40, 41}  # a parent not looked up stops the walk
    assert with_ancestors([], parents) == set()


# -- the grammar ----------------------------------------------------------------------------------
def _table(*parts: str) -> exp.Table:
    names = [None] * (3 - len(parts)) + [exp.to_identifier(p) for p in parts]
    return exp.Table(this=names[2], db=names[1], catalog=names[0])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("CREATE ROLE analyst", CreatePrincipal("ROLE", "ANALYST")),
        ('create role if not exists "Ops"', CreatePrincipal("ROLE", "Ops", True)),
        (
            "CREATE USER ana DEFAULT_ROLE = analyst",
            CreatePrincipal("USER", "ANA", False, "ANALYST"),
        ),
        ("CREATE USER IF NOT EXISTS bob", CreatePrincipal("USER", "BOB", True)),
        ("DROP ROLE IF EXISTS analyst", DropPrincipal("ROLE", "ANALYST", True)),
        ("DROP USER ana", DropPrincipal("USER", "ANA")),
        ("GRANT ROLE analyst TO USER ana", GrantRole(True, "ANALYST", "ANA")),
        ("REVOKE ROLE analyst FROM USER ana", GrantRole(False, "ANALYST", "ANA")),
        ('USE ROLE "a b"', UseRole("a b")),
        ("SHOW GRANTS", ShowGrants("TO USER")),
        ("SHOW GRANTS TO ROLE r", ShowGrants("TO ROLE", "R")),
        ("SHOW GRANTS TO USER u", ShowGrants("TO USER", "U")),
        ("SHOW GRANTS OF ROLE r", ShowGrants("OF ROLE", "R")),
        (
            "SHOW GRANTS ON SCHEMA d.s",
            ShowGrants("ON", kind="SCHEMA", target=_table("d", "s")),
        ),
        (
            "GRANT SELECT, insert ON TABLE d.s.t TO ROLE r",
            GrantPrivileges(True, ("SELECT", "INSERT"), "TABLE", _table("d", "s", "t"), "R"),
        ),
        (
            "GRANT ALL PRIVILEGES ON TABLE t TO ROLE r",
            GrantPrivileges(
                True, ("SELECT", "INSERT", "UPDATE", "DELETE"), "TABLE", _table("t"), "R"
            ),
        ),
        (
            "REVOKE CREATE TABLE ON SCHEMA s FROM ROLE r",
            GrantPrivileges(False, ("CREATE TABLE",), "SCHEMA", _table("s"), "R"),
        ),
        (
            "GRANT OWNERSHIP ON DATABASE d TO ROLE r REVOKE CURRENT GRANTS",
            GrantPrivileges(True, ("OWNERSHIP",), "DATABASE", _table("d"), "R", True),
        ),
        (
            "GRANT OWNERSHIP ON TABLE t TO ROLE r COPY CURRENT GRANTS",
            GrantPrivileges(True, ("OWNERSHIP",), "TABLE", _table("t"), "R"),
        ),
    ],
)
def test_access_statements_parse(text: str, expected: object) -> None:
    """SPEC R37: the statements, with Snowflake's identifier rules (R4)."""
    assert parse(text).tree == expected


@pytest.mark.parametrize(
    "text",
    ['USE "ROLE"', "USE DATABASE d", "SELECT 1", "CREATE TABLE role (a INT)", "SHOW TABLES"],
)
def test_other_statements_are_left_to_the_sql_parser(text: str) -> None:
    assert parse_access(text, "snowflake") is None
    assert parse_access("GRANT SELECT ON TABLE t TO ROLE r", "bigquery") is None


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        ("GRANT SELECT ON TABLE t TO USER u", "UNSUPPORTED", "Privileges are granted to roles"),
        ("GRANT ROLE a TO ROLE b", "UNSUPPORTED", "role hierarchies are not supported"),
        ("GRANT SELECT ON TABLE t TO ROLE r WITH GRANT OPTION", "UNSUPPORTED", "GRANT OPTION"),
        ("GRANT SELECT ON ALL TABLES IN SCHEMA s TO ROLE r", "UNSUPPORTED", "ON ALL is not"),
        ("GRANT SELECT ON FUTURE TABLES IN SCHEMA s TO ROLE r", "UNSUPPORTED", "ON FUTURE"),
        ("GRANT USAGE ON DATABASE d TO ROLE r", "UNSUPPORTED", "no USAGE is needed"),
        ("REVOKE OWNERSHIP ON TABLE t FROM ROLE r", "INVALID_VALUE", "cannot be revoked"),
        ("GRANT OWNERSHIP, SELECT ON TABLE t TO ROLE r", "INVALID_VALUE", "transferred alone"),
        ("GRANT SELECT ON SCHEMA s TO ROLE r", "INVALID_VALUE", "SELECT cannot be granted"),
        ("CREATE USER u PASSWORD = 'x'", "UNSUPPORTED", "User property PASSWORD"),
        ("GRANT SELECT TABLE t TO ROLE r", "SYNTAX_ERROR", "expected ON near 'TABLE'"),
        ("GRANT SELECT ON TABLE t TO ROLE d.r", "SYNTAX_ERROR", "expected a role or user name"),
        ("SHOW GRANTS ON ACCOUNT", "SYNTAX_ERROR", "expected TABLE or SCHEMA or DATABASE"),
        ("CREATE ROLE r EXTRA", "SYNTAX_ERROR", "unexpected text near 'EXTRA'"),
        ("USE ROLE", "SYNTAX_ERROR", "expected a name"),
        (
            "GRANT SELECT ON TABLE t TO ROLE r COPY CURRENT GRANTS",
            "SYNTAX_ERROR",
            "CURRENT GRANTS goes with GRANT OWNERSHIP",
        ),
    ],
)
def test_what_rewind_does_not_grant_is_refused_in_one_line(
    text: str, code: str, message: str
) -> None:
    """SPEC R39: a stable code and a one-line message, at parse time."""
    with pytest.raises(RewindError) as error:
        parse(text)
    assert error.value.code == code
    assert message in error.value.message
    assert "\n" not in error.value.message
    assert isinstance(error.value, SqlSyntaxError) == (code == "SYNTAX_ERROR")


WORDS = [
    "GRANT",
    "REVOKE",
    "CREATE",
    "DROP",
    "USE",
    "SHOW",
    "ROLE",
    "USER",
    "GRANTS",
    "ON",
    "TO",
    "FROM",
    "OF",
    "IF",
    "NOT",
    "EXISTS",
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "OWNERSHIP",
    "ALL",
    "PRIVILEGES",
    "TABLE",
    "SCHEMA",
    "DATABASE",
    "WITH",
    "OPTION",
    "COPY",
    "CURRENT",
    "DEFAULT_ROLE",
    "USAGE",
    "r",
    "d.s.t",
    ",",
    "=",
    ".",
    "(",
    ")",
    "'x'",
    '"q""r"',
    '"a.b"',
    "-1",
    "é",
]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["GRANT", "REVOKE", "CREATE ROLE", "CREATE USER", "DROP ROLE", "SHOW GRANTS"]),
    st.lists(st.sampled_from(WORDS), max_size=10),
)
def test_any_access_statement_parses_or_fails_with_a_code(head: str, words: list[str]) -> None:
    """SPEC R39: whatever follows, a statement or a RewindError, never another exception."""
    try:
        parse(" ".join([head, *words]))
    except RewindError as error:
        assert error.code != "INTERNAL_ERROR"
        assert "\n" not in error.message
