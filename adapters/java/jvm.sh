#!/bin/sh
# fencecheck's Java adapters' launcher: exec a JVM (same pid, same process group: a
# pause freezes it) on FENCECHECK_CLASSPATH, the environment fencecheck builds from the
# manifest's pom.xml (the pom's jars, and the adapter's classes compiled against them
# with fencecheck.Json). Arguments: JVM options, then the main class and its arguments.
# A manifest's command cannot name $FENCECHECK_CLASSPATH itself (no shell runs it).
set -eu

if [ -z "${FENCECHECK_CLASSPATH:-}" ]; then
  echo "java adapter: no FENCECHECK_CLASSPATH: run it through fencecheck (--client NAME or a manifest), which builds the manifest's pom.xml environment first" >&2
  exit 1
fi
command -v java >/dev/null 2>&1 || { echo "java adapter: no java on PATH: install the Debian package default-jdk-headless" >&2; exit 1; }

# Small and quick to start: one JVM per logical client, several per worker. slf4j-simple
# logs to standard error (the worker's log), at FENCECHECK_JAVA_LOG_LEVEL (warn).
exec java -Xss512k -Xms16m -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
  -Dorg.slf4j.simpleLogger.logFile=System.err \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${FENCECHECK_JAVA_LOG_LEVEL:-warn}" \
  -Dorg.slf4j.simpleLogger.showDateTime=true \
  -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
  -cp "$FENCECHECK_CLASSPATH" "$@"
