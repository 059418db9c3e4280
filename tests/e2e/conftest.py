"""Fixtures of the e2e tests: real services on loopback (see services.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from services import Cluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for the e2e modules of a worker (issue 26: the standalone jobs and the
    e2e Airflow share it; each module looks only at the applications it started,
    :meth:`Cluster.apps_since`). Started where first used, waited for where first
    needed, stopped at the worker's end."""
    standalone = Cluster(tmp_path_factory.mktemp("standalone"))
    try:
        standalone.start()
        yield standalone
    finally:
        standalone.stop()
