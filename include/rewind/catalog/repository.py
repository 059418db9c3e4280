"""Catalog reads and writes used by the SQL front and (later) the lifecycle.

A :class:`Catalog` wraps one SQLAlchemy session, i.e. one transaction: a statement
opens one, does all its catalog work through it, and commits or rolls back as a
whole (SPEC R28).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, Select, func, select, update
from sqlalchemy.orm import Session

from rewind import retention
from rewind.catalog.models import (
    AccountParameter,
    CatalogObject,
    FileState,
    ObjectName,
    Role,
    RoleGrant,
    Statement,
    StatementObject,
    StorageRoot,
    TableVersion,
    User,
)
from rewind.constants import (
    ACCOUNT_DEFAULT_MIN_RETENTION_DAYS,
    ACCOUNT_DEFAULT_RETENTION_DAYS,
    ACCOUNTADMIN,
    DATABASE,
    DEFAULT_USER,
    IN_FAILSAFE,
    LIFECYCLE_ROLE,
    MIN_RETENTION_PARAM,
    PUBLIC_ROLE,
    RETENTION_PARAM,
    SCHEMA,
    SERVICE_USER,
    SYSTEM_USER,
    TABLE,
)
from rewind.errors import InvalidLocation
from rewind.identifiers import QualifiedName

ACCOUNT_DEFAULTS = {
    RETENTION_PARAM: ACCOUNT_DEFAULT_RETENTION_DAYS,
    MIN_RETENTION_PARAM: ACCOUNT_DEFAULT_MIN_RETENTION_DAYS,
}
CHILD_KIND = {DATABASE: SCHEMA, SCHEMA: TABLE}


@dataclass(frozen=True)
class KeptRoot:
    """A storage root the catalog records at first use and keeps (SPEC R4, R44, R48).

    Attributes:
        name: its row in ``storage_roots`` (catalog revision 0012).
        setting: the variable that sets it, which a refusal names.
        uri: the root as recorded (``Config.kept_roots``).
        holds: what the catalog has there: ``tables`` or ``fail-safe files``
            (``Catalog.keep_roots`` counts them).
    """

    name: str
    setting: str
    uri: str
    holds: str


# What the catalog has in a root it keeps (``KeptRoot.holds``, SPEC R4, R44, R48): the
# tables Rewind created (an external table's location is its own), and the fail-safe
# manifest's files, the ones on their way in or out included.
HELD: dict[str, Select[int]] = {
    "tables": select(func.count())
    .select_from(CatalogObject)
    .where(CatalogObject.kind == TABLE, CatalogObject.location.is_(None)),
    "fail-safe files": select(func.count())
    .select_from(FileState)
    .where(FileState.state.in_(IN_FAILSAFE)),
}


def table_locator(engine: Engine) -> Callable[[int], str | None]:
    """An external table's location by id, read in a session of its own (SPEC R41)."""

    def locate(table_id: int) -> str | None:
        with Session(engine) as session:
            return session.scalar(
                select(CatalogObject.location).where(CatalogObject.id == table_id)
            )

    return locate


class Catalog:
    """Typed access to the catalog tables inside one transaction."""

    def __init__(self, session: Session) -> None:
        self.session = session

    # -- bootstrap ------------------------------------------------------------------
    def bootstrap(self, now: datetime) -> None:
        """Create the built-in ADMIN user and ACCOUNTADMIN and PUBLIC roles on first use
        (PUBLIC also in homes made before access control), and the nightly lifecycle's
        role and service user (also in older homes), SPEC R37."""
        if self.session.get(Role, PUBLIC_ROLE) is None:
            self.session.add(Role(name=PUBLIC_ROLE, created_on=now))
        if self.session.get(Role, LIFECYCLE_ROLE) is None:
            self.session.add(Role(name=LIFECYCLE_ROLE, created_on=now))
            if self.session.get(User, SERVICE_USER) is None:
                self.session.add(
                    User(name=SERVICE_USER, default_role=LIFECYCLE_ROLE, created_on=now)
                )
                self.session.flush()
                self.session.add(
                    RoleGrant(role_name=LIFECYCLE_ROLE, user_name=SERVICE_USER, created_on=now)
                )
        if self.session.get(User, DEFAULT_USER) is not None:
            return
        self.session.add(Role(name=ACCOUNTADMIN, created_on=now))
        self.session.add(User(name=DEFAULT_USER, default_role=ACCOUNTADMIN, created_on=now))
        self.session.flush()
        self.session.add(RoleGrant(role_name=ACCOUNTADMIN, user_name=DEFAULT_USER, created_on=now))

    def external_tables(self, now: datetime, *, released: bool) -> list[CatalogObject]:
        """External tables (SPEC R41): those Rewind still governs, or (``released``) the
        dropped ones whose time travel is over, whose locations it let go of."""
        tables = self.session.scalars(
            select(CatalogObject).where(CatalogObject.location.is_not(None))
        )
        return [
            t
            for t in tables
            if retention.released(t.location, t.dropped_on, t.dropped_retention_days or 0, now)
            == released
        ]

    def user(self, name: str) -> User | None:
        return self.session.get(User, name)

    # -- account parameters (SPEC R5, R7) ------------------------------------------
    def account_parameter(self, name: str) -> int:
        row = self.session.get(AccountParameter, name)
        return ACCOUNT_DEFAULTS[name] if row is None else row.value

    def account_parameter_set(self, name: str) -> bool:
        """Whether ALTER ACCOUNT set ``name`` (its value is not the default)."""
        return self.session.get(AccountParameter, name) is not None

    def set_account_parameter(self, name: str, value: int | None) -> None:
        row = self.session.get(AccountParameter, name)
        if value is None:
            if row is not None:
                self.session.delete(row)
        elif row is None:
            self.session.add(AccountParameter(name=name, value=value))
        else:
            row.value = value

    # -- storage roots (SPEC R4, R44, R48) -------------------------------------------
    def keep_roots(self, roots: Iterable[KeptRoot]) -> dict[str, str]:
        """Record each root at first use, or refuse another one while the catalog has
        something there: a table's location is computed from the warehouse (R4) and a
        fail-safe file's from the fail-safe store (R12, R48), so a changed setting would
        lose sight of them (a purge, a recovery or FAILSAFE LIST would act on the wrong
        store). With nothing there, the new root is recorded.

        Returns:
            Each root's token (revision 0015), the catalog's mark in it
            (:func:`rewind.home.prepare_roots`): given at first use, in one conditional
            update, so that two first connections of one catalog agree on it.

        Raises:
            InvalidLocation: a root is not the recorded one and the catalog has something
                there; both are named.
        """
        tokens = {}
        for root in roots:
            token = self._keep_root(root).token
            if token is None:  # a catalog from before revision 0015
                self.session.execute(
                    update(StorageRoot)
                    .where(StorageRoot.name == root.name, StorageRoot.token.is_(None))
                    .values(token=uuid.uuid4().hex)
                    .execution_options(synchronize_session=False)
                )
                token = self.session.scalar(
                    select(StorageRoot.token).where(StorageRoot.name == root.name)
                )
            assert token is not None  # given above if it had none
            tokens[root.name] = token
        return tokens

    def _keep_root(self, root: KeptRoot) -> StorageRoot:
        row = self.session.get(StorageRoot, root.name)
        if row is None:
            row = StorageRoot(name=root.name, uri=root.uri, token=uuid.uuid4().hex)
            self.session.add(row)
            return row
        if row.uri != root.uri:
            held = self.session.scalar(HELD[root.holds])
            if held:
                raise InvalidLocation(
                    f"{root.setting} is set to {root.uri}, but the {held} {root.holds} of this "
                    f"catalog are in {row.uri}: set {root.setting} back (a storage root does "
                    "not move yet); nothing was written."
                )
            row.uri = root.uri
        return row

    # -- objects ---------------------------------------------------------------------
    def get(self, object_id: int) -> CatalogObject | None:
        return self.session.get(CatalogObject, object_id)

    def live(self, kind: str, parent_id: int, name: str) -> CatalogObject | None:
        return self.session.scalar(
            select(CatalogObject).where(
                CatalogObject.kind == kind,
                CatalogObject.parent_id == parent_id,
                CatalogObject.name == name,
                CatalogObject.dropped_on.is_(None),
            )
        )

    def dropped(self, kind: str, parent_id: int, name: str) -> list[CatalogObject]:
        """Dropped incarnations of a name, most recently dropped first (SPEC R21)."""
        return list(
            self.session.scalars(
                select(CatalogObject)
                .where(
                    CatalogObject.kind == kind,
                    CatalogObject.parent_id == parent_id,
                    CatalogObject.name == name,
                    CatalogObject.dropped_on.is_not(None),
                )
                .order_by(CatalogObject.dropped_on.desc(), CatalogObject.id.desc())
            )
        )

    def children(self, parent_id: int, kind: str, *, include_dropped: bool) -> list[CatalogObject]:
        query = select(CatalogObject).where(
            CatalogObject.parent_id == parent_id, CatalogObject.kind == kind
        )
        if not include_dropped:
            query = query.where(CatalogObject.dropped_on.is_(None))
        return list(self.session.scalars(query.order_by(CatalogObject.name, CatalogObject.id)))

    def objects(self, kind: str, parent_ids: Iterable[int] | None) -> list[CatalogObject]:
        query = select(CatalogObject).where(CatalogObject.kind == kind)
        if parent_ids is not None:
            query = query.where(CatalogObject.parent_id.in_(list(parent_ids)))
        return list(self.session.scalars(query.order_by(CatalogObject.name, CatalogObject.id)))

    def create(self, **fields: object) -> CatalogObject:
        obj = CatalogObject(**fields)
        self.session.add(obj)
        self.session.flush()
        self._record_place(obj, obj.created_on)
        return obj

    def move(self, obj: CatalogObject, parent_id: int, name: str, now: datetime) -> None:
        """RENAME / SWAP: a new place from ``now`` on; the history keeps the old one."""
        obj.parent_id, obj.name = parent_id, name
        self.session.flush()
        self._record_place(obj, now)

    def _record_place(self, obj: CatalogObject, now: datetime) -> None:
        self.session.add(
            ObjectName(object_id=obj.id, valid_from=now, parent_id=obj.parent_id, name=obj.name)
        )

    def ancestors(self, obj: CatalogObject) -> list[CatalogObject]:
        """The object and its containers, innermost first."""
        chain = [obj]
        while chain[-1].kind != DATABASE:
            parent = self.get(chain[-1].parent_id)
            if parent is None:  # pragma: no cover - guarded by the model
                break
            chain.append(parent)
        return chain

    def qualified_name(self, obj: CatalogObject) -> QualifiedName:
        """``database.schema.table`` (or shorter) as the object is named now (SPEC R4)."""
        return QualifiedName(tuple(o.name for o in reversed(self.ancestors(obj))))

    def is_transient(self, obj: CatalogObject) -> bool:
        """Transient if it or any container is transient (SPEC R2)."""
        return any(o.is_transient for o in self.ancestors(obj))

    def effective_retention(self, obj: CatalogObject) -> int:
        """Frozen at drop for dropped objects (R10, R11), inherited otherwise (R5–R7)."""
        if obj.dropped_on is not None and obj.dropped_retention_days is not None:
            return obj.dropped_retention_days
        chain: list[int | None] = [o.retention_days for o in self.ancestors(obj)]
        chain.append(self.account_parameter(RETENTION_PARAM))
        return retention.effective_retention(
            chain,
            account_min=self.account_parameter(MIN_RETENTION_PARAM),
            transient=self.is_transient(obj),
        )

    def _descendants(
        self, obj: CatalogObject, take: Callable[[CatalogObject], bool], *, include_dropped: bool
    ) -> list[CatalogObject]:
        """Children, grandchildren, ... of ``obj`` for which ``take`` holds."""
        found: list[CatalogObject] = []
        frontier = [obj]
        while frontier:
            parent = frontier.pop()
            kind = CHILD_KIND.get(parent.kind)
            if kind is None:
                continue
            for child in self.children(parent.id, kind, include_dropped=include_dropped):
                if take(child):
                    found.append(child)
                    frontier.append(child)
        return found

    def drop(self, obj: CatalogObject, now: datetime) -> list[CatalogObject]:
        """Drop ``obj`` and every live descendant (SPEC R11, R21).

        Descendants are retained for the container's effective retention at drop
        time and remember which drop took them, so UNDROP brings back exactly those.
        """
        days = self.effective_retention(obj)
        children = self._descendants(obj, lambda _child: True, include_dropped=False)
        for child in children:
            child.dropped_with = obj.id
        obj.dropped_with = None
        for item in [obj, *children]:
            item.dropped_on = now
            item.dropped_retention_days = days
        self.session.flush()
        return [obj, *children]

    def expire(self, now: datetime) -> list[CatalogObject]:
        """Drop every live table whose expiration time (BigQuery's ``expiration_timestamp``)
        is at or before ``now``, as of that time: it spends its time travel, then its
        fail-safe week, from then on, as a table dropped then (SPEC R10, R12, R27). Run
        before each statement and by the lifecycle's first step, so no statement sees a
        table past its expiration. Each drop is a statement of the log, of no user's
        (QUERY_HISTORY and ACCESS_HISTORY show what dropped the table and when, SPEC R36)."""
        expired = self.session.scalars(
            select(CatalogObject)
            .where(
                CatalogObject.expires_on.is_not(None),
                CatalogObject.expires_on <= now,
                CatalogObject.dropped_on.is_(None),
            )
            .order_by(CatalogObject.expires_on, CatalogObject.id)
        ).all()
        for obj in expired:
            assert obj.expires_on is not None
            self._log_expiration(obj, obj.expires_on)
            self.drop(obj, obj.expires_on)
        return list(expired)

    def _log_expiration(self, table: CatalogObject, when: datetime) -> None:
        """The drop of an expired table as a statement of the log, at its expiration."""
        query_id = str(uuid.uuid4())
        self.session.add(
            Statement(
                query_id=query_id,
                text=f"-- expiration_timestamp {when.isoformat()} passed\n"
                f"DROP TABLE {self.qualified_name(table)}",
                user_name=SYSTEM_USER,
                role_name="",
                start_time=when,
                end_time=when,
                status="SUCCESS",
                query_type="DROP",
                query_tag="expiration_timestamp",
            )
        )
        self.record_access(query_id, table.id, "DDL", operation="DROP")

    def undrop(self, obj: CatalogObject) -> list[CatalogObject]:
        """Bring back ``obj`` and the descendants its drop took (SPEC R21)."""
        taken = self._descendants(
            obj, lambda child: child.dropped_with == obj.id, include_dropped=True
        )
        for item in [obj, *taken]:
            item.dropped_on = None
            item.dropped_retention_days = None
            item.dropped_with = None
        self.session.flush()
        return [obj, *taken]

    # -- versions (SPEC R14) --------------------------------------------------------------
    def add_version(
        self, table_id: int, version: int, commit_time: datetime, query_id: str, operation: str
    ) -> None:
        self.session.add(
            TableVersion(
                table_id=table_id,
                version=version,
                commit_time=commit_time,
                query_id=query_id,
                operation=operation,
            )
        )
        self.session.flush()

    def versions(self, table_id: int) -> Sequence[TableVersion]:
        return list(
            self.session.scalars(
                select(TableVersion)
                .where(TableVersion.table_id == table_id)
                .order_by(TableVersion.version)
            )
        )

    def latest_version(self, table_id: int) -> TableVersion | None:
        return self.session.scalar(
            select(TableVersion)
            .where(TableVersion.table_id == table_id)
            .order_by(TableVersion.version.desc())
            .limit(1)
        )

    def last_commit_time(self, table_id: int) -> datetime | None:
        return self.session.scalar(
            select(func.max(TableVersion.commit_time)).where(TableVersion.table_id == table_id)
        )

    # -- statements (SPEC R14, R36) ---------------------------------------------------------
    def statement(self, query_id: str) -> Statement | None:
        return self.session.get(Statement, query_id)

    def record_access(
        self,
        query_id: str,
        object_id: int,
        access: str,
        *,
        operation: str | None = None,
        version: int | None = None,
        columns: list[str] | None = None,
        direct: bool = True,
    ) -> None:
        """Record that a statement read, wrote or changed by DDL an object (SPEC R14, R36),
        with the object's name now: ACCESS_HISTORY shows names as they were. ``direct``
        False: the statement reached the object through a container it named (the tables
        of a schema clone), see :mod:`rewind.sql.recording`."""
        obj = self.get(object_id)
        self.session.add(
            StatementObject(
                query_id=query_id,
                object_id=object_id,
                access=access,
                operation=operation,
                version=version,
                columns=columns,
                object_name=str(self.qualified_name(obj)) if obj is not None else None,
                direct=direct,
            )
        )

    def last_ddl(self, object_ids: Sequence[int]) -> dict[int, tuple[datetime, str]]:
        """When the last DDL statement on each of ``object_ids`` started, and its user
        (INFORMATION_SCHEMA's LAST_DDL / LAST_DDL_BY, SPEC R36); objects with none left
        out (the tables a schema or database clone made)."""
        rows = self.session.execute(
            select(StatementObject.object_id, Statement.start_time, Statement.user_name)
            .join(Statement, Statement.query_id == StatementObject.query_id)
            .where(StatementObject.access == "DDL", StatementObject.object_id.in_(object_ids))
            .order_by(Statement.start_time, StatementObject.id)
        )
        return {object_id: (start, user) for object_id, start, user in rows}

    def accesses(self, query_id: str, object_id: int) -> list[StatementObject]:
        return list(
            self.session.scalars(
                select(StatementObject).where(
                    StatementObject.query_id == query_id, StatementObject.object_id == object_id
                )
            )
        )
