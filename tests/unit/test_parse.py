"""Statement splitting and the ALTER ACCOUNT|DATABASE|SCHEMA parser (SPEC R25, R39)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from rewind.errors import SqlSyntaxError
from rewind.sql.parse import AlterContainer, parse, split
from rewind.sql.show import like_pattern

pytestmark = pytest.mark.unit


def test_split_respects_quotes_and_skips_empty_statements() -> None:
    text = "CREATE TABLE t (a INT); INSERT INTO t VALUES ('a;b');; SELECT \"x;y\" FROM t ;"
    assert split(text) == [
        "CREATE TABLE t (a INT)",
        "INSERT INTO t VALUES ('a;b')",
        'SELECT "x;y" FROM t',
    ]


@pytest.mark.parametrize("text", ["SELECT 'unterminated", "SELEC 1 FROM", "CREATE TABLE ("])
def test_syntax_errors_have_a_stable_code(text: str) -> None:
    """SPEC R39: one line, stable code."""
    with pytest.raises(SqlSyntaxError) as error:
        [parse(statement) for statement in split(text)]
    assert error.value.code == "SYNTAX_ERROR"
    assert "\n" not in error.value.message


@pytest.mark.parametrize(
    ("text", "kind", "action", "keys"),
    [
        (
            "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 4",
            "ACCOUNT",
            "SET",
            ["MIN_DATA_RETENTION_TIME_IN_DAYS"],
        ),
        (
            "ALTER ACCOUNT UNSET DATA_RETENTION_TIME_IN_DAYS",
            "ACCOUNT",
            "UNSET",
            ["DATA_RETENTION_TIME_IN_DAYS"],
        ),
        (
            "alter schema d.s set data_retention_time_in_days = 3 comment = 'x y'",
            "SCHEMA",
            "SET",
            ["DATA_RETENTION_TIME_IN_DAYS", "COMMENT"],
        ),
        (
            "ALTER DATABASE IF EXISTS d UNSET DATA_RETENTION_TIME_IN_DAYS, COMMENT",
            "DATABASE",
            "UNSET",
            ["DATA_RETENTION_TIME_IN_DAYS", "COMMENT"],
        ),
        ('ALTER SCHEMA "My s" RENAME TO other', "SCHEMA", "RENAME", []),
        ("ALTER DATABASE a SWAP WITH b", "DATABASE", "SWAP", []),
    ],
)
def test_alter_container(text: str, kind: str, action: str, keys: list[str]) -> None:
    tree = parse(text).tree
    assert isinstance(tree, AlterContainer)
    assert (tree.kind, tree.action, list(tree.properties)) == (kind, action, keys)


def test_alter_container_values_and_names() -> None:
    tree = parse('ALTER SCHEMA "My s" SET DATA_RETENTION_TIME_IN_DAYS = -1').tree
    assert isinstance(tree, AlterContainer)
    assert tree.name is not None and tree.name.this.this == "My s" and tree.name.this.quoted
    value = tree.properties["DATA_RETENTION_TIME_IN_DAYS"]
    assert isinstance(value, exp.Neg)


@pytest.mark.parametrize(
    "text",
    [
        "ALTER ACCOUNT SET",
        "ALTER SCHEMA s FROB x",
        "ALTER SCHEMA SET X = 1",
        "ALTER DATABASE d RENAME TO",
        "ALTER SCHEMA a.b.c.d RENAME TO x",
        "GRANT x TO y z",
    ],
)
def test_bad_commands_are_syntax_errors(text: str) -> None:
    with pytest.raises(SqlSyntaxError):
        parse(text)


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("T%", "TABLE1", True),
        ("t%", "TABLE1", True),
        ("_A", "BA", True),
        ("_A", "BBA", False),
        ("a\\_b", "A_B", True),
        ("a\\_b", "AXB", False),
        ("%.%", "A.B", True),
        ("x", "X.", False),
    ],
)
def test_show_like_pattern(pattern: str, name: str, matches: bool) -> None:
    """SPEC R22: LIKE in SHOW is case-insensitive with % and _."""
    assert bool(like_pattern(pattern).fullmatch(name)) is matches
