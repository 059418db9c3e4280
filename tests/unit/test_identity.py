"""Who a request comes from (SPEC R37): the Airflow user mapped to a Rewind user, never
a form field; the service user for scheduled runs."""

from __future__ import annotations

import pytest

from rewind.errors import AccessDenied, ConfigurationError
from rewind.operations.identity import acting_user, rewind_user, service_user

pytestmark = pytest.mark.unit


def test_by_default_an_airflow_user_is_the_rewind_user_of_the_same_name_r4() -> None:
    assert rewind_user("alice", {}) == "ALICE"
    assert rewind_user('"mixedCase"', {}) == "mixedCase"


def test_a_mapping_names_who_is_who_and_refuses_everyone_else() -> None:
    env = {"REWIND_AIRFLOW_USERS": '{"admin": "ADMIN", "bob": "analyst"}'}
    assert rewind_user("admin", env) == "ADMIN"
    assert rewind_user("bob", env) == "ANALYST"
    with pytest.raises(AccessDenied, match="Airflow user 'mallory' is not mapped"):
        rewind_user("mallory", env)


def test_a_wildcard_keeps_the_same_name_rule_for_the_others() -> None:
    env = {"REWIND_AIRFLOW_USERS": '{"admin": "OPS", "*": "*"}'}
    assert (rewind_user("admin", env), rewind_user("carol", env)) == ("OPS", "CAROL")


@pytest.mark.parametrize("user", [None, "", "  "])
def test_no_airflow_user_acts_as_nobody(user: str | None) -> None:
    with pytest.raises(AccessDenied):
        rewind_user(user, {})


@pytest.mark.parametrize("text", ["[1]", "not json", '{"a": 1}', '{"a": " "}'])
def test_a_broken_mapping_is_a_configuration_error(text: str) -> None:
    with pytest.raises(ConfigurationError):
        rewind_user("a", {"REWIND_AIRFLOW_USERS": text})


def test_scheduled_runs_act_as_the_service_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REWIND_SERVICE_USER", raising=False)
    monkeypatch.setenv("REWIND_AIRFLOW_USERS", '{"admin": "ADMIN"}')
    assert acting_user("scheduled", None) == "REWIND_SERVICE" == service_user()
    assert acting_user("manual", "admin") == "ADMIN"
    monkeypatch.setenv("REWIND_SERVICE_USER", "nightly")
    assert acting_user("scheduled", "admin") == "NIGHTLY"  # a scheduled run has no trigger
    with pytest.raises(AccessDenied):
        acting_user("manual", "someone")
