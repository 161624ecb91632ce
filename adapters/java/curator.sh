#!/bin/sh
# fencecheck's Curator adapter: exec the JVM (same pid, same process group: a pause
# freezes it) on curator.adapter.json's "environment", pom.xml, which fencecheck
# builds into its cache: Maven fetches Curator and what it needs, javac compiles
# CuratorLock.java (with fencecheck.Json) against them, and the classes and jars come as
# FENCECHECK_CLASSPATH. Runs from the manifest's directory.
set -eu

if [ -z "${FENCECHECK_CLASSPATH:-}" ]; then
  echo "curator adapter: no FENCECHECK_CLASSPATH: run it through fencecheck (--client curator), which builds pom.xml's environment first" >&2
  exit 1
fi
command -v java >/dev/null 2>&1 || { echo "curator adapter: no java on PATH: install the Debian package default-jdk-headless" >&2; exit 1; }

# Small and quick to start: one JVM per logical client, several per worker.
exec java -Xss512k -Xms16m -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
  -Dorg.slf4j.simpleLogger.logFile=System.err \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${FENCECHECK_CURATOR_LOG_LEVEL:-warn}" \
  -Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn=error \
  -Dorg.slf4j.simpleLogger.showDateTime=true \
  -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
  -Dzookeeper.jmx.log4j.disable=true \
  -cp "$FENCECHECK_CLASSPATH" CuratorLock
