#!/usr/bin/env bash
# Makes sure the servers fencecheck runs for real are on this machine: Debian's
# redis-server, etcd, ZooKeeper (with a headless JRE to run it) and libfaketime. Called before `npm test` and
# `npm run test:jepsen`, so a new user needs nothing else. Installs with apt-get
# when missing (as root, or through sudo without a password); otherwise stops
# and prints the exact command to run.
set -euo pipefail

packages=(redis-server etcd-server etcd-client faketime zookeeper default-jre-headless time)
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
command -v faketime >/dev/null 2>&1 || need+=(faketime)
# The zookeeper package has no command on PATH: its jar is what the run starts.
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
# GNU time: bench:checker reads each process's peak memory from it.
[ -x /usr/bin/time ] || need+=(time)

if [ ${#need[@]} -gt 0 ]; then
  cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${packages[*]}"
  if [ "$(id -u)" = 0 ]; then
    sudo_cmd=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo_cmd=(sudo)
  else
    echo "fencecheck needs these Debian packages: ${need[*]}" >&2
    echo "Install them with:  sudo sh -c '$cmd'" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "fencecheck needs redis-server, etcd, etcdctl, faketime, ZooKeeper, a Java runtime and GNU time, and this machine has no apt-get to install them." >&2
    exit 1
  fi
  echo "fencecheck: installing ${need[*]} with apt-get" >&2
  "${sudo_cmd[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${packages[@]}" >&2
  # Debian's packages enable system services on the default ports; fencecheck
  # starts its own servers on ports of its own and never uses those.
fi

# Postgres 15 and pgbouncer serve --backend postgres, --pg-pooler and --resource
# postgres alone, so a machine whose apt has no postgresql-15 (Ubuntu ships
# other versions) keeps everything else; those options then fail at start,
# naming the missing program. Postgres' programs live outside PATH on Debian.
pg_bin="${FENCECHECK_PG_BIN:-/usr/lib/postgresql/15/bin}"
pg_need=()
[ -x "$pg_bin/postgres" ] || pg_need+=(postgresql-15)
command -v pgbouncer >/dev/null 2>&1 || pg_need+=(pgbouncer)
if [ ${#pg_need[@]} -gt 0 ]; then
  pg_sudo=()
  [ "$(id -u)" = 0 ] || pg_sudo=(sudo -n)
  echo "fencecheck: installing ${pg_need[*]} with apt-get" >&2
  if command -v apt-get >/dev/null 2>&1 && "${pg_sudo[@]}" apt-get update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive "${pg_sudo[@]}" apt-get install -y -qq "${pg_need[@]}" >&2; then
    # Debian's package may start a cluster on 5432; fencecheck starts its own per run and never uses it.
    :
  else
    echo "fencecheck: ${pg_need[*]} could not be installed; --backend postgres, --pg-pooler and --resource postgres will not run." >&2
    echo "Install with:  sudo apt-get install -y ${pg_need[*]}   (or set FENCECHECK_PG_BIN to the bin directory of another Postgres)" >&2
  fi
fi

# The malloc shim that lets libfaketime run inside Debian's redis-server (see
# cluster/faketime/shim.c), rebuilt only when missing or older than its source.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shim_src="$root/cluster/faketime/shim.c"
shim_lib="$root/build/faketime-shim.so"
if [ ! -f "$shim_lib" ] || [ "$shim_src" -nt "$shim_lib" ]; then
  if ! command -v gcc >/dev/null 2>&1; then
    # Only --nemesis clock needs it, so everything else still runs; that nemesis
    # refuses to start and points back here.
    echo "fencecheck: gcc is missing, so $shim_lib cannot be built and --nemesis clock will not run." >&2
    echo "Install it with:  sudo apt-get install -y gcc   then run: npm run setup" >&2
  else
    mkdir -p "$root/build"
    # Build beside the target and rename, so a server starting meanwhile never
    # preloads a half-written library; a name of its own per build, because test
    # files that need the shim may each run this script at the same moment.
    gcc -O2 -Wall -Wextra -shared -fPIC -o "$shim_lib.$$.tmp" "$shim_src"
    mv -f "$shim_lib.$$.tmp" "$shim_lib"
    echo "fencecheck: built $shim_lib" >&2
  fi
fi

# A container engine for the optional docker mode (--deploy docker, the compose
# lab): Podman where no Docker answers. Never fails this set-up: everything but
# docker mode runs without it. FENCECHECK_NO_DOCKER=1 skips it.
bash "$root/scripts/setup-docker.sh" ||
  echo "fencecheck: docker mode set-up failed (see above); everything else works. Retry with: bash $root/scripts/setup-docker.sh" >&2
