"""Catalog reads and writes of users, roles and grants (SPEC R37).

A :class:`Grants` works inside the statement's catalog transaction, like
:class:`~rewind.catalog.repository.Catalog`: a failed GRANT leaves no row behind (R28).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from rewind.catalog.models import CatalogObject, ObjectGrant, Role, RoleGrant, User


class Grants:
    """Typed access to ``users``, ``roles``, ``role_grants`` and ``object_grants``."""

    def __init__(self, session: Session) -> None:
        self.session = session

    # -- roles and users ---------------------------------------------------------------------
    def role(self, name: str) -> Role | None:
        return self.session.get(Role, name)

    def user(self, name: str) -> User | None:
        return self.session.get(User, name)

    def roles(self) -> list[Role]:
        return list(self.session.scalars(select(Role).order_by(Role.name)))

    def users(self) -> list[User]:
        return list(self.session.scalars(select(User).order_by(User.name)))

    def create_role(self, name: str, now: datetime) -> None:
        self.session.add(Role(name=name, created_on=now))
        self.session.flush()

    def create_user(self, name: str, default_role: str, now: datetime) -> None:
        self.session.add(User(name=name, default_role=default_role, created_on=now))
        self.session.flush()

    def drop_role(self, name: str, heir: str) -> None:
        """Drop a role: its grants go, what it owns passes to ``heir`` (as in Snowflake)."""
        self.session.execute(
            update(CatalogObject).where(CatalogObject.owner_role == name).values(owner_role=heir)
        )
        self.session.execute(delete(ObjectGrant).where(ObjectGrant.role_name == name))
        self.session.execute(delete(RoleGrant).where(RoleGrant.role_name == name))
        self.session.execute(delete(Role).where(Role.name == name))

    def drop_user(self, name: str) -> None:
        self.session.execute(delete(RoleGrant).where(RoleGrant.user_name == name))
        self.session.execute(delete(User).where(User.name == name))

    # -- roles granted to users ----------------------------------------------------------------
    def holds(self, user: str, role: str) -> bool:
        return self.session.get(RoleGrant, (role, user)) is not None

    def grant_role(self, role: str, user: str, granted_by: str, now: datetime) -> None:
        if not self.holds(user, role):
            self.session.add(
                RoleGrant(role_name=role, user_name=user, granted_by=granted_by, created_on=now)
            )
            self.session.flush()

    def revoke_role(self, role: str, user: str) -> None:
        self.session.execute(
            delete(RoleGrant).where(RoleGrant.role_name == role, RoleGrant.user_name == user)
        )

    def role_grants(self, *, user: str | None = None, role: str | None = None) -> list[RoleGrant]:
        """Roles granted to ``user``, or the users ``role`` is granted to (neither: all)."""
        query = select(RoleGrant)
        if user is not None:
            query = query.where(RoleGrant.user_name == user)
        if role is not None:
            query = query.where(RoleGrant.role_name == role)
        return list(self.session.scalars(query.order_by(RoleGrant.role_name, RoleGrant.user_name)))

    # -- privileges on objects ------------------------------------------------------------------
    def grant(
        self, object_id: int, privilege: str, role: str, granted_by: str, now: datetime
    ) -> None:
        """Idempotent, as in Snowflake: granting a held privilege again changes nothing."""
        if self.session.get(ObjectGrant, (object_id, privilege, role)) is None:
            self.session.add(
                ObjectGrant(
                    object_id=object_id,
                    privilege=privilege,
                    role_name=role,
                    granted_by=granted_by,
                    created_on=now,
                )
            )
            self.session.flush()

    def copy(self, source_id: int, target_id: int, now: datetime) -> None:
        """Every privilege granted on ``source_id`` granted alike on ``target_id`` (never
        OWNERSHIP, which is no grant): Snowflake's COPY GRANTS and the children of a
        container clone."""
        for held in self.on_object(source_id):
            self.grant(target_id, held.privilege, held.role_name, held.granted_by, now)

    def revoke(self, object_id: int, privileges: Iterable[str], role: str | None) -> None:
        """Revoke ``privileges`` from ``role`` (every role when None) on one object."""
        query = delete(ObjectGrant).where(
            ObjectGrant.object_id == object_id, ObjectGrant.privilege.in_(list(privileges))
        )
        if role is not None:
            query = query.where(ObjectGrant.role_name == role)
        self.session.execute(query)

    def privileges(self, object_id: int, roles: Iterable[str]) -> set[str]:
        """What ``roles`` were granted on the object."""
        return set(
            self.session.scalars(
                select(ObjectGrant.privilege).where(
                    ObjectGrant.object_id == object_id, ObjectGrant.role_name.in_(list(roles))
                )
            )
        )

    def on_object(self, object_id: int) -> list[ObjectGrant]:
        return list(
            self.session.scalars(
                select(ObjectGrant)
                .where(ObjectGrant.object_id == object_id)
                .order_by(ObjectGrant.privilege, ObjectGrant.role_name)
            )
        )

    def to_role(self, role: str) -> list[tuple[ObjectGrant, CatalogObject]]:
        """Grants to ``role`` on live objects, with the objects."""
        rows = self.session.execute(
            select(ObjectGrant, CatalogObject)
            .join(CatalogObject, CatalogObject.id == ObjectGrant.object_id)
            .where(ObjectGrant.role_name == role, CatalogObject.dropped_on.is_(None))
            .order_by(CatalogObject.kind, CatalogObject.id, ObjectGrant.privilege)
        )
        return [(grant, obj) for grant, obj in rows.tuples()]

    def owned(self, role: str) -> list[CatalogObject]:
        """Live objects ``role`` owns."""
        return list(
            self.session.scalars(
                select(CatalogObject)
                .where(CatalogObject.owner_role == role, CatalogObject.dropped_on.is_(None))
                .order_by(CatalogObject.kind, CatalogObject.id)
            )
        )

    def reachable_ids(self, roles: Iterable[str]) -> set[int]:
        """Objects (live or dropped) that ``roles`` own or hold any privilege on."""
        roles = list(roles)
        owned = select(CatalogObject.id).where(CatalogObject.owner_role.in_(roles))
        granted = select(ObjectGrant.object_id).where(ObjectGrant.role_name.in_(roles))
        return set(self.session.scalars(owned.union(granted)))

    def parents(self, ids: Iterable[int]) -> dict[int, int]:
        """Object id -> parent id (0 for databases)."""
        rows = self.session.execute(
            select(CatalogObject.id, CatalogObject.parent_id).where(CatalogObject.id.in_(list(ids)))
        )
        return {object_id: parent_id for object_id, parent_id in rows.tuples()}
