"""Who a request comes from: the Rewind user mapped from the Airflow user (SPEC R37).

Identity never comes from a form field: a manual run acts as the Rewind user mapped
from the Airflow user who triggered it (Airflow records it on the DAG run), the Rewind
page as the one mapped from the user whose token it received, and a scheduled run as the
service user.

Configuration (environment, like every Rewind setting):

- ``REWIND_AIRFLOW_USERS``: a JSON object ``{"airflow user": "REWIND_USER", ...}``.
  Unset, every Airflow user maps to the Rewind user of the same name (folded like an
  unquoted identifier, SPEC R4: ``alice`` is ``ALICE``). Set, only the users it lists
  are mapped; ``"*": "*"`` in it keeps the same-name rule for everyone else.
- ``REWIND_SERVICE_USER`` (default ``REWIND_SERVICE``): scheduled runs act as it; it
  needs the role ``REWIND_LIFECYCLE`` (the nightly lifecycle and nothing else) or
  ACCOUNTADMIN.

An Airflow user the mapping leaves out is refused (ACCESS_DENIED) before anything runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from rewind.errors import AccessDenied, ConfigurationError
from rewind.identifiers import rewind_name

USERS_ENV = "REWIND_AIRFLOW_USERS"
SERVICE_ENV = "REWIND_SERVICE_USER"
DEFAULT_SERVICE_USER = "REWIND_SERVICE"
SAME_NAME = "*"


def service_user(env: Mapping[str, str] = os.environ) -> str:
    """The Rewind user scheduled runs act as."""
    return rewind_name(env.get(SERVICE_ENV) or DEFAULT_SERVICE_USER)


def rewind_user(airflow_user: str | None, env: Mapping[str, str] = os.environ) -> str:
    """The Rewind user an Airflow user acts as.

    Raises:
        AccessDenied: no Airflow user (an anonymous request), or one the mapping leaves out.
        ConfigurationError: ``REWIND_AIRFLOW_USERS`` is not a JSON object of names.
    """
    name = (airflow_user or "").strip()
    if not name:
        raise AccessDenied("The request names no Airflow user; Rewind acts for nobody.")
    mapping = _mapping(env)
    if mapping is None:
        return rewind_name(name)
    target = mapping.get(name, mapping.get(SAME_NAME))
    if target is None:
        raise AccessDenied(f"Airflow user '{name}' is not mapped to a Rewind user ({USERS_ENV}).")
    return rewind_name(name if target == SAME_NAME else target)


def acting_user(run_type: str | None, triggering_user: str | None) -> str:
    """The Rewind user a DAG run acts as: the service user for a scheduled run, else the
    one mapped from the Airflow user who triggered it."""
    if run_type == "scheduled":
        return service_user()
    return rewind_user(triggering_user)


def _mapping(env: Mapping[str, str]) -> dict[str, str] | None:
    text = env.get(USERS_ENV, "").strip()
    if not text:
        return None
    try:
        mapping = json.loads(text)
    except ValueError:
        mapping = None
    if not isinstance(mapping, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in mapping.items()
    ):
        raise ConfigurationError(
            f"{USERS_ENV} must be a JSON object of Airflow user -> Rewind user names."
        )
    return mapping
