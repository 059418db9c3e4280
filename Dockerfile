# The one image of the multi-machine deployment (docker-compose.yaml): Airflow 3, Spark
# (master, workers, and the drivers that the scheduler starts), the Rewind library and its
# jobs, plus Delta Lake's JVM jars: every SparkSession Rewind starts reads and writes Delta
# through them (ARCHITECTURE: Engines). Every service runs this image, so drivers and
# executors share one Python, one pyspark and one set of jars.

# The JVM jars, fetched from Maven Central by deploy/jars.sh, the script `make setup` runs:
# Delta Lake (pinned in deploy/delta/pom.xml), s3a (deploy/s3/pom.xml) and Rewind's LogStore
# for S3 (built from deploy/logstore/). tests/unit/test_deployment.py keeps the poms, this
# file and requirements.txt in step.
FROM maven:3.9-eclipse-temurin-17 AS jars
COPY deploy/jars.sh /build/deploy/jars.sh
COPY deploy/delta/pom.xml /build/deploy/delta/pom.xml
COPY deploy/s3/pom.xml /build/deploy/s3/pom.xml
COPY deploy/logstore/pom.xml /build/deploy/logstore/pom.xml
COPY deploy/logstore/src /build/deploy/logstore/src
RUN sh /build/deploy/jars.sh /jars

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

COPY --from=jars /jars /opt/rewind/.jars
ENV REWIND_DELTA_JARS=/opt/rewind/.jars

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
 && chown -R rewind:0 "$AIRFLOW_HOME" /data /opt/spark-work \
 && chmod 0700 /data/rewind /data/failsafe
USER rewind
