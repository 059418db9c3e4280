# The one image of the multi-machine deployment (docker-compose.yaml): Airflow 3, Spark
# (master, workers, and the drivers that the scheduler starts), the Rewind library and its
# jobs, plus Delta Lake's JVM jars so that Spark there can also read Rewind's tables
# natively (ARCHITECTURE: Engines; Rewind itself uses delta-rs and needs none).
# Every service runs this image, so drivers and executors share one Python and one pyspark.
FROM python:3.11-slim-bookworm

# Java 17 for Spark 4.2; curl for the healthchecks.
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless curl procps \
 && rm -rf /var/lib/apt/lists/*

ENV AIRFLOW_HOME=/opt/airflow \
    SPARK_HOME=/opt/spark \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/rewind

# Every runtime dependency, pinned; SPARK_HOME names pip's pyspark (spark-class, spark-submit).
COPY requirements.txt ./
RUN pip install -r requirements.txt \
 && ln -s "$(python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')" "$SPARK_HOME"

# Delta Lake's jars, resolved with their dependencies by spark-submit's own Ivy from Maven
# Central, under the artifact name that delta-spark's configure_spark_with_delta_pip uses
# for this pyspark (delta-spark_<spark major.minor>_<scala>). The one place the version is
# written; tests/unit/test_deployment.py checks it against requirements.txt.
ARG DELTA_VERSION=4.4.1
ARG DELTA_SPARK_ARTIFACT=delta-spark_4.2_2.13
RUN echo > /tmp/resolve_only.py \
 && spark-submit --master "local[1]" --conf spark.jars.ivy=/tmp/ivy \
      --packages "io.delta:${DELTA_SPARK_ARTIFACT}:${DELTA_VERSION}" /tmp/resolve_only.py \
 && cp /tmp/ivy/jars/io.delta_*.jar "$SPARK_HOME/jars/" \
 && rm -rf /tmp/ivy /tmp/resolve_only.py

# The library, installed in place as `make setup` does: the DAG kit finds spark_jobs/ beside
# include/ (rewind.operations.dagkit.SPARK_JOBS), so the repository's layout is kept.
COPY pyproject.toml README.md ./
COPY include ./include
RUN pip install --no-deps -e .
COPY spark_jobs ./spark_jobs
COPY dags ./dags
COPY plugins ./plugins

# One unprivileged user for every service. Named volumes take the ownership of these
# directories when they are first mounted.
RUN useradd --uid 50000 --gid 0 --no-create-home --home-dir "$AIRFLOW_HOME" rewind \
 && mkdir -p "$AIRFLOW_HOME/logs" "$AIRFLOW_HOME/auth" /data/rewind /data/failsafe /opt/spark-work \
 && chown -R rewind:0 "$AIRFLOW_HOME" /data /opt/spark-work
USER rewind
