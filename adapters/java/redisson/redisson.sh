#!/bin/sh
# fencecheck's Redisson adapter: exec the JVM (same pid, same process group: a pause
# freezes it) on the manifest's "environment", pom.xml, which fencecheck builds into
# its cache: Maven fetches Redisson and what it needs, javac compiles RedissonLock.java
# against them, and the classes and jars come as FENCECHECK_CLASSPATH. Arguments go
# to RedissonLock ("--fenced": RFencedLock). Runs from the manifest's directory.
set -eu

if [ -z "${FENCECHECK_CLASSPATH:-}" ]; then
  echo "redisson adapter: no FENCECHECK_CLASSPATH: run it through fencecheck (--client redisson), which builds pom.xml's environment first" >&2
  exit 1
fi
command -v java >/dev/null 2>&1 || { echo "redisson adapter: no java on PATH: install the Debian package default-jdk-headless" >&2; exit 1; }

# Small and quick to start: one JVM per logical client, several per worker.
exec java -Xss512k -Xms16m -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
  -Dorg.slf4j.simpleLogger.logFile=System.err \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${FENCECHECK_REDISSON_LOG_LEVEL:-warn}" \
  -Dorg.slf4j.simpleLogger.showDateTime=true \
  -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
  -cp "$FENCECHECK_CLASSPATH" RedissonLock "$@"
