"""The nightly lifecycle (SPEC R29–R35): retention plan, expiry into fail-safe, purge,
storage metrics. The same functions run in-process (``rewind lifecycle run``) and as
Spark jobs (``spark_jobs/``)."""
