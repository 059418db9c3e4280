"""CREATE EXTERNAL TABLE ... LOCATION = '<path>' TABLE_FORMAT = DELTA (SPEC R41, R42).

An existing Delta table is registered where it is: no file is moved, copied or
rewritten. Its columns come from its Delta log, its versions (older ones included) are
folded into the timeline like any other writer's commits (SPEC R40), and Rewind raises
its ``delta.deletedFileRetentionDuration`` / ``delta.logRetentionDuration`` so that
another engine's VACUUM cannot cut into time travel (R42). Every refusal happens before
anything is written.

A location is a local path or an S3 prefix (``s3://bucket/path``, SPEC R44): one with
credentials in it is refused (R45), the store is asked once whether the bucket answers
these settings (:func:`rewind.storage.objectstore.probe`, R49), and locations are compared
as prefixes (LOCATION_IN_USE).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from sqlglot import exp

from rewind import security
from rewind.catalog.models import CatalogObject
from rewind.errors import (
    InvalidLocation,
    LocationInUse,
    SqlSyntaxError,
    StorageError,
    UnsupportedError,
)
from rewind.sql import names
from rewind.sql.tables import keep_history
from rewind.sql.values import ObjectProperties, literal
from rewind.statement import Context
from rewind.storage import location, log, objectstore, timeline
from rewind.storage.location import Root

FORMAT = "DELTA"


def is_external(tree: exp.Create) -> bool:
    props = tree.args.get("properties")
    return any(isinstance(p, exp.ExternalProperty) for p in (props.expressions if props else []))


def properties(ctx: Context, tree: exp.Create) -> tuple[str, ObjectProperties]:
    """(LOCATION as written, retention and comment) of a registration; ACCOUNTADMIN only
    (a location is reached by path, not by grants)."""
    security.require_accountadmin(ctx, "CREATE EXTERNAL TABLE")
    if isinstance(tree.this, exp.Schema) or tree.expression is not None or tree.args.get("clone"):
        raise SqlSyntaxError(
            "SQL compilation error: an external Delta table takes its columns from its "
            "Delta log; CREATE EXTERNAL TABLE has no column list, AS or CLONE."
        )
    return _properties(tree)


def locate(ctx: Context, text: str) -> Root:
    """The resolved location of a registration, refused (changing nothing) when it is
    missing, unreadable, not a Delta table, Rewind's own or already governed (R41)."""
    root = resolve_location(text)
    check_location(ctx.own_roots, root)
    _not_governed(ctx, root)
    return root


def register(ctx: Context, obj: CatalogObject, root: Root) -> None:
    """Make the new table ``obj`` the Delta table at ``root``, with its history."""
    obj.location = str(root)  # an S3 URI holds no credentials (resolve_location, R45)
    ctx.store.register(obj.id, root)
    ctx.undo.append(lambda: ctx.store.register(obj.id, None))
    ctx.catalog.session.flush()
    newest = timeline.sync(ctx.catalog, ctx.store, obj)  # history before registration too
    if newest < 0:
        raise InvalidLocation(f"Location '{root}' holds no Delta commit Rewind can read.")
    current = ctx.store.snapshot(obj.id, newest)  # SPEC R43: refuses what it cannot read
    obj.columns = [c.as_json() for c in timeline.columns_of(current.metadata or {}, str(root))]
    keep_history(ctx, obj)  # SPEC R42


def _properties(tree: exp.Create) -> tuple[str, ObjectProperties]:
    """(LOCATION as written, retention and comment); TABLE_FORMAT must be DELTA."""
    location: str | None = None
    table_format: str | None = None
    props = ObjectProperties()
    for prop in tree.args["properties"].expressions:
        if isinstance(prop, exp.ExternalProperty):
            continue
        if isinstance(prop, exp.LocationProperty):
            location = _text(prop.this)
        elif isinstance(prop, exp.SchemaCommentProperty):
            props.comment = literal(prop.this)
        elif isinstance(prop, exp.Property) and prop.name.upper() == "TABLE_FORMAT":
            table_format = _text(prop.args["value"]).upper()
        elif isinstance(prop, exp.Property) and prop.name.upper() == "DATA_RETENTION_TIME_IN_DAYS":
            props.retention = literal(prop.args["value"])
        else:
            raise UnsupportedError(
                f"Unsupported property of an external table: {prop.sql('snowflake')}."
            )
    if not location:
        raise SqlSyntaxError("SQL compilation error: CREATE EXTERNAL TABLE needs LOCATION = '...'.")
    if table_format != FORMAT:
        raise UnsupportedError(
            f"External tables must be Delta tables: TABLE_FORMAT = DELTA "
            f"(got {table_format or 'none'})."
        )
    return location, props


def _text(node: exp.Expression) -> str:
    """A property value as written: a string literal, or sqlglot's quoted Var."""
    if isinstance(node, exp.Literal):
        return str(node.this)
    text = node.name if isinstance(node, exp.Var | exp.Identifier) else node.sql("snowflake")
    if len(text) >= 2 and text[0] == text[-1] == "'":
        text = text[1:-1].replace("''", "'")
    return text


def resolve_location(text: str) -> Root:
    """The real path a LOCATION names (``file://`` URIs, ``..`` and symlinks resolved), or
    the S3 prefix (:func:`resolve_object_store`).

    Raises:
        InvalidLocation: not a local path, missing, unreadable or not a Delta table.
    """
    if objectstore.is_object_store(text):
        return resolve_object_store(text)
    parsed = urlparse(text)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise InvalidLocation(f"Location '{text}' names another host.")
        raw = unquote(parsed.path)
    elif parsed.scheme and len(parsed.scheme) > 1:
        raise InvalidLocation(
            f"Location '{objectstore.redact(text)}': only local paths, file:// and s3:// "
            "URIs are supported."
        )
    else:
        raw = text
    if not os.path.isabs(os.path.expanduser(raw)):
        raise InvalidLocation(f"Location '{text}' must be an absolute path.")
    try:
        path = Path(raw).expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        raise InvalidLocation(f"Location '{text}' does not exist.") from None
    delta_log = path / log.LOG
    if not path.is_dir() or not delta_log.is_dir():
        raise InvalidLocation(f"Location '{text}' is not a Delta table (no {log.LOG}).")
    for folder in (path, delta_log):
        if not os.access(folder, os.R_OK | os.X_OK):
            raise InvalidLocation(f"Location '{text}' cannot be read by Rewind ({folder}).")
        if not os.access(folder, os.W_OK):
            raise InvalidLocation(
                f"Location '{text}' cannot be written by Rewind ({folder}): it could not keep "
                "the table's history from other engines' VACUUM (SPEC R42)."
            )
    return path


def resolve_object_store(text: str) -> Root:
    """The S3 prefix a LOCATION names (``s3://`` or ``s3a://``, no trailing ``/``), once
    the store has answered: a LIST of one key (the probe) and a LIST of ``_delta_log``.

    Raises:
        InvalidLocation: credentials in the URI (SPEC R45), no AWS settings at all, a bad
            or missing bucket, no Delta log under the prefix.
        ConfigurationError: no credentials, or the store rejects them (SPEC R49).
        StorageError: the store does not answer or refuses the listing.
    """
    root = location.of(text)
    if not objectstore.configured():
        raise InvalidLocation(
            f"Location '{root}': no object store is configured (the AWS settings: "
            "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile)."
        )
    objectstore.probe(str(root))
    try:
        entries = location.names(root / log.LOG)
    except OSError as exc:
        raise StorageError(f"Location '{root}' cannot be listed: {exc.strerror}.") from None
    if not entries:
        raise InvalidLocation(f"Location '{root}' is not a Delta table (no {log.LOG}).")
    return root


def check_location(own_roots: tuple[Root, ...], root: Root) -> None:
    """Refuse a location inside Rewind's own storage roots, or holding one."""
    for own_root in own_roots:
        own = own_root.resolve() if isinstance(own_root, Path) else own_root
        if location.overlaps(root, own):
            raise InvalidLocation(
                f"Location '{root}' overlaps Rewind's own storage ({own}); "
                "only tables outside it can be registered."
            )


def _not_governed(ctx: Context, root: Root) -> None:
    """A location (or one inside or around it) already governed, live or dropped; S3
    locations compare as key prefixes, whole segments only."""
    for other in ctx.catalog.external_tables(ctx.now, released=False):
        governed = location.of(str(other.location))
        if location.overlaps(root, governed):
            what = "dropped table" if other.dropped_on is not None else "table"
            shown = names.qualified(ctx, other) if security.can_see(ctx, other) else "another name"
            raise LocationInUse(
                f"Location '{root}' is already governed by {what} {shown} "
                f"(registered at {governed})."
            )
