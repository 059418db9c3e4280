"""Access control (SPEC R37, R38): who may read, write, drop, undrop and administer.

The model (README, "Access control"):

* A session acts with one role: the user's default role while it is granted to the
  user, else ``PUBLIC``; ``USE ROLE`` switches to another granted role. Every user
  holds ``PUBLIC``, and what ``PUBLIC`` owns or was granted reaches every role.
* ``ACCOUNTADMIN`` may do everything. Any other role holds a privilege on an object
  when it owns the object or was granted that privilege on that very object: no
  inheritance from containers, no USAGE, no FUTURE grants (kept simple on purpose).
* Account-level actions (CREATE DATABASE, ALTER ACCOUNT, users and roles, fail-safe
  recovery, ``REWIND.ACCOUNT_USAGE``) need ``ACCOUNTADMIN``. The lifecycle needs
  ``ACCOUNTADMIN`` or ``REWIND_LIFECYCLE``, the built-in role of the service user
  ``REWIND_SERVICE`` that scheduled Airflow runs act as: it runs the lifecycle and
  holds nothing else (it reads no table and no fail-safe file through SQL).
* An object the role holds nothing on (itself or inside it) answers exactly as a
  missing one: OBJECT_NOT_FOUND, never ACCESS_DENIED (no existence leak).

Every check raises :class:`~rewind.errors.AccessDenied` naming the missing privilege,
the object and the role, before the statement reads or changes anything (R28, R39).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rewind.catalog.grants import Grants
from rewind.constants import ACCOUNTADMIN, DATABASE, LIFECYCLE_ROLE, PUBLIC_ROLE, SCHEMA, TABLE
from rewind.errors import AccessDenied, InvalidValue, UnknownUser, UnsupportedError

if TYPE_CHECKING:
    from rewind.catalog.models import CatalogObject, User
    from rewind.statement import Context

SELECT, INSERT, UPDATE, DELETE = "SELECT", "INSERT", "UPDATE", "DELETE"
CREATE_TABLE, CREATE_SCHEMA, OWNERSHIP = "CREATE TABLE", "CREATE SCHEMA", "OWNERSHIP"
CREATE_FUNCTION = "CREATE FUNCTION"
# What can be granted on each kind of object (OWNERSHIP on all three, by transfer).
PRIVILEGES: dict[str, tuple[str, ...]] = {
    TABLE: (SELECT, INSERT, UPDATE, DELETE),
    SCHEMA: (CREATE_TABLE, CREATE_FUNCTION),
    DATABASE: (CREATE_SCHEMA,),
}
# The privilege on a container that creating (or undropping) a child in it needs.
CREATE_IN = {SCHEMA: CREATE_TABLE, DATABASE: CREATE_SCHEMA}
ALL = ("ALL", "ALL PRIVILEGES")


@dataclass(frozen=True)
class Need:
    """One privilege a statement needs on ``obj``; with ``obj`` None, an account-level
    action only ACCOUNTADMIN may do, which ``privilege`` names (``CREATE DATABASE``)."""

    privilege: str
    obj: CatalogObject | None = None


# -- pure rules ---------------------------------------------------------------------------------
def acting_roles(role: str) -> tuple[str, ...]:
    """The roles whose ownerships and grants a session with ``role`` uses."""
    return (role,) if role == PUBLIC_ROLE else (role, PUBLIC_ROLE)


def owns(role: str, owner: str) -> bool:
    """ACCOUNTADMIN acts as the owner of everything (SPEC R37)."""
    return role == ACCOUNTADMIN or owner in acting_roles(role)


def expand(privileges: Sequence[str], kind: str) -> list[str]:
    """The privileges a GRANT or REVOKE names on an object of ``kind``.

    ``ALL [PRIVILEGES]`` means every grantable privilege of the kind except OWNERSHIP.

    Raises:
        InvalidValue: a privilege that does not apply to ``kind`` (SELECT on a schema).
        UnsupportedError: a Snowflake privilege Rewind does not model (USAGE, ...).
    """
    found: list[str] = []
    for privilege in privileges:
        if privilege in ALL:
            found += [p for p in PRIVILEGES[kind] if p not in found]
            continue
        if privilege not in (OWNERSHIP, *(p for ps in PRIVILEGES.values() for p in ps)):
            raise UnsupportedError(
                f"Privilege {privilege} is not supported: Rewind grants SELECT, INSERT, "
                "UPDATE, DELETE, CREATE TABLE, CREATE SCHEMA and OWNERSHIP (no USAGE is needed)."
            )
        if privilege != OWNERSHIP and privilege not in PRIVILEGES[kind]:
            raise InvalidValue(f"Privilege {privilege} cannot be granted on a {kind.lower()}.")
        if privilege not in found:
            found.append(privilege)
    return found


def with_ancestors(ids: Iterable[int], parents: dict[int, int]) -> set[int]:
    """``ids`` and every container above them (``parents``: id -> parent id, 0 at the top)."""
    found: set[int] = set()
    for object_id in ids:
        while object_id and object_id not in found:
            found.add(object_id)
            object_id = parents.get(object_id, 0)
    return found


# -- the session's role -------------------------------------------------------------------------
def session_role(grants: Grants, user: User, wanted: str | None = None) -> str:
    """``wanted`` (default: the user's default role) if the user holds it, else PUBLIC."""
    role = wanted or user.default_role
    return role if role == PUBLIC_ROLE or grants.holds(user.name, role) else PUBLIC_ROLE


def refresh_role(ctx: Context) -> None:
    """Before each statement: a role revoked since USE ROLE falls back to PUBLIC.

    Raises:
        UnknownUser: the session's user was dropped.
    """
    grants = Grants(ctx.catalog.session)
    user = grants.user(ctx.state.user)
    if user is None:
        raise UnknownUser(f"User '{ctx.state.user}' does not exist.")
    ctx.state.role = session_role(grants, user, ctx.state.role)


# -- checks -----------------------------------------------------------------------------------
def require_accountadmin(ctx: Context, what: str) -> None:
    """Account parameters, fail-safe recovery and the audit views need ACCOUNTADMIN."""
    if ctx.state.role != ACCOUNTADMIN:
        raise AccessDenied(f"{what} requires role ACCOUNTADMIN (current role {ctx.state.role}).")


def require_lifecycle(role: str) -> None:
    """The nightly lifecycle: ACCOUNTADMIN or the lifecycle's own role (SPEC R37)."""
    if role not in (ACCOUNTADMIN, LIFECYCLE_ROLE):
        raise AccessDenied(
            f"The lifecycle requires role ACCOUNTADMIN or {LIFECYCLE_ROLE} (current role {role})."
        )


def has(ctx: Context, privilege: str, obj: CatalogObject) -> bool:
    """Whether the session's role holds ``privilege`` on ``obj`` (SPEC R37)."""
    role = ctx.state.role
    if owns(role, obj.owner_role):
        return True
    if privilege == OWNERSHIP:
        return False
    return privilege in Grants(ctx.catalog.session).privileges(obj.id, acting_roles(role))


def require(ctx: Context, privilege: str, obj: CatalogObject) -> None:
    """Raise AccessDenied naming ``privilege``, ``obj`` and the role unless it is held."""
    if has(ctx, privilege, obj):
        return
    what = ("dropped " if obj.dropped_on is not None else "") + obj.kind.lower()
    raise AccessDenied(
        f"Insufficient privileges: role {ctx.state.role} lacks {privilege} on "
        f"{what} {ctx.catalog.qualified_name(obj)}."
    )


def check(ctx: Context, needs: Iterable[Need]) -> None:
    """Every need, in order; the first one missing raises."""
    for need in needs:
        if need.obj is None:
            require_accountadmin(ctx, need.privilege)
        else:
            require(ctx, need.privilege, need.obj)


def create_need(kind: str, parent: CatalogObject | None) -> Need:
    """What creating (or undropping) an object of ``kind`` in ``parent`` needs."""
    if kind == DATABASE or parent is None:
        return Need(f"CREATE {kind}")
    return Need(CREATE_IN[parent.kind], parent)


def require_undrop(ctx: Context, obj: CatalogObject) -> None:
    """SPEC R37: UNDROP needs OWNERSHIP of the dropped object and CREATE on its parent."""
    parent = ctx.catalog.get(obj.parent_id) if obj.parent_id else None
    check(ctx, [Need(OWNERSHIP, obj), create_need(obj.kind, parent)])


def copy_grants(ctx: Context, source: CatalogObject, target: CatalogObject) -> None:
    """``target`` gets every privilege granted on ``source`` (not its OWNERSHIP)."""
    Grants(ctx.catalog.session).copy(source.id, target.id, ctx.now)


def visible_ids(ctx: Context) -> set[int] | None:
    """Objects SHOW lists to the session's role: those it owns or holds a privilege on,
    and their containers (None: everything, for ACCOUNTADMIN)."""
    return visible_to(Grants(ctx.catalog.session), ctx.state.role)


def visible_to(grants: Grants, role: str) -> set[int] | None:
    """:func:`visible_ids` of ``role`` (the Rewind page's viewer has no session)."""
    if role == ACCOUNTADMIN:
        return None
    reached = grants.reachable_ids(acting_roles(role))
    parents = grants.parents(reached)
    parents |= grants.parents(set(parents.values()) - set(parents))
    return with_ancestors(reached, parents)


def can_see(ctx: Context, obj: CatalogObject) -> bool:
    """Whether the role may learn that ``obj`` exists: it holds something on it or on an
    object inside it (SPEC R37). To any other role the object answers exactly as a
    missing one (OBJECT_NOT_FOUND), in every statement and in UNDROP."""
    visible = visible_ids(ctx)
    return visible is None or obj.id in visible


def require_member(ctx: Context, role: str) -> None:
    """SHOW GRANTS TO|OF ROLE: ACCOUNTADMIN, or a user who holds the role."""
    if ctx.state.role == ACCOUNTADMIN or role == PUBLIC_ROLE:
        return
    if not Grants(ctx.catalog.session).holds(ctx.state.user, role):
        raise AccessDenied(
            f"Insufficient privileges: role {role} is not granted to user {ctx.state.user} "
            f"(current role {ctx.state.role})."
        )
