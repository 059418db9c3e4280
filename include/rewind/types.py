"""Column types: the SQL names users write, mapped to Arrow (Delta) and Spark types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from rewind.errors import UnsupportedError

if TYPE_CHECKING:
    import pyarrow as pa

_INTEGER = {
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.TINYINT,
}
_DECIMAL = {exp.DataType.Type.DECIMAL}
_FLOAT = {exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE}
_STRING = {
    exp.DataType.Type.VARCHAR,
    exp.DataType.Type.CHAR,
    exp.DataType.Type.TEXT,
    exp.DataType.Type.NCHAR,
    exp.DataType.Type.NVARCHAR,
}
_TIMESTAMP = {
    exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.TIMESTAMPLTZ,
    exp.DataType.Type.TIMESTAMPNTZ,
    exp.DataType.Type.DATETIME,
}


@dataclass(frozen=True)
class ColumnType:
    """A column type in the three vocabularies Rewind speaks."""

    sql: str  # as SHOW / DESCRIBE print it
    spark: str  # Spark SQL DDL type

    def arrow(self) -> pa.DataType:
        import pyarrow as pa  # statements that write data files; DDL builds no Arrow type

        if self.spark in _ARROW:
            factory, *args = _ARROW[self.spark]
            return getattr(pa, factory)(*args)
        precision, scale = self.spark.removeprefix("decimal(").rstrip(")").split(",")
        return pa.decimal128(int(precision), int(scale))

    def delta(self) -> str:
        """The Delta Lake primitive type: what delta-rs makes of :meth:`arrow`'s type."""
        return _DELTA.get(self.spark, self.spark)  # decimal(p,s) is spelt alike


# pyarrow's type factory and its arguments, by Spark SQL type.
_ARROW: dict[str, tuple[str, ...]] = {
    "bigint": ("int64",),
    "double": ("float64",),
    "string": ("string",),
    "boolean": ("bool_",),
    "date": ("date32",),
    "timestamp": ("timestamp", "us", "UTC"),
    "binary": ("binary",),
}
_DELTA = {"bigint": "long"}  # the others are spelt as in Spark SQL


def column_type(data_type: exp.DataType) -> ColumnType:
    """Map a parsed SQL type to a :class:`ColumnType`.

    Raises:
        UnsupportedError: for types Rewind tables cannot hold yet.
    """
    kind = data_type.this
    if kind in _DECIMAL:
        params = [int(p.name) for p in data_type.expressions] or [38, 0]
        precision, scale = [*params, 0][:2]
        if scale == 0:
            return ColumnType("NUMBER(38,0)", "bigint")
        return ColumnType(f"NUMBER({precision},{scale})", f"decimal({precision},{scale})")
    simple = {
        **dict.fromkeys(_INTEGER, ColumnType("NUMBER(38,0)", "bigint")),
        **dict.fromkeys(_FLOAT, ColumnType("FLOAT", "double")),
        **dict.fromkeys(_STRING, ColumnType("VARCHAR", "string")),
        **dict.fromkeys(_TIMESTAMP, ColumnType("TIMESTAMP_TZ", "timestamp")),
        exp.DataType.Type.BOOLEAN: ColumnType("BOOLEAN", "boolean"),
        exp.DataType.Type.DATE: ColumnType("DATE", "date"),
        exp.DataType.Type.BINARY: ColumnType("BINARY", "binary"),
        exp.DataType.Type.VARBINARY: ColumnType("BINARY", "binary"),
    }
    if kind in simple:
        return simple[kind]
    raise UnsupportedError(f"Column type {data_type.sql('snowflake')} is not supported.")


def from_spark(spark_type: str) -> ColumnType:
    """The column type of a Spark result column (CTAS, ``simpleString()`` form)."""
    spark_type = spark_type.lower()
    if spark_type in ("int", "smallint", "tinyint", "bigint", "long", "integer", "short", "byte"):
        return ColumnType("NUMBER(38,0)", "bigint")
    if spark_type in ("float", "double"):
        return ColumnType("FLOAT", "double")
    if spark_type.startswith("decimal("):
        precision, scale = spark_type.removeprefix("decimal(").rstrip(")").split(",")
        if int(scale) == 0:
            return ColumnType("NUMBER(38,0)", "bigint")
        return ColumnType(f"NUMBER({precision},{scale})", spark_type)
    if spark_type.startswith(("string", "varchar", "char")) or spark_type == "void":
        return ColumnType("VARCHAR", "string")
    if spark_type.startswith("timestamp"):
        return ColumnType("TIMESTAMP_TZ", "timestamp")
    names = {"boolean": "BOOLEAN", "date": "DATE", "binary": "BINARY"}
    if spark_type in names:
        return ColumnType(names[spark_type], spark_type)
    raise UnsupportedError(f"A column of Spark type {spark_type} cannot be stored.")
