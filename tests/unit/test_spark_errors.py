"""How a lost Spark JVM reaches the user (SPEC R39): one stable code, whatever py4j raised."""

from __future__ import annotations

import pytest
from py4j.protocol import Py4JError, Py4JNetworkError

from rewind.connection import as_rewind_error

pytestmark = pytest.mark.unit


def _raised_while_handling(first: BaseException, then: BaseException) -> BaseException:
    try:
        try:
            raise first
        except type(first):
            raise then  # noqa: B904  (PySpark's conversion raises it while handling)
    except type(then) as raised:
        return raised


def test_an_error_raised_while_the_jvm_connection_broke_is_spark_unavailable() -> None:
    """The clean-clone run's in-process statement that exhausted Spark's memory answered
    EXECUTION_ERROR "py4j.reflection.TypeUtil.isInstanceOf does not exist in the JVM":
    PySpark asked the gone JVM what its error was, while handling py4j's broken
    connection. It is SPARK_UNAVAILABLE, as the connection's own error is."""
    lost = _raised_while_handling(
        Py4JNetworkError("Error while sending or receiving"),
        Py4JError("py4j.reflection.TypeUtil.isInstanceOf does not exist in the JVM"),
    )
    assert as_rewind_error(lost, "snowflake").code == "SPARK_UNAVAILABLE"
    alone = Py4JNetworkError("Answer from Java side is empty")
    assert as_rewind_error(alone, "snowflake").code == "SPARK_UNAVAILABLE"
    # The same message without a broken connection is no lost JVM
    other = Py4JError("py4j.reflection.TypeUtil.isInstanceOf does not exist in the JVM")
    assert as_rewind_error(other, "snowflake").code != "SPARK_UNAVAILABLE"
