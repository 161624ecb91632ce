#!/bin/sh
# fencecheck's Curator adapter: compile CuratorLock.java and Json.java once into a cache
# keyed by the sources' hash, then exec the JVM (same pid, same process group: a pause freezes it).
# Needs Debian's: default-jdk-headless libcurator-recipes-java (which brings
# libcurator-framework-java, libcurator-client-java, libzookeeper-java, libguava-java,
# libslf4j-java). Runs from the manifest's directory.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
J=/usr/share/java

need() { # need <file> <debian package>
  if [ ! -e "$1" ]; then
    echo "curator adapter: $1 is missing: install the Debian package $2 (apt-get install -y $2)" >&2
    exit 1
  fi
}

need "$J/curator-recipes.jar" libcurator-recipes-java
need "$J/curator-framework.jar" libcurator-framework-java
need "$J/curator-client.jar" libcurator-client-java
need "$J/zookeeper.jar" libzookeeper-java
need "$J/zookeeper-jute.jar" libzookeeper-java
need "$J/guava.jar" libguava-java
need "$J/slf4j-api.jar" libslf4j-java
need "$J/slf4j-simple.jar" libslf4j-java
command -v java >/dev/null 2>&1 || { echo "curator adapter: no java on PATH: install the Debian package default-jdk-headless" >&2; exit 1; }

CP="$J/curator-recipes.jar:$J/curator-framework.jar:$J/curator-client.jar:$J/zookeeper.jar:$J/zookeeper-jute.jar:$J/guava.jar:$J/slf4j-api.jar:$J/slf4j-simple.jar"

hash=$(cat "$here/CuratorLock.java" "$here/Json.java" "$here/curator.sh" | sha256sum | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/fencecheck/adapters/curator-$hash"

if [ ! -f "$cache/CuratorLock.class" ]; then
  command -v javac >/dev/null 2>&1 || { echo "curator adapter: no javac on PATH: install the Debian package default-jdk-headless" >&2; exit 1; }
  parent=$(dirname "$cache")
  mkdir -p "$parent"
  tmp=$(mktemp -d "$parent/.curator-build.XXXXXX")
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
