"""The nightly lifecycle (SPEC R29–R35): retention plan, expiry into fail-safe, purge,
storage metrics. The same functions run in-process (``rewind lifecycle run``) and as
Spark jobs (``spark_jobs/``), both through ``rewind.runner``.

Layer: above ``storage``, ``audit`` and ``security``; below ``quality`` (step 6 reads
what these steps wrote) and ``rewind.runner`` (which runs steps 1–6).
"""
