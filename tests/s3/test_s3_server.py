"""The tests' S3 server itself (rewind/seaweedfs.py): SeaweedFS on loopback only, keys
required, and a restart on its directory that finds its data again."""

from __future__ import annotations

from pathlib import Path

import pytest
from sockets import LOOPBACK, listening

from rewind.seaweedfs import SeaweedFS

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("s3")]


def test_seaweedfs_listens_on_loopback_only_wants_keys_and_restarts_with_its_data(
    tmp_path: Path,
) -> None:
    import urllib.error
    import urllib.request

    server = SeaweedFS(tmp_path, access_key="AKIASERVERTEST01", secret_key="server-test-secret")
    server.start()
    try:
        assert server.process is not None
        addresses = listening(server.process.pid)
        assert len(addresses) >= 5 and set(addresses) <= LOOPBACK, addresses
        server.create_bucket("restart-bucket")
        server.client().put_object(Bucket="restart-bucket", Key="k", Body=b"kept")
        with pytest.raises(urllib.error.HTTPError) as anonymous:
            urllib.request.urlopen(f"{server.endpoint}/restart-bucket/k", timeout=5)
        assert anonymous.value.code == 403
        endpoint = server.endpoint
        server.stop()
        server.start()
        assert server.endpoint == endpoint
        body = server.client().get_object(Bucket="restart-bucket", Key="k")["Body"].read()
        assert body == b"kept"
    finally:
        server.stop()
