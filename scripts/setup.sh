#!/usr/bin/env bash
# Makes sure the servers fencecheck runs for real are on this machine: Debian's
# redis-server, etcd, libfaketime, Postgres 15 and pgbouncer. Called before `npm test` and
# `npm run test:jepsen`, so a new user needs nothing else. Installs with apt-get
# when missing (as root, or through sudo without a password); otherwise stops
# and prints the exact command to run.
set -euo pipefail

packages=(redis-server etcd-server etcd-client faketime postgresql-15 pgbouncer)
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
command -v faketime >/dev/null 2>&1 || need+=(faketime)
# Postgres' programs live outside PATH on Debian (cluster/postgres.ts finds them there).
[ -x /usr/lib/postgresql/15/bin/postgres ] || need+=(postgresql-15)
command -v pgbouncer >/dev/null 2>&1 || need+=(pgbouncer)

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
    echo "fencecheck needs redis-server, etcd, etcdctl, faketime, postgresql-15 and pgbouncer, and this machine has no apt-get to install them." >&2
    exit 1
  fi
  echo "fencecheck: installing ${need[*]} with apt-get" >&2
  "${sudo_cmd[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${packages[@]}" >&2
  # Debian's packages enable system services on the default ports; fencecheck
  # starts its own servers on ports of its own and never uses those.
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
