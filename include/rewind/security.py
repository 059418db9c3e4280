"""Access control (SPEC R37, R38): who may read, write, drop, undrop and administer.

Every check raises :class:`~rewind.errors.AccessDenied` naming the missing privilege,
before the statement changes anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewind.constants import ACCOUNTADMIN
from rewind.errors import AccessDenied

if TYPE_CHECKING:
    from rewind.sql.context import Context


def require_accountadmin(ctx: Context, what: str) -> None:
    """Account parameters, fail-safe recovery and the audit views need ACCOUNTADMIN."""
    if ctx.state.role != ACCOUNTADMIN:
        raise AccessDenied(f"{what} requires role ACCOUNTADMIN (current role {ctx.state.role}).")
