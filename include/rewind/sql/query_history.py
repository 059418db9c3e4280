"""Snowflake's query history table functions and BigQuery's JOBS views, how an analyst
finds the statement to travel back before (SPEC R16, R36):
``TABLE([db.]INFORMATION_SCHEMA.QUERY_HISTORY([END_TIME_RANGE_START => ts]
[, END_TIME_RANGE_END => ts] [, RESULT_LIMIT => n]))``,
``QUERY_HISTORY_BY_SESSION(...)`` (this session's statements) and
``QUERY_HISTORY_BY_USER(USER_NAME => 'name', ...)``.

Every role may call them and sees its own user's statements; ACCOUNTADMIN sees every
user's (``REWIND.ACCOUNT_USAGE.QUERY_HISTORY`` is ACCOUNTADMIN's alone, SPEC R37). The
columns are that view's; the most recent statements come first, at most RESULT_LIMIT of
them (100 by default, 1 to 10,000) whose end falls in the range (by default the 7 days
before now, as in Snowflake). The statement that calls one is not in it: it is logged
when it ends.

BigQuery's ``[project.]region-xx.INFORMATION_SCHEMA.JOBS_BY_USER`` lists the user's own
statements as jobs (``job_id`` the query id, ``creation_time`` when it started, ``query``,
``statement_type`` as QUERY_HISTORY's QUERY_TYPE names it); ``JOBS`` and
``JOBS_BY_PROJECT`` every user's, ACCOUNTADMIN only (BigQuery's ``jobs.listAll``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from sqlglot import exp

from rewind.audit.views import QUERY_HISTORY_SCHEMA, query_history
from rewind.catalog.models import Statement
from rewind.constants import ACCOUNTADMIN, INFORMATION_SCHEMA
from rewind.errors import InvalidValue, UnsupportedError
from rewind.security import require_accountadmin
from rewind.sql.points import constant_timestamp
from rewind.sql.values import literal
from rewind.sql.variables import substituted

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from rewind.statement import Context

FUNCTIONS = {
    "QUERY_HISTORY": (),
    "QUERY_HISTORY_BY_SESSION": (),
    "QUERY_HISTORY_BY_USER": ("USER_NAME",),
}
_COMMON = ("END_TIME_RANGE_START", "END_TIME_RANGE_END", "RESULT_LIMIT")
T = TypeVar("T")
CALL = "query_history_call"  # a Table's meta: the call it stands for, its arguments
DEFAULT_LIMIT, MAX_LIMIT = 100, 10_000
DEFAULT_RANGE = timedelta(days=7)


def rewrite(tree: T) -> T:
    """Each ``TABLE([db.]INFORMATION_SCHEMA.<function>(...))`` as the table reference
    ``[db.]INFORMATION_SCHEMA.<function>`` with the call's arguments (meta CALL): it
    resolves, is authorized and binds as an INFORMATION_SCHEMA view does."""
    if not isinstance(tree, exp.Expression):
        return tree
    for node in list(tree.find_all(exp.TableFromRows)):
        call = node.this
        if not isinstance(call, exp.Dot) or not isinstance(call.expression, exp.Anonymous):
            continue
        scope = call.this
        parts = [scope.this, scope.expression] if isinstance(scope, exp.Dot) else [scope]
        function = call.expression.name.upper()
        if (
            function not in FUNCTIONS
            or not all(isinstance(p, exp.Identifier) for p in parts)
            or parts[-1].name.upper() != INFORMATION_SCHEMA
        ):
            continue
        table = exp.Table(
            this=exp.to_identifier(function),
            db=exp.to_identifier(INFORMATION_SCHEMA),
            catalog=parts[0].copy() if len(parts) == 2 else None,
            **{k: v for k, v in node.args.items() if k != "this"},  # its alias, joins ...
        )
        table.meta[CALL] = _arguments(function, call.expression)
        node.replace(table)
    return tree


def _arguments(function: str, call: exp.Anonymous) -> dict[str, exp.Expression]:
    found: dict[str, exp.Expression] = {}
    allowed = (*_COMMON, *FUNCTIONS[function])
    for argument in call.expressions:
        name = argument.this.name.upper() if isinstance(argument, exp.Kwarg) else None
        if name is None or name not in allowed:
            raise UnsupportedError(
                f"{function} takes the named arguments {', '.join(allowed)} (e.g. "
                f"RESULT_LIMIT => 10), not '{argument.sql('snowflake')[:60]}'"
                + (": Rewind's sessions have no ids." if name == "SESSION_ID" else ".")
            )
        found[name] = argument.expression
    if function == "QUERY_HISTORY_BY_USER" and "USER_NAME" not in found:
        found["USER_NAME"] = exp.null()  # the session's user
    return found


def frame(ctx: Context, function: str, call: dict[str, exp.Expression]) -> DataFrame:
    """The rows a call answers (see the module's docstring); an argument may be a
    session variable (``RESULT_LIMIT => $n``), as any constant."""
    arguments = {name: substituted(ctx.state, value) for name, value in call.items()}
    end = ctx.now
    if "END_TIME_RANGE_END" in arguments:
        end = constant_timestamp(ctx, arguments["END_TIME_RANGE_END"], "END_TIME_RANGE_END =>")
    start = end - DEFAULT_RANGE
    if "END_TIME_RANGE_START" in arguments:
        start = constant_timestamp(
            ctx, arguments["END_TIME_RANGE_START"], "END_TIME_RANGE_START =>"
        )
    limit = _limit(arguments.get("RESULT_LIMIT"))
    conditions: list[Any] = [Statement.end_time >= start, Statement.end_time <= end]
    if ctx.state.role != ACCOUNTADMIN:
        conditions.append(Statement.user_name == ctx.state.user)  # SPEC R37
    if function == "QUERY_HISTORY_BY_SESSION":
        conditions.append(Statement.query_id.in_(ctx.state.query_ids))
    if function == "QUERY_HISTORY_BY_USER":
        user = literal(arguments["USER_NAME"])
        conditions.append(Statement.user_name == (ctx.state.user if user is None else str(user)))
    rows = query_history(ctx.catalog, conditions)[-limit:][::-1]
    return ctx.spark().createDataFrame(rows, QUERY_HISTORY_SCHEMA)


JOBS_VIEWS = ("JOBS", "JOBS_BY_PROJECT", "JOBS_BY_USER")
JOBS_SCHEMA = (
    "CREATION_TIME TIMESTAMP, PROJECT_ID STRING, USER_EMAIL STRING, JOB_ID STRING, "
    "JOB_TYPE STRING, STATEMENT_TYPE STRING, START_TIME TIMESTAMP, END_TIME TIMESTAMP, "
    "QUERY STRING, STATE STRING, "
    "ERROR_RESULT STRUCT<REASON: STRING, LOCATION: STRING, DEBUG_INFO: STRING, MESSAGE: STRING>"
)


def jobs(ctx: Context, name: str) -> DataFrame:
    """BigQuery's JOBS views (see the module's docstring): ``project_id`` is NULL, as
    Rewind does not record the database a statement ran in."""
    conditions: list[Any] = []
    if name == "JOBS_BY_USER":
        conditions.append(Statement.user_name == ctx.state.user)
    else:
        require_accountadmin(ctx, f"{INFORMATION_SCHEMA}.{name}")
    rows = [
        (start, None, user, query_id, "QUERY", kind, start, end, text, "DONE", error)
        for query_id, text, kind, user, _, _, code, message, start, end, *_ in query_history(
            ctx.catalog, conditions
        )
        for error in [None if code is None else (code, None, None, message)]
    ]
    return ctx.spark().createDataFrame(rows, JOBS_SCHEMA)


def _limit(node: exp.Expression | None) -> int:
    value = DEFAULT_LIMIT if node is None else literal(node)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidValue(
            f"RESULT_LIMIT => {value!r} is out of range: it is an integer from 1 to {MAX_LIMIT}."
        )
    return value
