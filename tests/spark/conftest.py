"""Fixtures shared by the Spark test modules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_hostile_input import Observer


@pytest.fixture(scope="module")
def observer(world: Any) -> Iterator[Observer]:
    """Watches the module's ``world`` (catalog rows and files) for changes (SPEC R28)."""
    watching = Observer(world.home)
    yield watching
    watching.close()
