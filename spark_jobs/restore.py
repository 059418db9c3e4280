"""Spark job: undrop, clone or restore in place as the requesting user (``rewind_restore``).

Submitted by Airflow (SparkSubmitOperator) or by hand:

spark-submit spark_jobs/restore.py --home HOME --now ISO_TIMESTAMP --request '{"operation": ...}' \
    --dag-id DAG --dag-run-id RUN   # the action is done at most once per DAG run
"""

import sys

from rewind.operations.job import restore_main

if __name__ == "__main__":
    sys.exit(restore_main())
