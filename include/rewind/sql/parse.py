"""Split a script into statements and parse each with sqlglot (Snowflake dialect).

sqlglot does not know ``ALTER ACCOUNT|DATABASE|SCHEMA ...``; those come back as a
``Command`` and are parsed here into :class:`AlterContainer`.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from rewind.errors import SqlSyntaxError, UnsupportedError
from rewind.sql import flatten, generator, query_history
from rewind.sql.variables import unset_statement

if TYPE_CHECKING:
    from rewind.sql.access import AccessStatement

logging.getLogger("sqlglot").setLevel(logging.ERROR)

# Statement verbs Snowflake uses over every object kind (CREATE TASK, UNDROP NOTEBOOK ...).
_VERBS = {"CREATE", "DROP", "UNDROP", "ALTER", "SHOW", "DESCRIBE", "DESC", "EXECUTE"}
_MODIFIERS = {"OR", "REPLACE", "IF", "NOT", "EXISTS", "TEMPORARY", "TEMP", "TRANSIENT", "SECURE"}
_KINDS = {"TABLE", "SCHEMA", "DATABASE", "TABLES", "SCHEMAS", "DATABASES"}  # Rewind's objects
IGNORE_SHORT = "ignore_insufficient_retention"
EMPTY_ONLY = "drop_only_if_empty"  # BigQuery's DROP SCHEMA (RESTRICT unless CASCADE)
LIKE = "create_like"  # a CTAS that was ``CREATE TABLE new LIKE old``: old's columns as defined
SNAPSHOT = "table_snapshot"  # BigQuery's CREATE / DROP SNAPSHOT TABLE (a read-only clone)
_IGNORE_SHORT = re.compile(
    r"\s+IGNORE\s+TABLES\s+WITH\s+INSUFFICIENT\s+DATA\s+RETENTION\s*$", re.IGNORECASE
)


@dataclass(frozen=True)
class AlterContainer:
    """``ALTER ACCOUNT|DATABASE|SCHEMA [IF EXISTS] name <action>``.

    ``action`` is SET, UNSET, RENAME or SWAP; ``properties`` holds SET values
    (upper-cased names to literal expressions), UNSET names, or the new name.
    """

    kind: str
    name: exp.Table | None
    action: str
    properties: dict[str, exp.Expression] = field(default_factory=dict)
    target: exp.Table | None = None
    if_exists: bool = False


@dataclass(frozen=True)
class ParsedStatement:
    text: str
    tree: exp.Expression | AlterContainer | AccessStatement


# sqlglot's dump of a token in a message ("Expected table name but got <Token ...>").
_TOKEN_DUMP = re.compile(r"<Token token_type: [^,]*, text: (.*?), line: \d+, col: \d+, .*?>")
# ... and of the node it could not finish ("Required keyword: 'this' missing for <class ...>").
_NODE_DUMP = re.compile(r"Required keyword: '\w+' missing for <class '(?:\w+\.)*(\w+)'>")


def syntax_detail(exc: SqlglotError) -> str:
    """sqlglot's message for a user: one line, no terminal underline around the place it
    points at, a token by its text (SPEC R39)."""
    detail = " ".join(str(exc).split()).replace("\x1b[4m", "").replace("\x1b[0m", "")
    detail = _NODE_DUMP.sub(lambda m: f"incomplete {m.group(1).lower()} expression", detail)
    return _TOKEN_DUMP.sub(lambda m: f"'{m.group(1)}'", detail)[:300]


def _parse_one(text: str, dialect: str) -> exp.Expression:
    try:
        tree = sqlglot.parse_one(text, read=dialect)
    except RecursionError:  # sqlglot recurses once per nesting level (SPEC R39)
        raise SqlSyntaxError("SQL compilation error: the statement is nested too deeply.") from None
    assert isinstance(tree, exp.Expression)
    return tree


def split(text: str, dialect: str = "snowflake") -> list[str]:
    """The statements of a script, split on top-level ';' (quotes are respected)."""
    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except SqlglotError as exc:
        raise SqlSyntaxError(f"SQL compilation error: {str(exc).splitlines()[0]}") from None
    pieces: list[str] = []
    start = 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            pieces.append(text[start : token.start])
            start = token.end + 1
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


_OPENING = (TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE)
_CLOSING = (TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE)


def _depths(tokens: list[Token]) -> Iterator[tuple[Token, int]]:
    """Each token with how many brackets enclose it (a bracket: its outside's)."""
    depth = 0
    for token in tokens:
        if token.token_type in _CLOSING:
            depth -= 1
        yield token, depth
        if token.token_type in _OPENING:
            depth += 1


def flow_parts(statement: str, dialect: str = "snowflake") -> list[str]:
    """Snowflake's flow operator: ``SHOW TABLES ->> SELECT ... FROM $1`` is two statements,
    the second reading the first's result as ``$1`` (``$n``: the n-th of the chain).
    One part for a statement without a top-level ``->>`` (BigQuery has no such operator)."""
    if dialect != "snowflake":
        return [statement]
    try:
        tokens = sqlglot.tokenize(statement, read=dialect)
    except SqlglotError:
        return [statement]  # parse() names the error
    parts: list[str] = []
    start = 0
    for token, depth in _depths(tokens):
        if token.token_type == TokenType.DARROW and depth == 0:
            parts.append(statement[start : token.start])
            start = token.end + 1
    parts.append(statement[start:])
    return [p.strip() for p in parts]


# What ends a SELECT's list of result columns.
_SELECT_LIST_ENDS = {
    TokenType.FROM,
    TokenType.WHERE,
    TokenType.GROUP_BY,
    TokenType.HAVING,
    TokenType.QUALIFY,
    TokenType.ORDER_BY,
    TokenType.LIMIT,
    TokenType.UNION,
    TokenType.EXCEPT,
    TokenType.INTERSECT,
    TokenType.INTO,
    TokenType.WINDOW,
    TokenType.FETCH,
}


_SELECT_MODIFIERS = (TokenType.DISTINCT, TokenType.ALL, TokenType.TOP)


def projection_texts(statement: str, dialect: str = "snowflake") -> list[str] | None:
    """The result columns of a query's first SELECT as its text writes them (Snowflake
    heads an unnamed column with its expression as typed, upper-cased), in a query or a
    CREATE TABLE ... AS SELECT. None when the query does not begin with that SELECT (or
    its WITH clause): ``(SELECT ...) UNION ...``."""
    try:
        tokens = sqlglot.tokenize(statement, read=dialect)
    except SqlglotError:
        return None
    if tokens and tokens[0].token_type == TokenType.CREATE:  # its query follows AS
        after = [
            i
            for i, (t, depth) in enumerate(_depths(tokens))
            if depth == 0 and t.token_type == TokenType.ALIAS
        ]
        tokens = tokens[after[0] + 1 :] if after else []
    if not tokens or tokens[0].token_type not in (TokenType.SELECT, TokenType.WITH):
        return None
    items: list[list[Token]] | None = None
    skip = 0  # DISTINCT, ALL, TOP n after SELECT
    for token, depth in _depths(tokens):
        kind = token.token_type
        if items is None:
            items = [[]] if kind == TokenType.SELECT and depth == 0 else None
            continue
        if len(items) == 1 and not items[0] and (skip or kind in _SELECT_MODIFIERS):
            skip = 1 if kind == TokenType.TOP else 0  # TOP's count follows it
            continue
        if depth == 0 and kind in _SELECT_LIST_ENDS:
            break
        if depth == 0 and kind == TokenType.COMMA:
            items.append([])
        else:
            items[-1].append(token)
    if not items or not all(items):
        return None
    return [statement[item[0].start : item[-1].end + 1] for item in items]


_TRANSACTION = re.compile(r"^\s*(BEGIN|START\s+TRANSACTION|COMMIT|ROLLBACK)\b", re.IGNORECASE)
_NOT_RUN = {"EXPLAIN", "CALL", "EXECUTE", "PUT", "GET", "LIST", "LS", "REMOVE", "RM", "COPY"}


def _refuse_transaction(statement: str) -> None:
    """Each statement commits alone (SPEC R28): a ROLLBACK the user counts on would take
    nothing back, so a transaction is refused before it starts."""
    transaction = _TRANSACTION.match(statement)
    if transaction:
        raise UnsupportedError(
            f"{' '.join(transaction[1].upper().split())} is not supported: each statement "
            "commits on its own (autocommit). To take one back, read or clone the table "
            "as it was before it: ... BEFORE(STATEMENT => '<its query id>')."
        )


def _refuse_point_on_table_function(statement: str) -> None:
    """``TABLE(f(...)) [AS] [alias] AT|BEFORE(...)``: sqlglot drops the point of a table
    function, so the present would be read where a past one was asked for; a table
    function has no time travel: refused."""
    if "TABLE" not in statement.upper():
        return
    try:
        tokens = sqlglot.tokenize(statement, read="snowflake")
    except SqlglotError:
        return  # parse() names the error
    depths = [depth for _, depth in _depths(tokens)]
    for i, token in enumerate(tokens[:-1]):
        if token.token_type != TokenType.TABLE or tokens[i + 1].token_type != TokenType.L_PAREN:
            continue
        closing = (
            j
            for j in range(i + 2, len(tokens))
            if depths[j] == depths[i + 1] and tokens[j].token_type in _CLOSING
        )
        end = next(closing, len(tokens))  # TABLE(...)'s closing bracket
        rest = [(t.token_type, t.text.upper()) for t in tokens[end + 1 : end + 5]]
        if rest[:1] and rest[0][0] == TokenType.ALIAS:
            rest = rest[1:]
        if rest[:1] and rest[0] not in _POINTS and rest[0][0] in _NAMES:
            rest = rest[1:]  # its alias
        if len(rest) > 1 and rest[0] in _POINTS and rest[1][0] == TokenType.L_PAREN:
            raise UnsupportedError(
                f"{rest[0][1]}(...) after TABLE(...) is not supported: a table function has no "
                "time travel (read a table at a point, or filter the function's rows)."
            )


_POINTS = ((TokenType.VAR, "AT"), (TokenType.VAR, "BEFORE"))
_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)


def parse(statement: str, dialect: str = "snowflake") -> ParsedStatement:
    """Parse one statement.

    Raises:
        SqlSyntaxError: with sqlglot's position when the text is not valid SQL.
        UnsupportedError: a statement Rewind knows and does not run.
    """
    _refuse_transaction(statement)
    if dialect == "bigquery":
        from rewind.sql.bigquery import parse_bigquery

        return ParsedStatement(statement, _defaults_marked(_create_like(parse_bigquery(statement))))
    from rewind.sql.access import parse_access  # builds on _AlterParser below

    access = parse_access(statement, dialect)  # CREATE ROLE, GRANT, ... (SPEC R37)
    if access is not None:
        return ParsedStatement(statement, access)
    _refuse_point_on_table_function(statement)
    unset = unset_statement(statement)  # UNSET name: sqlglot reads an expression
    if unset is not None:
        return ParsedStatement(statement, unset)
    ignore_short = _IGNORE_SHORT.search(statement)
    if ignore_short:
        parsed = parse(statement[: ignore_short.start()], dialect)
        if not isinstance(parsed.tree, exp.Create) or parsed.tree.args.get("clone") is None:
            raise SqlSyntaxError(
                "SQL compilation error: IGNORE TABLES WITH INSUFFICIENT DATA RETENTION "
                "goes with CREATE SCHEMA|DATABASE ... CLONE."
            )
        parsed.tree.meta[IGNORE_SHORT] = True
        return ParsedStatement(statement, parsed.tree)
    try:
        tree: exp.Expression | None = _parse_one(statement, dialect)
    except SqlglotError as exc:
        tree = _parse_negative_properties(statement, dialect)
        if tree is None:
            raise SqlSyntaxError(f"SQL compilation error: {syntax_detail(exc)}") from None
    assert tree is not None
    if isinstance(tree, exp.Command):
        reordered = _clone_properties_first(statement, dialect)
        if reordered != statement:
            return ParsedStatement(statement, parse(reordered, dialect).tree)
        return ParsedStatement(statement, _parse_command(statement, tree, dialect))
    if isinstance(tree, exp.Comment):
        return _comment_on(statement, tree, dialect)
    if isinstance(tree, exp.Condition | exp.Alias):
        # sqlglot reads text such as ``FROB x`` as a bare expression (``FROB AS x``);
        # it is no statement, so it is a syntax error, as in Snowflake (SPEC R39).
        head = statement.split()[0] if statement.split() else statement
        raise SqlSyntaxError(f"SQL compilation error: syntax error: unexpected '{head[:50]}'.")
    return ParsedStatement(
        statement,
        _defaults_marked(
            generator.rewrite(flatten.rewrite(query_history.rewrite(_create_like(tree))))
        ),
    )


def _comment_on(statement: str, tree: exp.Comment, dialect: str) -> ParsedStatement:
    """Snowflake's COMMENT [IF EXISTS] ON TABLE|SCHEMA|DATABASE x IS '...' is its ALTER ...
    SET COMMENT, and COMMENT ON COLUMN t.c IS '...' its ALTER TABLE t ALTER COLUMN c
    COMMENT '...': the same privilege (OWNERSHIP), audit and effect."""
    kind, name = str(tree.args.get("kind")).upper(), tree.this.sql(dialect)
    exists = " IF EXISTS" if tree.args.get("exists") else ""
    text = tree.expression.sql(dialect)
    if kind == "COLUMN" and isinstance(tree.this, exp.Column) and tree.this.table:
        *path, last = (part.sql(dialect) for part in tree.this.parts)
        table, column = ".".join(path), last
        altered = f"ALTER TABLE{exists} {table} ALTER COLUMN {column} COMMENT {text}"
        return ParsedStatement(statement, parse(altered, dialect).tree)
    if kind not in _KINDS:
        raise UnsupportedError(
            f"COMMENT ON {kind} is not supported: Rewind keeps the comments of tables, "
            "columns, schemas and databases."
        )
    return ParsedStatement(
        statement, parse(f"ALTER {kind}{exists} {name} SET COMMENT = {text}", dialect).tree
    )


def _is_default(node: exp.Expression) -> bool:
    """The bare keyword DEFAULT (sqlglot: a Var in VALUES, a column elsewhere)."""
    return (isinstance(node, exp.Var) or (isinstance(node, exp.Column) and not node.table)) and (
        node.name.upper() == "DEFAULT"
        and not (isinstance(node.this, exp.Identifier) and node.this.quoted)
    )


# The keyword DEFAULT as a value a statement gives a column (:func:`_defaults_marked`)
DEFAULT_KEYWORD = "DEFAULT"


def _defaults_marked(tree: exp.Expression | AlterContainer) -> exp.Expression | AlterContainer:
    """``DEFAULT`` as a value of INSERT ... VALUES, UPDATE ... SET and MERGE's clauses,
    the column's default, as one mark, ``Var(DEFAULT_KEYWORD)``, where sqlglot reads a Var
    or a column: the statement puts the default there (:func:`rewind.sql.defaults.given`)."""
    if not isinstance(tree, exp.Insert | exp.Update | exp.Merge):
        return tree
    values: list[exp.Expression] = []
    for row in tree.find_all(exp.Tuple):  # INSERT's VALUES rows, MERGE's INSERT values
        if (row.parent is tree.expression and isinstance(row.parent, exp.Values)) or (
            isinstance(row.parent, exp.Insert) and row.arg_key == "expression"
        ):
            values.extend(row.expressions)
    for assignment in tree.find_all(exp.EQ):  # SET's assignments (UPDATE, MERGE)
        if isinstance(assignment.parent, exp.Update) and assignment.arg_key == "expressions":
            values.append(assignment.expression)
    for value in values:
        if _is_default(value):
            value.replace(exp.Var(this=DEFAULT_KEYWORD))
    return tree


def _create_like(tree: exp.Expression | AlterContainer) -> exp.Expression | AlterContainer:
    """``CREATE TABLE new LIKE old`` (Snowflake, BigQuery): old's columns, no rows — read
    as ``CREATE TABLE new AS SELECT * FROM old LIMIT 0``, so that authorization (SELECT on
    old) and the audit trail see the one statement it is; marked :data:`LIKE`, so that it
    runs as an empty copy of old's column definitions, NOT NULL included (Snowflake's
    LIKE), not as a query."""
    if not isinstance(tree, exp.Create) or not tree.args.get("properties"):
        return tree
    properties = tree.args["properties"]
    likes = [p for p in properties.expressions if isinstance(p, exp.LikeProperty)]
    if not likes:
        return tree
    if len(likes) > 1 or tree.expression is not None or isinstance(tree.this, exp.Schema):
        raise SqlSyntaxError(
            "SQL compilation error: CREATE TABLE ... LIKE names one table and no columns."
        )
    properties.set("expressions", [p for p in properties.expressions if p is not likes[0]])
    if not properties.expressions:
        tree.set("properties", None)
    tree.set("expression", exp.select("*").from_(likes[0].this.copy()).limit(0))
    tree.meta[LIKE] = True
    return tree


_CREATE_CLONE = re.compile(r"^\s*CREATE\b.*\bCLONE\b", re.IGNORECASE | re.DOTALL)


def _clone_properties_first(statement: str, dialect: str) -> str:
    """``CREATE ... x CLONE y [AT|BEFORE (...)] [IGNORE ...] KEY = value ...`` with its
    properties moved before CLONE, where sqlglot reads them; any other text as it is.
    Only for a statement sqlglot could not read (a bare command): one it reads keeps its
    meaning (a column named CLONE in a CTAS is no clone).

    Snowflake's syntax puts a clone's properties (``COPY GRANTS``,
    ``DATA_RETENTION_TIME_IN_DAYS = n``, ``COMMENT = '...'``) after the source and its
    point; sqlglot only reads them before CLONE, and fell back to a bare command (a
    SYNTAX_ERROR) otherwise.
    """
    if not _CREATE_CLONE.match(statement):
        return statement
    try:
        tokens = sqlglot.tokenize(statement, read=dialect)
    except SqlglotError:
        return statement
    clone = next((t for t in tokens if t.text.upper() == "CLONE"), None)
    depth = 0
    for token, following in itertools.pairwise(tokens):
        if clone is None or token.start <= clone.start:
            continue
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        copy_grants = (token.text.upper(), following.text.upper()) == ("COPY", "GRANTS")
        if depth == 0 and (following.token_type == TokenType.EQ or copy_grants):
            source = statement[clone.start : token.start].strip()
            return f"{statement[: clone.start]}{statement[token.start :].strip()} {source}"
    return statement


def _parse_negative_properties(statement: str, dialect: str) -> exp.Expression | None:
    """Retry a statement whose ``KEY = -n`` property sqlglot cannot parse, or None.

    sqlglot rejects a negative number as a property value of CREATE SCHEMA | DATABASE
    and of CTAS, so ``DATA_RETENTION_TIME_IN_DAYS = -1`` came back as a SYNTAX_ERROR
    instead of INVALID_RETENTION (SPEC R5, R39). Wrapping ``-n`` in parentheses
    parses, and :func:`rewind.sql.values.literal` reads ``(-n)`` as the number.
    """
    try:
        tokens = sqlglot.tokenize(statement, read=dialect)
    except SqlglotError:
        return None
    text, shift = statement, 0
    for eq, dash, number in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (eq.token_type, dash.token_type, number.token_type) != (
            TokenType.EQ,
            TokenType.DASH,
            TokenType.NUMBER,
        ):
            continue
        start, end = dash.start + shift, number.end + 1 + shift
        text = f"{text[:start]}({text[start:end]}){text[end:]}"
        shift += 2
    if text == statement:
        return None
    try:
        return _parse_one(text, dialect)
    except SqlglotError:
        return None


_SHOW_VARIABLES = re.compile(
    r"^SHOW\s+VARIABLES(?:\s+LIKE\s+(?P<like>'(?:[^']|'')*'))?\s*$", re.IGNORECASE | re.DOTALL
)
_SHOW_PARAMETERS = re.compile(
    r"^SHOW\s+PARAMETERS(?:\s+LIKE\s+(?P<like>'(?:[^']|'')*'))?"
    r"(?:\s+IN\s+(?P<kind>\w+)(?:\s+(?P<name>\S.*?))?)?\s*$",
    re.IGNORECASE | re.DOTALL,
)


def _parse_command(
    statement: str, tree: exp.Command, dialect: str
) -> exp.Expression | AlterContainer:
    if str(tree.this).upper() == "ALTER":
        tokens = sqlglot.tokenize(statement, read=dialect)[1:]
        return _AlterParser(tokens, statement).parse()
    parameters = _SHOW_PARAMETERS.match(statement)
    if parameters:
        return _show_parameters(parameters, dialect)
    listing = _SHOW_VARIABLES.match(statement)
    if listing:
        return _with_like(exp.Show(this="VARIABLES"), listing, dialect)
    words = statement.split()
    head = " ".join(words[:3])
    kind = next((w for w in words[1:] if w.upper() not in _MODIFIERS), "").upper()
    if words[0].upper() in _NOT_RUN:
        raise UnsupportedError(f"{words[0].upper()} is not supported.")
    if (
        words[0].upper() in _VERBS
        and len(words) > 2 - (words[0].upper() == "SHOW")
        and kind not in _KINDS
    ):
        # Snowflake's own statements over objects Rewind does not keep (README "Not
        # supported"): the statement is known, the object kind is not Rewind's.
        raise UnsupportedError(
            f"Rewind does not support {words[0].upper()} {kind} (only tables and their containers)."
        )
    raise SqlSyntaxError(f"SQL compilation error: unsupported statement '{head} ...'.")


def _with_like(show: exp.Show, match: re.Match[str], dialect: str) -> exp.Show:
    if match["like"]:
        show.set("like", _parse_one(f"SELECT {match['like']}", dialect).expressions[0])
    return show


def _show_parameters(match: re.Match[str], dialect: str) -> exp.Show:
    """``SHOW PARAMETERS [LIKE '...'] [IN ACCOUNT | DATABASE|SCHEMA|TABLE name]`` as the
    SHOW node of the other listings (``this`` PARAMETERS): Rewind's parameters are the
    retention ones (SPEC R5, R7)."""
    show = _with_like(exp.Show(this="PARAMETERS", scope_kind="ACCOUNT"), match, dialect)
    kind = (match["kind"] or "ACCOUNT").upper()
    if kind not in ("ACCOUNT", "DATABASE", "SCHEMA", "TABLE"):
        raise UnsupportedError(
            f"SHOW PARAMETERS IN {kind} is not supported: Rewind's parameters are set on the "
            "account, databases, schemas and tables."
        )
    if kind == "ACCOUNT":
        if match["name"] is not None:
            raise SqlSyntaxError(f"SQL compilation error: unexpected '{match['name'][:50]}'.")
        return show
    if match["name"] is None:
        raise SqlSyntaxError(f"SQL compilation error: SHOW PARAMETERS IN {kind} needs a name.")
    try:
        name = _parse_one(f"SELECT * FROM {match['name']}", dialect).args["from_"].this
    except (SqlglotError, KeyError):
        name = None
    if not isinstance(name, exp.Table) or set(name.args) - {"this", "db", "catalog"}:
        raise SqlSyntaxError(
            f"SQL compilation error: invalid {kind.lower()} name '{match['name']}'."
        )
    show.set("scope_kind", kind)
    show.set("scope", name)
    return show


class _AlterParser:
    """A tiny recursive-descent parser over sqlglot tokens for ALTER of containers."""

    def __init__(self, tokens: list[Token], text: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.text = text

    def error(self, what: str) -> SqlSyntaxError:
        near = self.tokens[self.pos].text if self.pos < len(self.tokens) else "end of statement"
        return SqlSyntaxError(f"SQL compilation error: {what} near '{near}'.")

    def peek(self) -> str:
        return self.tokens[self.pos].text.upper() if self.pos < len(self.tokens) else ""

    def take(self, *words: str) -> str:
        word = self.peek()
        if words and word not in words:
            raise self.error(f"expected {' or '.join(words)}")
        if not word:
            raise self.error("unexpected end")
        self.pos += 1
        return word

    def name(self) -> exp.Table:
        parts: list[exp.Identifier] = []
        while True:
            token = self.tokens[self.pos] if self.pos < len(self.tokens) else None
            if token is None or token.token_type in (TokenType.SET, TokenType.EQ):
                raise self.error("expected a name")
            quoted = token.token_type == TokenType.IDENTIFIER
            parts.append(exp.to_identifier(token.text, quoted=quoted))
            self.pos += 1
            if self.peek() != ".":
                break
            self.pos += 1
        if len(parts) > 3:
            raise self.error("too many name parts")
        names = [None] * (3 - len(parts)) + parts
        return exp.Table(this=names[2], db=names[1], catalog=names[0])

    def literal(self) -> exp.Expression:
        start = self.pos
        while self.pos < len(self.tokens) and not (
            self.pos > start
            and self.pos + 1 < len(self.tokens)
            and self.tokens[self.pos + 1].token_type == TokenType.EQ
        ):
            self.pos += 1
        if start == self.pos:
            raise self.error("expected a value")
        source = self.text[self.tokens[start].start : self.tokens[self.pos - 1].end + 1]
        try:
            # sqlglot has no parser registered for ``into=exp.Expression``: passing it made
            # every ALTER ACCOUNT|DATABASE|SCHEMA ... SET fail (SPEC R5, R7, R25).
            return _parse_one(source, "snowflake")
        except SqlglotError:
            raise self.error("invalid value") from None

    def parse(self) -> AlterContainer:
        kind = self.take("ACCOUNT", "DATABASE", "SCHEMA")
        if_exists = False
        if kind != "ACCOUNT" and self.peek() == "IF":
            self.take("IF")
            self.take("EXISTS")
            if_exists = True
        name = None if kind == "ACCOUNT" else self.name()
        action = self.take("SET", "UNSET", "RENAME", "SWAP")
        props: dict[str, exp.Expression] = {}
        target = None
        if action == "SET":
            while self.peek():
                key = self.take()
                self.take("=")
                props[key] = self.literal()
        elif action == "UNSET":
            while self.peek():
                props[self.take()] = exp.null()
                if self.peek() == ",":
                    self.take(",")
        else:
            self.take("TO" if action == "RENAME" else "WITH")
            target = self.name()
        if self.peek():
            raise self.error("unexpected text")
        if action in ("SET", "UNSET") and not props:
            raise self.error("expected a property")
        return AlterContainer(kind, name, action, props, target, if_exists)
