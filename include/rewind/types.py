"""Column types: the SQL names users write, mapped to Arrow (Delta) and Spark types."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from rewind.errors import InvalidValue, UnsupportedError
from rewind.identifiers import normalize

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
}
# Wall-clock times: Snowflake's DATETIME is its TIMESTAMP_NTZ, BigQuery's a civil time.
_WALL_CLOCK = {exp.DataType.Type.TIMESTAMPNTZ, exp.DataType.Type.DATETIME}


@dataclass(frozen=True)
class ColumnType:
    """A column type in the three vocabularies Rewind speaks."""

    sql: str  # as SHOW / DESCRIBE print it
    spark: str  # Spark SQL DDL type (``simpleString``: ``array<string>`` for a nested one)

    def arrow(self) -> pa.DataType:
        return spark_arrow(self.spark)

    def delta(self) -> str:
        """The Delta Lake primitive type: what delta-rs makes of :meth:`arrow`'s type."""
        return _DELTA.get(self.spark, self.spark)  # decimal(p,s) is spelt alike

    def declared(self) -> str | None:
        """A string column's declared length as Spark and Delta record it in the field's
        metadata (:data:`DECLARED_TYPE`): ``varchar(10)`` for VARCHAR(10), ``char(2)`` for
        another engine's CHAR(2); None for a column of any length or another type."""
        sized = _SIZED.fullmatch(self.sql)
        return f"{sized[1].lower()}({sized[2]})" if sized else None


# The field metadata in which Spark, and delta-spark in a Delta schema, keep a string
# column's declared CHAR(n) / VARCHAR(n): the schema's type is ``string``; every writer
# checks a value's length against it (Spark's readers pad a shorter CHAR), SPEC R40.
DECLARED_TYPE = "__CHAR_VARCHAR_TYPE_STRING"
_SIZED = re.compile(r"(VARCHAR|CHAR)\((\d+)\)", re.IGNORECASE)
# Snowflake's longest VARCHAR, in characters (16,777,216 before its 2025 bundles).
MAX_LENGTH = 134_217_728


def declared_length(declared: object) -> tuple[str, int] | None:
    """(``VARCHAR`` or ``CHAR``, n) of a field's :data:`DECLARED_TYPE` (``varchar(n)``,
    ``char(n)``); None for anything else (a nested field's, e.g. ``array<varchar(3)>``)."""
    sized = _SIZED.fullmatch(declared) if isinstance(declared, str) else None
    return (sized[1].upper(), int(sized[2])) if sized else None


# Snowflake's TIMESTAMP_NTZ, a wall-clock time: Spark's and Delta's timestamp_ntz (Delta's
# timestampNtz table feature), declared so or another engine's.
_NTZ = ColumnType("TIMESTAMP_NTZ", "timestamp_ntz")
# Snowflake's VARIANT, BigQuery's JSON: Delta's and Spark's variant (Delta's variantType
# table feature), a semi-structured value in its binary encoding, whichever engine wrote
# it. A statement reads it as its JSON text (rewind.sql.paths), as Rewind reads every
# semi-structured value; a value stored into it is parsed or converted (rewind.sql.frames).
VARIANT = ColumnType("VARIANT", "variant")
# Snowflake's semi-structured ARRAY and OBJECT (no element types named): variants that hold
# an array / an object (rewind.sql.frames checks each value written), shown as declared.
SEMI_STRUCTURED = {
    exp.DataType.Type.ARRAY: ColumnType("ARRAY", VARIANT.spark),
    exp.DataType.Type.OBJECT: ColumnType("OBJECT", VARIANT.spark),
}
# The Arrow extension type that stands for a variant column in Rewind's Arrow schemas (its
# storage: the two binaries Spark and Delta store a variant as).
VARIANT_EXTENSION = "rewind.variant"
# pyarrow's type factory and its arguments, by Spark SQL type; Delta's spelling where
# it differs (the others are spelt alike).
_ARROW: dict[str, tuple[str, ...]] = {
    "bigint": ("int64",),
    "int": ("int32",),
    "smallint": ("int16",),
    "tinyint": ("int8",),
    "double": ("float64",),
    "float": ("float32",),
    "string": ("string",),
    "boolean": ("bool_",),
    "date": ("date32",),
    "timestamp": ("timestamp", "us", "UTC"),
    "timestamp_ntz": ("timestamp", "us"),
    "binary": ("binary",),
}
_DELTA = {"bigint": "long", "int": "integer", "smallint": "short", "tinyint": "byte"}
_SPARK_OF_DELTA = {delta: spark for spark, delta in _DELTA.items()}
# Nested types: other engines' tables hold them (SPEC R41); Snowflake's structured types
# name them.
_NESTED = ("array<", "map<", "struct<")


def is_nested(spark_type: str) -> bool:
    """Whether a Spark type is an array, a map or a struct."""
    return spark_type.lower().startswith(_NESTED)


# Integer types by the digits they hold, narrowest first: a stored value reads without
# loss as any later one (and as a DECIMAL with as many integer digits).
_INTEGER_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}
_DECIMAL_DDL = re.compile(r"decimal\((\d+),\s*(\d+)\)")


def reads_as(stored: str, current: str) -> bool:
    """Whether a value stored as Spark type ``stored`` reads as ``current`` without loss
    or failure: the same type, a widening (Delta's type widening: a wider integer, FLOAT
    to DOUBLE, an integer to DOUBLE or to a DECIMAL with room for it, a DECIMAL with no
    fewer integer or fraction digits, DATE to a timestamp), or any primitive as a string."""
    stored, current = stored.lower(), current.lower()
    if stored == current or (current == "string" and not is_nested(stored)):
        return True
    old, new = _DECIMAL_DDL.fullmatch(stored), _DECIMAL_DDL.fullmatch(current)
    if stored in _INTEGER_DIGITS:
        digits = _INTEGER_DIGITS[stored]
        if current in _INTEGER_DIGITS:
            return _INTEGER_DIGITS[current] >= digits
        if new is not None:
            return int(new[1]) - int(new[2]) >= digits
        return current == "double" and digits <= 10
    if old is not None and new is not None:
        return int(new[2]) >= int(old[2]) and int(new[1]) - int(new[2]) >= int(old[1]) - int(old[2])
    return (stored, current) in {
        ("float", "double"),
        ("date", "timestamp"),
        ("date", "timestamp_ntz"),
    }


def delta_spark(kind: str | dict[str, Any]) -> str:
    """The Spark DDL type of a Delta schema's type (a primitive's name, or the JSON of an
    array, map or struct).

    Raises:
        UnsupportedError: a type Rewind cannot read (Spark's variant, an interval ...), or
            a struct field name Spark DDL would need quoting for.
    """
    if isinstance(kind, str):
        spark = _SPARK_OF_DELTA.get(kind, kind)
        if spark in _ARROW or spark.startswith("decimal(") or spark == VARIANT.spark:
            return spark
    elif kind.get("type") == "array":
        return f"array<{delta_spark(kind['elementType'])}>"
    elif kind.get("type") == "map":
        return f"map<{delta_spark(kind['keyType'])},{delta_spark(kind['valueType'])}>"
    elif kind.get("type") == "struct":
        fields = []
        for field in kind.get("fields", []):
            name = str(field["name"])
            if not name or any(c in name for c in ":,<>`"):
                raise UnsupportedError(f"A nested field named '{name}' cannot be read yet.")
            fields.append(f"{name}:{delta_spark(field['type'])}")
        return f"struct<{','.join(fields)}>"
    raise UnsupportedError(f"Delta type {json.dumps(kind)[:80]} cannot be read.")


def spark_arrow(spark: str) -> pa.DataType:
    """The Arrow type of a Spark DDL type (:func:`delta_spark`'s, nested ones included)."""
    import pyarrow as pa  # statements that write data files; DDL builds no Arrow type

    if spark in _ARROW:
        factory, *args = _ARROW[spark]
        return getattr(pa, factory)(*args)
    if spark == VARIANT.spark:
        return variant_arrow()
    if spark.startswith("decimal("):
        precision, scale = spark.removeprefix("decimal(").rstrip(")").split(",")
        return pa.decimal128(int(precision), int(scale))
    if spark.startswith("array<"):
        return pa.list_(spark_arrow(spark[6:-1]))
    if spark.startswith("map<"):
        key, value = nested_parts(spark[4:-1])
        return pa.map_(spark_arrow(key), spark_arrow(value))
    if spark == "struct<>":
        raise UnsupportedError("A column cannot hold an OBJECT of no keys: give it its keys.")
    if spark.startswith("struct<"):
        fields = [part.split(":", 1) for part in nested_parts(spark[7:-1])]
        return pa.struct([pa.field(name, spark_arrow(inner)) for name, inner in fields])
    raise UnsupportedError(f"A column of Spark type {spark} cannot be stored.")


def arrow_spark(arrow_type: pa.DataType) -> str:
    """The Spark DDL type of an Arrow type: :func:`spark_arrow`'s inverse."""
    import pyarrow as pa

    if pa.types.is_decimal(arrow_type):
        return f"decimal({arrow_type.precision},{arrow_type.scale})"
    if pa.types.is_timestamp(arrow_type):
        return "timestamp" if arrow_type.tz else "timestamp_ntz"
    if pa.types.is_large_string(arrow_type):
        return "string"
    if getattr(arrow_type, "extension_name", None) == VARIANT_EXTENSION:
        return VARIANT.spark
    for spark in _ARROW:
        if spark_arrow(spark) == arrow_type:
            return spark
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"array<{arrow_spark(arrow_type.value_type)}>"
    if pa.types.is_map(arrow_type):
        return f"map<{arrow_spark(arrow_type.key_type)},{arrow_spark(arrow_type.item_type)}>"
    if pa.types.is_struct(arrow_type):
        return f"struct<{','.join(f'{f.name}:{arrow_spark(f.type)}' for f in arrow_type)}>"
    raise UnsupportedError(f"Delta column type {arrow_type} cannot be read.")


def _no_inner_variant(spark_type: str) -> None:
    """Refuse a nested type with a variant inside (Rewind stores a top-level one only)."""
    if _INNER_VARIANT.search(spark_type):
        raise UnsupportedError(
            f"A column of type {spark_type} cannot be stored yet: a VARIANT inside an "
            "ARRAY, OBJECT or MAP; make the column itself a VARIANT."
        )


_INNER_VARIANT = re.compile(r"[<,:]variant[>,]")


@cache
def variant_arrow() -> pa.DataType:
    """The Arrow type of a variant column (:data:`VARIANT_EXTENSION`), registered once."""
    import pyarrow as pa

    class VariantArrow(pa.ExtensionType):
        def __init__(self) -> None:
            storage = pa.struct(
                [pa.field("value", pa.binary(), False), pa.field("metadata", pa.binary(), False)]
            )
            super().__init__(storage, VARIANT_EXTENSION)

        def __arrow_ext_serialize__(self) -> bytes:
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type: Any, serialized: bytes) -> VariantArrow:
            return cls()

    kind = VariantArrow()
    pa.register_extension_type(kind)
    return kind


def struct_fields(spark: str) -> list[str]:
    """The field names of a Spark struct type (``struct<city:string,zip:int>``)."""
    return [part.split(":", 1)[0] for part in nested_parts(spark[7:-1])]


def nested_parts(inner: str) -> list[str]:
    """The comma-separated parts of a nested type's parameters, at the outer level."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(inner):
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    return [*parts, inner[start:]]


def column_type(data_type: exp.DataType) -> ColumnType:
    """Map a parsed SQL type to a :class:`ColumnType`.

    Raises:
        UnsupportedError: for types Rewind tables cannot hold yet.
    """
    kind = data_type.this
    if kind in _DECIMAL:
        params = [int(p.name) for p in data_type.expressions] or [38, 0]
        precision, scale = [*params, 0][:2]
        if not (1 <= precision <= 38 and 0 <= scale <= precision):
            raise InvalidValue(
                f"SQL compilation error: {data_type.sql('snowflake')}: a NUMBER's precision is "
                "1 to 38 digits and its scale 0 to its precision."
            )
        if scale == 0:
            return ColumnType("NUMBER(38,0)", "bigint")
        return ColumnType(f"NUMBER({precision},{scale})", f"decimal({precision},{scale})")
    simple = {
        **dict.fromkeys(_INTEGER, ColumnType("NUMBER(38,0)", "bigint")),
        **dict.fromkeys(_FLOAT, ColumnType("FLOAT", "double")),
        **dict.fromkeys(_TIMESTAMP, ColumnType("TIMESTAMP_TZ", "timestamp")),
        **dict.fromkeys(_WALL_CLOCK, _NTZ),
        exp.DataType.Type.BOOLEAN: ColumnType("BOOLEAN", "boolean"),
        exp.DataType.Type.DATE: ColumnType("DATE", "date"),
        exp.DataType.Type.BINARY: ColumnType("BINARY", "binary"),
        exp.DataType.Type.VARBINARY: ColumnType("BINARY", "binary"),
    }
    if kind in simple:
        return simple[kind]
    if kind in _STRING:
        return _string(data_type)
    if kind in SEMI_STRUCTURED and not data_type.expressions:
        return SEMI_STRUCTURED[kind]
    if kind in _STRUCTURED:
        return from_spark(_nested_spark(data_type))
    if kind in (exp.DataType.Type.VARIANT, exp.DataType.Type.JSON):
        return VARIANT
    raise UnsupportedError(f"Column type {data_type.sql('snowflake')} is not supported.")


_STRUCTURED = {
    exp.DataType.Type.ARRAY,
    exp.DataType.Type.STRUCT,
    exp.DataType.Type.OBJECT,
    exp.DataType.Type.MAP,
}


def _nested_spark(data_type: exp.DataType) -> str:
    """The Spark type of a typed ARRAY / OBJECT / MAP (Snowflake's structured types,
    BigQuery's ``ARRAY<T>`` / ``STRUCT<f T, ...>``), its elements as Rewind's own columns
    hold them; an untyped one inside another (a VARIANT inside) is refused."""
    kind, inner = data_type.this, data_type.expressions
    if kind not in _STRUCTURED:
        return column_type(data_type).spark
    if not inner:
        raise UnsupportedError(
            f"Column type {data_type.sql('snowflake')} is not supported: name its elements' "
            "types, or keep semi-structured values in a VARIANT column."
        )
    if kind == exp.DataType.Type.ARRAY:
        return f"array<{_nested_spark(inner[0])}>"
    if kind == exp.DataType.Type.MAP:
        return f"map<{_nested_spark(inner[0])},{_nested_spark(inner[1])}>"
    fields = [f"{_field_name(field)}:{_nested_spark(field.args['kind'])}" for field in inner]
    return f"struct<{','.join(fields)}>"


def _field_name(field: exp.Expression) -> str:
    """A struct field's name, folded as a column's (upper case unless quoted, SPEC R4), so
    that ``s.x`` finds the field ``x`` declared; one Spark DDL would quote is refused."""
    name = normalize(field.this)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise UnsupportedError(
            f"Struct field name {name!r} is not supported: use letters, digits, _."
        )
    return name


def _string(data_type: exp.DataType) -> ColumnType:
    """VARCHAR, STRING, TEXT, CHAR ... with or without a length, as Snowflake has them:
    every one is a VARCHAR; CHAR without one is VARCHAR(1); a CHAR is not padded."""
    if not data_type.expressions:
        fixed = data_type.this in (exp.DataType.Type.CHAR, exp.DataType.Type.NCHAR)
        return ColumnType("VARCHAR(1)", "string") if fixed else ColumnType("VARCHAR", "string")
    text = data_type.expressions[0].name
    if not text.isdigit() or not 1 <= int(text) <= MAX_LENGTH:
        raise InvalidValue(
            f"SQL compilation error: invalid length {text} of {data_type.sql('snowflake')}: "
            f"a string column holds 1 to {MAX_LENGTH} characters."
        )
    return ColumnType(f"VARCHAR({int(text)})", "string")


def from_spark(spark_type: str) -> ColumnType:
    """The column type of a Spark result column (CTAS, ``simpleString()`` form) or of a
    Delta column (:func:`delta_spark`): primitives as Rewind's own columns hold them,
    nested types as they are, shown as Snowflake's structured types (``ARRAY(VARCHAR)``,
    ``OBJECT(city VARCHAR)``, ``MAP(VARCHAR, NUMBER(38,0))``)."""
    if is_nested(spark_type):  # its field names keep their case
        spark_arrow(spark_type)  # a type it can store, or UnsupportedError
        _no_inner_variant(spark_type)
        return ColumnType(_structured(spark_type), spark_type)
    return _primitive(spark_type.lower())


def _primitive(spark_type: str) -> ColumnType:
    if spark_type in ("int", "smallint", "tinyint", "bigint", "long", "integer", "short", "byte"):
        return ColumnType("NUMBER(38,0)", "bigint")
    if spark_type in ("float", "double"):
        return ColumnType("FLOAT", "double")
    if spark_type.startswith("decimal("):
        precision, scale = spark_type.removeprefix("decimal(").rstrip(")").split(",")
        if int(scale) == 0:
            return ColumnType("NUMBER(38,0)", "bigint")
        return ColumnType(f"NUMBER({precision},{scale})", spark_type)
    sized = _SIZED.fullmatch(spark_type)
    if sized:  # a declared length (another engine's: :data:`DECLARED_TYPE`)
        return ColumnType(f"{sized[1].upper()}({sized[2]})", "string")
    if spark_type.startswith(("string", "varchar", "char")) or spark_type == "void":
        return ColumnType("VARCHAR", "string")
    if spark_type == "timestamp_ntz":  # another engine's wall-clock times (Snowflake's NTZ)
        return _NTZ
    if spark_type == VARIANT.spark:
        return VARIANT
    if spark_type.startswith("timestamp"):
        return ColumnType("TIMESTAMP_TZ", "timestamp")
    names = {"boolean": "BOOLEAN", "date": "DATE", "binary": "BINARY"}
    if spark_type in names:
        return ColumnType(names[spark_type], spark_type)
    raise UnsupportedError(f"A column of Spark type {spark_type} cannot be stored.")


@dataclass(frozen=True)
class TypeNames:
    """How a dialect names nested types (``{}``: the inner names) and primitives."""

    array: str
    map: str
    struct: str
    primitive: Callable[[str], str]


def type_name(spark: str, names: TypeNames) -> str:
    """A dialect's name of a Spark type, nested ones field by field (``names``)."""
    if spark.startswith("array<"):
        return names.array.format(type_name(spark[6:-1], names))
    if spark.startswith("map<"):
        key, value = nested_parts(spark[4:-1])
        return names.map.format(type_name(key, names), type_name(value, names))
    if spark == "struct<>":
        raise UnsupportedError("A column cannot hold an OBJECT of no keys: give it its keys.")
    if spark.startswith("struct<"):
        fields = [part.split(":", 1) for part in nested_parts(spark[7:-1])]
        inner = ", ".join(f"{name} {type_name(kind, names)}" for name, kind in fields)
        return names.struct.format(inner)
    return names.primitive(spark)


# Snowflake's structured types (ARRAY(VARCHAR), OBJECT(city VARCHAR), MAP(...)).
SNOWFLAKE_NAMES = TypeNames(
    "ARRAY({})",
    "MAP({}, {})",
    "OBJECT({})",
    lambda spark: "TIMESTAMP_NTZ" if spark == "timestamp_ntz" else _primitive(spark).sql,
)


def _structured(spark: str) -> str:
    """Snowflake's name of a nested Spark type."""
    return type_name(spark, SNOWFLAKE_NAMES)
