"""Spark job: row counts of what a restore produced against the point (``rewind_restore``).

Submitted by Airflow (SparkSubmitOperator) or by hand:

spark-submit spark_jobs/validate_restore.py --home HOME --now ISO_TIMESTAMP --request '{...}' \
    --dag-id DAG --dag-run-id RUN   # the restore that run committed, checked once
"""

import sys

from rewind.operations.job import validate_main

if __name__ == "__main__":
    sys.exit(validate_main())
