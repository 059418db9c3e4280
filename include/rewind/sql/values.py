"""Literal values and CREATE/ALTER properties from sqlglot trees."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from rewind.constants import EXPIRATION_OPTION, RETENTION_PARAM, TABLE_EXPIRATION_OPTION
from rewind.errors import InvalidValue, UnsupportedError

_UNSET = object()


def literal(node: exp.Expression) -> Any:
    """The Python value of a literal (numbers, strings, NULL, booleans, negation).

    Raises:
        InvalidValue: for anything that is not a constant.
    """
    if isinstance(node, exp.Paren):
        return literal(node.this)
    if isinstance(node, exp.Neg):
        value = literal(node.this)
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            raise InvalidValue(f"'{node.sql('snowflake')}' is not a number.")
        return -value
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        return _number(node.this)
    raise InvalidValue(f"'{node.sql('snowflake')}' is not a constant.")


def _number(text: str) -> int | Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise InvalidValue(f"'{text}' is not a number.") from None
    return int(value) if value == value.to_integral_value() and "e" not in text.lower() else value


@dataclass
class ObjectProperties:
    """What CREATE or ALTER ... SET said about an object."""

    transient: bool = False
    retention: Any = _UNSET
    comment: Any = _UNSET
    copy_grants: bool = False
    expiration: Any = _UNSET  # BigQuery's expiration_timestamp: its expression (NULL: none)
    expires_on: datetime | None = None  # that expression's instant, once evaluated
    table_lifetime: Any = _UNSET  # a BigQuery dataset's default_table_expiration_days
    cluster_by: str | None = None  # CLUSTER BY's keys, as layout_text writes them
    partition_by: str | None = None  # BigQuery's PARTITION BY expression
    change_tracking: bool | None = None  # CHANGE_TRACKING = TRUE | FALSE (None: not said)

    @property
    def has_retention(self) -> bool:
        return self.retention is not _UNSET

    @property
    def has_comment(self) -> bool:
        return self.comment is not _UNSET

    @property
    def has_expiration(self) -> bool:
        return self.expiration is not _UNSET

    @property
    def has_table_lifetime(self) -> bool:
        return self.table_lifetime is not _UNSET

    @property
    def lifetime_days(self) -> float | None:
        """The days ``table_lifetime`` gives (None: unset or NULL)."""
        days = self.table_lifetime
        return None if days is _UNSET or days is None else float(days)


CHANGE_TRACKING = "CHANGE_TRACKING"


def _flag(name: str, value: exp.Expression) -> bool:
    """A parameter's TRUE or FALSE (a Boolean, or the text 'TRUE' / 'FALSE')."""
    if isinstance(value, exp.Boolean):
        return bool(value.this)
    text = value.name.upper() if isinstance(value, exp.Literal | exp.Var) else ""
    if text not in ("TRUE", "FALSE"):
        raise InvalidValue(f"{name} is TRUE or FALSE, not '{value.sql('snowflake')[:100]}'.")
    return text == "TRUE"


def layout_text(keys: list[exp.Expression]) -> str:
    """A clustering key's or a partitioning's expressions as the catalog keeps them:
    Snowflake's SQL, unquoted names folded to upper case as columns' are (SPEC R4)."""
    folded = [normalize_identifiers(key.copy(), dialect="snowflake") for key in keys]
    return ", ".join(key.sql("snowflake") for key in folded)


def layout_columns(text: str | None) -> list[str]:
    """The column names a clustering key or a partitioning kept by :func:`layout_text`
    reads, in their order."""
    if not text:
        return []
    parsed = sqlglot.parse_one(f"SELECT {text}", read="snowflake")
    return [column.name for column in parsed.find_all(exp.Column)]


def object_properties(props: exp.Properties | None) -> ObjectProperties:
    """Read TRANSIENT, DATA_RETENTION_TIME_IN_DAYS, COMMENT, COPY GRANTS, CLUSTER BY and
    BigQuery's PARTITION BY and expiration_timestamp; refuse anything else."""
    result = ObjectProperties()
    for prop in props.expressions if props else []:
        if isinstance(prop, exp.ClusterProperty):
            result.cluster_by = layout_text(list(prop.expressions))
        elif isinstance(prop, exp.PartitionedByProperty):
            result.partition_by = layout_text([prop.this])
        elif isinstance(prop, exp.TemporaryProperty):
            raise UnsupportedError(
                "TEMPORARY tables are not supported: Rewind keeps every table it creates; "
                "create a TRANSIENT one and drop it when done."
            )
        elif isinstance(prop, exp.TransientProperty):
            result.transient = True
        elif isinstance(prop, exp.CopyGrantsProperty):
            result.copy_grants = True
        elif isinstance(prop, exp.SchemaCommentProperty):
            result.comment = literal(prop.this)
        elif type(prop) is exp.Property:
            _parameter(result, prop.name, prop.args["value"])
        else:
            raise UnsupportedError(f"Unsupported property: {prop.sql('snowflake')}.")
    return result


def _parameter(result: ObjectProperties, name: str, value: exp.Expression) -> None:
    """A ``NAME = value`` parameter into ``result``."""
    if name.upper() == RETENTION_PARAM:
        result.retention = literal(value)
    elif name.upper() == CHANGE_TRACKING:
        result.change_tracking = _flag(CHANGE_TRACKING, value)
    elif name == EXPIRATION_OPTION:
        result.expiration = value
    elif name == TABLE_EXPIRATION_OPTION:
        result.table_lifetime = literal(value)
    else:
        raise UnsupportedError(f"Unsupported parameter: {name.upper()}.")
