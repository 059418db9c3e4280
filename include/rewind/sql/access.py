"""The statements of access control (SPEC R37) and their parser.

sqlglot knows only some of them (most come back as a ``Command``), so they are parsed
here from sqlglot's tokens, reusing the token cursor of the ALTER parser::

    CREATE ROLE [IF NOT EXISTS] r            DROP ROLE [IF EXISTS] r
    CREATE USER [IF NOT EXISTS] u [DEFAULT_ROLE = r]      DROP USER [IF EXISTS] u
    GRANT ROLE r TO USER u                   REVOKE ROLE r FROM USER u
    GRANT priv[, ...] ON TABLE|SCHEMA|DATABASE name TO ROLE r
        [COPY CURRENT GRANTS | REVOKE CURRENT GRANTS]     (the latter two: OWNERSHIP)
    REVOKE priv[, ...] ON TABLE|SCHEMA|DATABASE name FROM ROLE r
    SHOW GRANTS [ON TABLE|SCHEMA|DATABASE name | TO ROLE r | TO USER u | OF ROLE r]
    SHOW ROLES [LIKE '...']                  SHOW USERS [LIKE '...']
    USE ROLE r

``priv`` is SELECT, INSERT, UPDATE, DELETE, CREATE TABLE, CREATE SCHEMA, OWNERSHIP or
ALL [PRIVILEGES].
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from rewind.errors import InvalidValue, UnsupportedError
from rewind.identifiers import normalize
from rewind.security import OWNERSHIP, expand
from rewind.sql.parse import _AlterParser

_HEADS = {
    "CREATE ROLE",
    "CREATE USER",
    "DROP ROLE",
    "DROP USER",
    "SHOW GRANTS",
    "SHOW ROLES",
    "SHOW USERS",
    "USE ROLE",
}
_KINDS = ("TABLE", "SCHEMA", "DATABASE")


class AccessStatement:
    """A parsed statement of access control."""


@dataclass(frozen=True)
class CreatePrincipal(AccessStatement):
    kind: str  # ROLE or USER
    name: str
    if_not_exists: bool = False
    default_role: str | None = None


@dataclass(frozen=True)
class DropPrincipal(AccessStatement):
    kind: str  # ROLE or USER
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class GrantRole(AccessStatement):
    grant: bool  # False: REVOKE
    role: str
    user: str


@dataclass(frozen=True)
class GrantPrivileges(AccessStatement):
    grant: bool  # False: REVOKE
    privileges: tuple[str, ...]
    kind: str  # TABLE, SCHEMA or DATABASE
    target: exp.Table
    role: str
    revoke_current: bool = False  # GRANT OWNERSHIP ... REVOKE CURRENT GRANTS


@dataclass(frozen=True)
class ShowGrants(AccessStatement):
    scope: str  # ON, TO ROLE, TO USER or OF ROLE
    name: str | None = None  # the role or user; None: the current user
    kind: str | None = None  # with ON: TABLE, SCHEMA or DATABASE
    target: exp.Table | None = None  # with ON


@dataclass(frozen=True)
class ShowPrincipals(AccessStatement):
    kind: str  # ROLE or USER
    like: str | None = None  # SHOW ... LIKE's pattern


@dataclass(frozen=True)
class UseRole(AccessStatement):
    role: str


def parse_access(statement: str, dialect: str) -> AccessStatement | None:
    """The access statement ``statement`` is, or None when it is another statement.

    Raises:
        SqlSyntaxError: an access statement that does not follow the grammar above.
        UnsupportedError, InvalidValue: privileges or options Rewind does not grant.
    """
    if dialect != "snowflake":
        return None
    try:
        tokens = sqlglot.tokenize(statement, read=dialect)
    except SqlglotError:
        return None  # the ordinary parser reports it
    words = [t.text.upper() for t in tokens[:2] if t.token_type != TokenType.IDENTIFIER]
    if " ".join(words) not in _HEADS and words[:1] not in (["GRANT"], ["REVOKE"]):
        return None
    return _AccessParser(tokens, statement).statement()


class _AccessParser(_AlterParser):
    """Recursive descent over sqlglot tokens, with the ALTER parser's cursor."""

    def statement(self) -> AccessStatement:
        word = self.take()
        if word in ("CREATE", "DROP"):
            kind = self.take("ROLE", "USER")
            return self.create(kind) if word == "CREATE" else self.drop(kind)
        if word == "USE":
            self.take("ROLE")
            return self.end(UseRole(self.single()))
        if word == "SHOW":
            what = self.take("GRANTS", "ROLES", "USERS")
            if what != "GRANTS":
                return self.end(ShowPrincipals(what[:-1], self.like()))
            return self.end(self.show_grants())
        grant = word == "GRANT"
        if self.peek() == "ROLE":
            self.take("ROLE")
            role = self.single()
            self.take("TO" if grant else "FROM")
            if self.take("USER", "ROLE") == "ROLE":
                raise UnsupportedError(
                    "Roles are granted to users; role hierarchies are not supported."
                )
            return self.end(GrantRole(grant, role, self.single()))
        return self.grant_privileges(grant)

    def end(self, statement: AccessStatement) -> AccessStatement:
        if self.peek():
            raise self.error("unexpected text")
        return statement

    def single(self) -> str:
        """A role or user name: one identifier (quoted names keep their case, SPEC R4)."""
        name = self.name()
        if name.args.get("db") is not None:
            raise self.error("expected a role or user name")
        return normalize(name.this)

    def if_exists(self, *words: str) -> bool:
        if self.peek() != "IF":
            return False
        for word in ("IF", *words):
            self.take(word)
        return True

    def create(self, kind: str) -> AccessStatement:
        if_not_exists = self.if_exists("NOT", "EXISTS")
        name = self.single()
        default_role = None
        while kind == "USER" and self.peek():
            key = self.take()
            self.take("=")
            if key != "DEFAULT_ROLE":
                raise UnsupportedError(
                    f"User property {key} is not supported: Rewind users have a name and "
                    "a DEFAULT_ROLE (authentication is the deployment's)."
                )
            default_role = self.single()
        return self.end(CreatePrincipal(kind, name, if_not_exists, default_role))

    def drop(self, kind: str) -> AccessStatement:
        if_exists = self.if_exists("EXISTS")
        return self.end(DropPrincipal(kind, self.single(), if_exists))

    def show_grants(self) -> ShowGrants:
        if not self.peek():
            return ShowGrants("TO USER")
        word = self.take("ON", "TO", "OF")
        if word == "ON":
            kind = self.take(*_KINDS)
            return ShowGrants("ON", kind=kind, target=self.name())
        scope = f"{word} {self.take('ROLE') if word == 'OF' else self.take('ROLE', 'USER')}"
        return ShowGrants(scope, self.single())

    def like(self) -> str | None:
        """An optional ``LIKE '<pattern>'``."""
        if not self.peek():
            return None
        self.take("LIKE")
        token = self.tokens[self.pos] if self.pos < len(self.tokens) else None
        if token is None or token.token_type != TokenType.STRING:
            raise self.error("expected a quoted pattern")
        self.pos += 1
        return token.text

    def privilege_words(self) -> list[str]:
        words: list[str] = []
        while True:
            word = self.take()
            if word == "CREATE":
                word = f"CREATE {self.take('TABLE', 'SCHEMA', 'FUNCTION')}"
            elif word == "ALL" and self.peek() == "PRIVILEGES":
                word = f"ALL {self.take('PRIVILEGES')}"
            words.append(word)
            if self.peek() != ",":
                return words
            self.take(",")

    def grant_privileges(self, grant: bool) -> AccessStatement:
        words = self.privilege_words()
        self.take("ON")
        kind = self.take()
        if kind not in _KINDS:
            raise UnsupportedError(
                f"GRANT ... ON {kind} is not supported: grant on one TABLE, SCHEMA or DATABASE."
            )
        privileges = tuple(expand(words, kind))
        if OWNERSHIP in privileges and (len(privileges) > 1 or not grant):
            raise InvalidValue(
                "OWNERSHIP is transferred alone, with GRANT OWNERSHIP ON ... TO ROLE; "
                "it cannot be revoked."
            )
        target = self.name()
        self.take("TO" if grant else "FROM")
        if self.take("ROLE", "USER") == "USER":
            raise UnsupportedError("Privileges are granted to roles, and roles to users.")
        role = self.single()
        revoke_current = self.ownership_option(privileges)
        return self.end(GrantPrivileges(grant, privileges, kind, target, role, revoke_current))

    def ownership_option(self, privileges: tuple[str, ...]) -> bool:
        """GRANT OWNERSHIP's [COPY | REVOKE] CURRENT GRANTS (copying is the default)."""
        if self.peek() not in ("COPY", "REVOKE"):
            if self.peek() == "WITH":
                raise UnsupportedError("WITH GRANT OPTION is not supported.")
            return False
        if privileges != (OWNERSHIP,):
            raise self.error("CURRENT GRANTS goes with GRANT OWNERSHIP")
        option = self.take("COPY", "REVOKE")
        self.take("CURRENT")
        self.take("GRANTS")
        return option == "REVOKE"
