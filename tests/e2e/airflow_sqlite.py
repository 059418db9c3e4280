"""The e2e Airflow's SQLite connections wait for a lock (``AIRFLOW__DATABASE__SQL_ALCHEMY_
CONNECT_ARGS`` names these; :class:`services.Airflow` puts this folder on its processes'
``PYTHONPATH``).

``airflow standalone`` keeps its metadata in one SQLite file written by the api-server, the
scheduler, the dag-processor, the triggerer and every task process. sqlite3 gives up on a
locked database after 5 s: on 2 loaded cores a writer held it longer, and the scheduler
died of "database is locked" in the middle of a test, leaving every run queued. With a
long busy timeout a writer waits for the lock instead.
"""

CONNECT_ARGS = {"timeout": 120}
ASYNC_CONNECT_ARGS = {"timeout": 120}
