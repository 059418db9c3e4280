"""Fixtures shared by the Spark test modules."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from observer import Observer
from test_dml import clock


@pytest.fixture(scope="session")
def plugin_night(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The warehouse and ``airflow dags test`` night the plugin's API and browser tests
    read, built once per test process (both modules are in the ``dashboard`` group)."""
    from test_plugin_api import build_night

    return build_night(tmp_path_factory.mktemp("plugin-api"))


@pytest.fixture(scope="module")
def observer(world: Any) -> Iterator[Observer]:
    """Watches the module's ``world`` (catalog rows and files) for changes (SPEC R28)."""
    watching = Observer(world.home)
    yield watching
    watching.close()


@pytest.fixture
def conn(connect: Callable[..., Any]) -> Any:
    """A session at T0 on D with table T (ID INT, V VARCHAR) holding rows 1 and 2
    (versions 0 and 1); a module with its own ``conn`` fixture keeps that one."""
    session = connect(now=clock())
    session.sql(
        "CREATE DATABASE D; CREATE TABLE T (ID INT, V VARCHAR);"
        "INSERT INTO T VALUES (1, 'a'), (2, 'b')"
    )
    return session
