"""Spark job: lifecycle step `purge_failsafe` (SPEC R29).

Submitted by Airflow (SparkSubmitOperator) or by hand:

spark-submit spark_jobs/purge_failsafe.py --home HOME --now ISO_TIMESTAMP --run-id RUN_ID
"""

import sys

from rewind.runner import main

if __name__ == "__main__":
    sys.exit(main("purge_failsafe"))
