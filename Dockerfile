# The one image of the multi-machine deployment (docker-compose.yaml): Airflow 3, the
# Rewind library and the Spark jobs, plus the Delta Lake JVM jars so that Spark can also
# read Rewind's tables natively there (not needed by Rewind itself, which uses delta-rs).
FROM python:3.11-slim-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless curl procps \
 && rm -rf /var/lib/apt/lists/*
ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 \
    AIRFLOW_HOME=/opt/airflow \
    REWIND_HOME=/data/rewind \
    PYTHONUNBUFFERED=1
WORKDIR /opt/rewind
COPY requirements.txt pyproject.toml README.md ./
RUN pip install --no-cache-dir -r requirements.txt
COPY include ./include
COPY spark_jobs ./spark_jobs
COPY dags ./dags
COPY plugins ./plugins
RUN pip install --no-cache-dir --no-deps -e . \
 && SPARK_JARS="$(python -c 'import pyspark, os; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')" \
 && curl -fsSL -o "$SPARK_JARS/delta-spark_2.13-4.4.1.jar" \
      https://repo1.maven.org/maven2/io/delta/delta-spark_2.13/4.4.1/delta-spark_2.13-4.4.1.jar \
 && curl -fsSL -o "$SPARK_JARS/delta-storage-4.4.1.jar" \
      https://repo1.maven.org/maven2/io/delta/delta-storage/4.4.1/delta-storage-4.4.1.jar
