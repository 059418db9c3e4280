"""What the Airflow DAGs run, as plain functions (ARCHITECTURE: the three ways in).

``form`` turns a trigger form into a typed request (or a RewindError naming the field),
``restore`` runs undrop / clone / restore in place as the requesting user, ``failsafe``
lists and recovers fail-safe data as the requesting user, ``nightly`` names the
lifecycle run and its metrics, ``job`` is the ``spark_jobs/restore.py`` entry point.
Only ``spark_job`` imports Airflow: the operator that turns a job's JSON summary into
its task's XCom.
"""
