"""What the lifecycle lists as a table directory's data (SPEC R33, R41): what Delta's
VACUUM sweeps, never another program's folders and markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewind.lifecycle.files import table_data_files

pytestmark = pytest.mark.unit


def test_only_what_deltas_vacuum_sweeps_is_table_data(tmp_path: Path) -> None:
    listed = [
        "part-1.parquet",
        "deletion_vector_1.bin",
        "ab/deletion_vector_2.bin",  # a vector's random prefix folder
        "REGION=EU/part-2.parquet",
        "_p=1/part-3.parquet",  # a partition column whose name begins with _
        "_change_data/cdc-1.parquet",
        "sub/metadata/part-4.parquet",  # "metadata" is hidden at the root only
    ]
    hidden = [
        "_delta_log/00000000000000000000.json",
        "_rewind_staging/q-1/part-5.parquet",
        "_checkpoint/offsets/0",  # a streaming job's checkpoint in the table's folder
        "_SUCCESS",
        "REGION=EU/_committed_123",
        ".part-1.parquet.crc",
        "REGION=EU/.part-2.parquet.crc",
        "metadata/00001-a.metadata.json",  # a UniForm table's Iceberg metadata
        ".hidden/part-6.parquet",
    ]
    for name in [*listed, *hidden]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    assert sorted(f.path for f in table_data_files(tmp_path, 1)) == sorted(listed)
