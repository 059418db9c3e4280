"""Spark job: lifecycle step `effective_retention` (SPEC R29).

Submitted by Airflow (SparkSubmitOperator) or by hand:

spark-submit spark_jobs/effective_retention.py --home HOME --now ISO_TIMESTAMP --run-id RUN_ID
"""

import sys

from rewind.runner import main

if __name__ == "__main__":
    sys.exit(main("effective_retention"))
