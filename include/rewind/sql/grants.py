"""Run the statements of access control (SPEC R37): roles, users, grants, USE ROLE.

Who may run them was checked before (:mod:`rewind.sql.needs`): users, roles and role
grants need ACCOUNTADMIN, privileges on an object need its OWNERSHIP. Role
membership (USE ROLE, SHOW GRANTS TO|OF) is checked here, where the role is looked up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from rewind import security
from rewind.catalog.grants import Grants
from rewind.catalog.models import CatalogObject, ObjectGrant, RoleGrant
from rewind.constants import ACCOUNTADMIN, PUBLIC_ROLE
from rewind.errors import AccessDenied, InvalidValue, ObjectAlreadyExists, ObjectNotFound
from rewind.result import Result
from rewind.sql import names
from rewind.sql.access import (
    AccessStatement,
    CreatePrincipal,
    DropPrincipal,
    GrantPrivileges,
    GrantRole,
    ShowGrants,
    ShowPrincipals,
    UseRole,
)
from rewind.sql.ddl import live_object
from rewind.sql.show import like_pattern
from rewind.statement import Context

# SHOW GRANTS ON | TO ROLE and SHOW GRANTS TO USER | OF ROLE, with Snowflake's columns.
PRIVILEGE_COLUMNS = [
    "created_on",
    "privilege",
    "granted_on",
    "name",
    "granted_to",
    "grantee_name",
    "grant_option",
    "granted_by",
]
ROLE_COLUMNS = ["created_on", "role", "granted_to", "grantee_name", "granted_by"]
# SHOW ROLES and SHOW USERS: Snowflake's columns that Rewind's roles and users have.
ROLES_COLUMNS = [
    "created_on",
    "name",
    "is_default",
    "is_current",
    "is_inherited",
    "assigned_to_users",
    "granted_to_roles",
    "granted_roles",
    "owner",
    "comment",
]
USERS_COLUMNS = ["name", "created_on", "login_name", "display_name", "default_role", "owner"]
BUILT_IN_ROLES = (ACCOUNTADMIN, PUBLIC_ROLE)
DONE = "Statement executed successfully."


def _grants(ctx: Context) -> Grants:
    return Grants(ctx.catalog.session)


def _role(ctx: Context, name: str) -> str:
    if _grants(ctx).role(name) is None:
        raise ObjectNotFound(f"Role '{name}' does not exist or not authorized.")
    return name


def _user(ctx: Context, name: str) -> str:
    if _grants(ctx).user(name) is None:
        raise ObjectNotFound(f"User '{name}' does not exist or not authorized.")
    return name


def create_principal(ctx: Context, tree: CreatePrincipal) -> Result:
    """CREATE ROLE | USER; a user without DEFAULT_ROLE acts as PUBLIC."""
    grants = _grants(ctx)
    exists = grants.role(tree.name) if tree.kind == "ROLE" else grants.user(tree.name)
    if exists is not None:
        if tree.if_not_exists:
            return ctx.status(f"{tree.name} already exists, statement succeeded.")
        raise ObjectAlreadyExists(f"{tree.kind.capitalize()} '{tree.name}' already exists.")
    if tree.kind == "ROLE":
        grants.create_role(tree.name, ctx.now)
    else:
        default_role = _role(ctx, tree.default_role or PUBLIC_ROLE)
        grants.create_user(tree.name, default_role, ctx.now)
    return ctx.status(f"{tree.kind.capitalize()} {tree.name} successfully created.")


def drop_principal(ctx: Context, tree: DropPrincipal) -> Result:
    """DROP ROLE (what it owns passes to the dropping role, as in Snowflake) | DROP USER."""
    if tree.kind == "ROLE" and tree.name in BUILT_IN_ROLES:
        raise InvalidValue(f"Role {tree.name} is built in and cannot be dropped.")
    if tree.kind == "USER" and tree.name == ctx.state.user:
        raise InvalidValue(f"User {tree.name} cannot drop itself.")
    try:
        (_role if tree.kind == "ROLE" else _user)(ctx, tree.name)
    except ObjectNotFound:
        if tree.if_exists:
            return ctx.status(f"Drop statement executed successfully ({tree.name} does not exist).")
        raise
    if tree.kind == "ROLE":
        _grants(ctx).drop_role(tree.name, heir=ctx.state.role)
    else:
        _grants(ctx).drop_user(tree.name)
    return ctx.status(f"{tree.name} successfully dropped.")


def grant_role(ctx: Context, tree: GrantRole) -> Result:
    role, user = _role(ctx, tree.role), _user(ctx, tree.user)
    grants = _grants(ctx)
    if tree.grant:
        grants.grant_role(role, user, ctx.state.role, ctx.now)
        return ctx.status(DONE)
    if role == ACCOUNTADMIN and [g.user_name for g in grants.role_grants(role=role)] == [user]:
        raise InvalidValue(f"User {user} is the last one holding ACCOUNTADMIN; grant it first.")
    grants.revoke_role(role, user)
    return ctx.status(DONE)


def grant_privileges(ctx: Context, tree: GrantPrivileges) -> Result:
    """GRANT | REVOKE privileges; GRANT OWNERSHIP transfers ``owner_role``, keeping the
    other grants unless REVOKE CURRENT GRANTS."""
    obj = live_object(ctx, tree.kind, names.parts(tree.target))
    role = _role(ctx, tree.role)
    grants = _grants(ctx)
    if tree.privileges == (security.OWNERSHIP,):
        if tree.revoke_current:
            grants.revoke(obj.id, security.PRIVILEGES[obj.kind], None)
        obj.owner_role = role
    elif tree.grant:
        for privilege in tree.privileges:
            grants.grant(obj.id, privilege, role, ctx.state.role, ctx.now)
    else:
        grants.revoke(obj.id, tree.privileges, role)
    return ctx.status(DONE)


def _privilege_row(ctx: Context, obj: CatalogObject, grant: ObjectGrant | None) -> list[Any]:
    """A SHOW GRANTS row: ``grant``, or the object's ownership when None."""
    name = str(names.qualified(ctx, obj))
    if grant is None:
        owner = obj.owner_role
        return [obj.created_on, "OWNERSHIP", obj.kind, name, "ROLE", owner, "true", owner]
    return [
        grant.created_on,
        grant.privilege,
        obj.kind,
        name,
        "ROLE",
        grant.role_name,
        "false",
        grant.granted_by,
    ]


def _role_row(grant: RoleGrant) -> list[Any]:
    return [grant.created_on, grant.role_name, "USER", grant.user_name, grant.granted_by or ""]


def show_grants(ctx: Context, tree: ShowGrants) -> Result:
    """SHOW GRANTS ON obj (its owner) | TO ROLE r, OF ROLE r (a holder of r) | TO USER u
    (u itself; without a name, the current user)."""
    grants = _grants(ctx)
    if tree.scope == "ON":
        assert tree.kind is not None and tree.target is not None
        obj = live_object(ctx, tree.kind, names.parts(tree.target))
        rows = [_privilege_row(ctx, obj, None)]
        rows += [_privilege_row(ctx, obj, g) for g in grants.on_object(obj.id)]
        return ctx.result(PRIVILEGE_COLUMNS, rows)
    if tree.scope == "TO USER":
        user = _user(ctx, tree.name or ctx.state.user)
        if user != ctx.state.user:
            security.require_accountadmin(ctx, f"SHOW GRANTS TO USER {user}")
        return ctx.result(ROLE_COLUMNS, [_role_row(g) for g in grants.role_grants(user=user)])
    role = _role(ctx, tree.name or "")
    security.require_member(ctx, role)
    if tree.scope == "OF ROLE":
        return ctx.result(ROLE_COLUMNS, [_role_row(g) for g in grants.role_grants(role=role)])
    rows = [_privilege_row(ctx, obj, None) for obj in grants.owned(role)]
    rows += [_privilege_row(ctx, obj, g) for g, obj in grants.to_role(role)]
    rows.sort(key=lambda row: (row[2], row[3], row[1]))
    return ctx.result(PRIVILEGE_COLUMNS, rows)


def show_principals(ctx: Context, tree: ShowPrincipals) -> Result:
    """SHOW ROLES | USERS [LIKE]: to ACCOUNTADMIN all of them; to another role the roles
    its user holds (and PUBLIC), and that user alone (SPEC R37: a role learns only what it
    reaches)."""
    grants = _grants(ctx)
    admin = ctx.state.role == ACCOUNTADMIN
    pattern = like_pattern(tree.like) if tree.like is not None else None
    user = grants.user(ctx.state.user)
    assert user is not None  # security.refresh_role checked it before the statement
    if tree.kind == "USER":
        users = [u for u in grants.users() if admin or u.name == user.name]
        rows = [
            [u.name, u.created_on, u.name, u.name, u.default_role, ACCOUNTADMIN]
            for u in users
            if pattern is None or pattern.fullmatch(u.name)
        ]
        return ctx.result(USERS_COLUMNS, rows)
    holders = Counter(g.role_name for g in grants.role_grants())  # one query, every role
    held = {g.role_name for g in grants.role_grants(user=user.name)} | {PUBLIC_ROLE}
    rows = []
    for role in grants.roles():
        if (admin or role.name in held) and (pattern is None or pattern.fullmatch(role.name)):
            rows.append(
                [
                    role.created_on,
                    role.name,
                    "Y" if role.name == user.default_role else "N",
                    "Y" if role.name == ctx.state.role else "N",
                    "N",  # no role hierarchies: a role is held, never inherited
                    holders[role.name],
                    0,
                    0,
                    "" if role.name in BUILT_IN_ROLES else ACCOUNTADMIN,
                    "",
                ]
            )
    return ctx.result(ROLES_COLUMNS, rows)


def use_role(ctx: Context, tree: UseRole) -> Result:
    """USE ROLE: only a role granted to the session's user (every user holds PUBLIC)."""
    role = _role(ctx, tree.role)
    if role != PUBLIC_ROLE and not _grants(ctx).holds(ctx.state.user, role):
        raise AccessDenied(f"Requested role {role} is not granted to user {ctx.state.user}.")
    ctx.state.role = role
    return ctx.status(DONE)


_HANDLERS: dict[type, Callable[[Context, Any], Result]] = {
    CreatePrincipal: create_principal,
    DropPrincipal: drop_principal,
    GrantRole: grant_role,
    GrantPrivileges: grant_privileges,
    ShowGrants: show_grants,
    ShowPrincipals: show_principals,
    UseRole: use_role,
}


def run(ctx: Context, tree: AccessStatement) -> Result:
    """Run one statement of access control."""
    return _HANDLERS[type(tree)](ctx, tree)
