"""What the Airflow DAGs run, as plain functions (ARCHITECTURE: the three ways in).

``form`` turns a trigger form into a typed request (or a RewindError naming the field);
``restore`` runs undrop / clone / restore in place as the requesting user and validates
the result; ``failsafe`` lists and recovers fail-safe data as the requesting user;
``nightly`` names the lifecycle run, validates and records it, and names its metrics;
``job`` holds the ``spark_jobs/restore.py`` and ``spark_jobs/validate_restore.py``
entry points. Only ``dagkit`` imports Airflow: the DAGs' shared defaults and the
operator that turns a Spark job's JSON summary into its task's XCom.
"""
