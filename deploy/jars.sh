#!/bin/sh
# The JVM jars every Spark session Rewind starts loads, fetched by Maven into the folder $1,
# the same way for `make setup` (.jars/) and the image (Dockerfile, /jars):
#   Delta Lake, pinned in deploy/delta/pom.xml (SPEC R43);
#   s3a: hadoop-aws matching pyspark's Hadoop and the AWS SDK modules it needs, not the
#        686 MB bundle (deploy/s3/pom.xml, SPEC R44);
#   Rewind's LogStore for S3, built from deploy/logstore/ (SPEC R46; needs javac).
set -eu
deploy=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
mvn -q -f "$deploy/delta/pom.xml" dependency:copy-dependencies \
  -DincludeGroupIds=io.delta -DoutputDirectory="$out"
mvn -q -f "$deploy/s3/pom.xml" dependency:copy-dependencies -DoutputDirectory="$out" \
  -DincludeGroupIds=org.apache.hadoop,software.amazon.awssdk,software.amazon.eventstream,software.amazon.s3.analyticsaccelerator,org.reactivestreams
mvn -q -f "$deploy/logstore/pom.xml" package
cp "$deploy/logstore/target/rewind-logstore.jar" "$out/"
