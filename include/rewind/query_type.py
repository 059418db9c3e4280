"""QUERY_HISTORY.QUERY_TYPE of a statement's text, in Snowflake's words (SPEC R36).

A statement that does not parse is ``UNKNOWN``, as in Snowflake; Rewind's own commands
(``rewind restore``, fail-safe recovery) are logged under the text they are given in
:mod:`rewind.connection` and classified by it.
"""

from __future__ import annotations

from sqlglot import exp

from rewind.constants import TABLE
from rewind.errors import RewindError
from rewind.sql import access
from rewind.sql.parse import AlterContainer, parse

UNKNOWN = "UNKNOWN"
_COMMANDS = {
    "RESTORE TABLE": "RESTORE_TABLE",
    "FAILSAFE LIST": "FAILSAFE_LIST",
    "FAILSAFE RECOVER": "FAILSAFE_RECOVER",
    "LIFECYCLE RUN": "LIFECYCLE_RUN",
}
_SIMPLE: dict[type[exp.Expr], str] = {
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
    exp.Merge: "MERGE",
    exp.TruncateTable: "TRUNCATE_TABLE",
    exp.Drop: "DROP",
    exp.Undrop: "UNDROP",
    exp.Use: "USE",
    exp.Show: "SHOW",
    exp.Grant: "GRANT",
    exp.Revoke: "REVOKE",
    exp.Query: "SELECT",
}


def query_type(text: str, dialect: str = "snowflake") -> str:
    """``SELECT``, ``INSERT``, ``CREATE_TABLE_AS_SELECT``, ``RENAME_TABLE``, ... or UNKNOWN."""
    words = " ".join(text.split()[:2]).upper()
    if words in _COMMANDS:
        return _COMMANDS[words]
    try:
        tree = parse(text, dialect).tree
    except (RewindError, RecursionError, ValueError, OverflowError):
        # The statement's own failure is what QUERY_HISTORY reports (SPEC R36, R39);
        # logging it must not fail a second time.
        return UNKNOWN
    return classify(tree)


def classify(tree: object) -> str:
    """The query type of a parsed statement."""
    if isinstance(tree, access.AccessStatement):
        return _access(tree)
    if isinstance(tree, AlterContainer):
        if tree.kind == "ACCOUNT":
            return "ALTER_ACCOUNT"
        return f"{'RENAME' if tree.action == 'RENAME' else 'ALTER'}_{tree.kind}"
    if isinstance(tree, exp.Create):
        kind = str(tree.args.get("kind") or "").upper()
        if kind == TABLE and isinstance(tree.expression, exp.Query):
            return "CREATE_TABLE_AS_SELECT"
        return f"CREATE_{kind.replace(' ', '_')}" if kind else "CREATE"
    if isinstance(tree, exp.Alter):
        return _alter_table(tree)
    if isinstance(tree, exp.Set):
        return "UNSET" if tree.args.get("unset") else "SET"
    for node_type, query_kind in _SIMPLE.items():
        if isinstance(tree, node_type):
            return query_kind
    return type(tree).__name__.upper()


def _alter_table(tree: exp.Alter) -> str:
    actions = tree.args.get("actions") or []
    if any(isinstance(a, exp.AlterRename) for a in actions):
        return "RENAME_TABLE"
    if any(isinstance(a, exp.ColumnDef) for a in actions):
        return "ALTER_TABLE_ADD_COLUMN"
    if any(isinstance(a, exp.Drop) for a in actions):
        return "ALTER_TABLE_DROP_COLUMN"
    return "ALTER_TABLE"


def _access(tree: access.AccessStatement) -> str:
    """Snowflake's types for the access statements (SPEC R37)."""
    if isinstance(tree, access.CreatePrincipal):
        return f"CREATE_{tree.kind}"
    if isinstance(tree, access.DropPrincipal):
        return f"DROP_{tree.kind}"
    if isinstance(tree, access.GrantRole | access.GrantPrivileges):
        return "GRANT" if tree.grant else "REVOKE"
    if isinstance(tree, access.ShowGrants | access.ShowPrincipals):
        return "SHOW"
    return "USE"  # USE ROLE
