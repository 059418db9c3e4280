"""A local Delta table's latest version as an Arrow table, in a process that exits 0.

``DeltaTable.to_pyarrow_table()`` reads its files through a ``pyarrow.fs.PyFileSystem``
around delta-rs' own object store (``DeltaStorageHandler``): Python callbacks into a
tokio runtime from Arrow's I/O threads. With deltalake 1.6.6 and pyarrow 26.0.1 such a
process aborts at interpreter exit ("terminate called without an active exception",
exit 134) in most runs (delta-rs #2184, apache/arrow #34314), after doing its work: a
successful Airflow task or CLI call would be reported failed (issue 26). Handing
delta-rs pyarrow's own local filesystem instead keeps everything else delta-rs does
here: the file list of the latest version, partition values (URL-decoded) attached to
each file, file pruning by partition values and statistics, exact row filters, and the
refusal of reader features a pyarrow dataset cannot honour (deletion vectors, column
mapping).

Rewind's system tables (``system/retention_plan``, ``system/table_storage_metrics``)
are written by delta-rs (``write_deltalake``, no deletion vectors, no column mapping)
under the system root: a local directory, or an S3 prefix (``REWIND_SYSTEM_URI``, SPEC
R44), read there through pyarrow's own S3 file system for the same reason.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import DeltaProtocolError
from deltalake.table import FilterType
from pyarrow import fs

from rewind.errors import UnsupportedTableFeature
from rewind.storage import location, objectstore
from rewind.storage.location import Root


def read_arrow(path: Root, filters: FilterType | None = None) -> pa.Table:
    """The rows of the latest version of the Delta table at ``path``.

    Args:
        path: the table's directory (the one holding ``_delta_log``), on local disk or S3.
        filters: DNF filters as ``DeltaTable.to_pyarrow_table`` takes them, e.g.
            ``[("RUN_ID", "=", run_id)]``: they prune files and filter rows.

    Reads the Delta log and the data files it names; writes nothing.

    Raises:
        UnsupportedTableFeature: the table needs deletion vectors, column mapping or
            another reader feature a pyarrow dataset would read wrong.
    """
    if isinstance(path, Path):
        root = str(path.resolve())
        files: fs.FileSystem = fs.SubTreeFileSystem(root, fs.LocalFileSystem())
    else:
        root = str(path)
        store = objectstore.arrow_filesystem(objectstore.settings())
        files = fs.SubTreeFileSystem(f"{path.bucket}/{path.key}", store)
    try:
        table = DeltaTable(root, storage_options=location.storage_options(path))
        return table.to_pyarrow_table(filters=filters, filesystem=files)
    except DeltaProtocolError as exc:
        raise UnsupportedTableFeature(
            f"Cannot read the Delta table {root} with Arrow: {str(exc).splitlines()[0]}"
        ) from None
