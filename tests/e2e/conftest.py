"""Fixtures of the e2e tests: real services on loopback (see services.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from services import Cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Started here, waited for where first needed, always stopped at the end."""
    standalone = Cluster(tmp_path_factory.mktemp("standalone"))
    try:
        standalone.start()
        yield standalone
    finally:
        standalone.stop()
