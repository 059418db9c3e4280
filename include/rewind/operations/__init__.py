"""What the Airflow DAGs run, as plain functions (ARCHITECTURE: the three ways in).

``form`` turns a trigger form into a typed request (or a RewindError naming the field);
``trigger`` re-derives in every task whom its run acts for, from the run itself (never
from XCom), and finds an action the run already committed; ``restore`` runs undrop /
clone / restore in place as the requesting user, at most once per run, and validates
the result; ``failsafe`` recovers fail-safe data as the requesting user, once;
``nightly`` names the lifecycle run, validates and records it, and names its metrics;
``job`` holds the ``spark_jobs/validate_restore.py`` entry point. Only ``dagkit``
imports Airflow: the DAGs' shared defaults and the operator that turns a Spark job's
JSON summary into its task's XCom.
"""
