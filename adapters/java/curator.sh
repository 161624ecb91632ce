#!/bin/sh
# fencecheck's Curator adapter: compile CuratorLock.java and Json.java once into a cache
# keyed by the sources' hash, then exec the JVM (same pid, same process group: a pause freezes it).
# Its libraries are curator.adapter.json's "environment", pom.xml: fencecheck has
# Maven fetch Curator and what it needs into its cache and passes the jars as
# FENCECHECK_CLASSPATH (and the environment's directory as FENCECHECK_ENV).
# Runs from the manifest's directory.
set -eu

here=$(cd "$(dirname "$0")" && pwd)

if [ -z "${FENCECHECK_CLASSPATH:-}" ] || [ -z "${FENCECHECK_ENV:-}" ]; then
  echo "curator adapter: no FENCECHECK_CLASSPATH: run it through fencecheck (--client curator), which builds pom.xml's environment first" >&2
  exit 1
fi
CP=$FENCECHECK_CLASSPATH
command -v java >/dev/null 2>&1 || { echo "curator adapter: no java on PATH: install the Debian package default-jdk-headless" >&2; exit 1; }

# Compiled classes beside the environments, keyed by the sources and the jars they were compiled against.
hash=$( (cat "$here/CuratorLock.java" "$here/Json.java" "$here/curator.sh"; echo "$CP") | sha256sum | cut -c1-16)
cache="$(dirname "$FENCECHECK_ENV")/curator-classes-$hash"

if [ ! -f "$cache/CuratorLock.class" ]; then
  command -v javac >/dev/null 2>&1 || { echo "curator adapter: no javac on PATH: install the Debian package default-jdk-headless" >&2; exit 1; }
  parent=$(dirname "$cache")
  mkdir -p "$parent"
  tmp=$(mktemp -d "$parent/.building-curator-classes.XXXXXX")
  if ! javac -nowarn -encoding UTF-8 -cp "$CP" -d "$tmp" "$here/CuratorLock.java" "$here/Json.java" >&2; then
    rm -rf "$tmp"
    echo "curator adapter: javac failed on $here/CuratorLock.java or Json.java" >&2
    exit 1
  fi
  # Atomic: a rename of a whole directory. Another worker that compiled the same sources
  # at the same time won the race: its build is the same, keep it and drop ours.
  if ! mv -T "$tmp" "$cache" 2>/dev/null; then
    rm -rf "$tmp"
  fi
  [ -f "$cache/CuratorLock.class" ] || { echo "curator adapter: no build in $cache" >&2; exit 1; }
fi

# Small and quick to start: one JVM per logical client, several per worker.
exec java -Xss512k -Xms16m -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
  -Dorg.slf4j.simpleLogger.logFile=System.err \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${FENCECHECK_CURATOR_LOG_LEVEL:-warn}" \
  -Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn=error \
  -Dorg.slf4j.simpleLogger.showDateTime=true \
  -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
  -Dzookeeper.jmx.log4j.disable=true \
  -cp "$cache:$CP" CuratorLock
