#!/bin/sh
# fencecheck-postgres -D DIR [postgres options...]: the run's Postgres in a
# container. DIR is the run's data directory, mounted from the host at the same
# path and owned by whoever made it there: it is given to the postgres user
# here, made a cluster on the first start (initdb, trust authentication for
# every address: the port is published on the host's loopback only, and the
# run's other containers are its own), and then the postmaster replaces this
# shell, as the postgres user, so that it is the container's PID 1 and the
# kill and pause nemeses reach it directly.
set -eu
[ "${1:-}" = "-D" ] && [ -n "${2:-}" ] || { echo "usage: fencecheck-postgres -D DIR [postgres options]" >&2; exit 2; }
dir="$2"
mkdir -p "$dir"
chown postgres:postgres "$dir"
chmod 0700 "$dir"
if [ ! -s "$dir/PG_VERSION" ]; then
  setpriv --reuid=postgres --regid=postgres --init-groups env LC_ALL=C HOME="$dir" \
    /usr/lib/postgresql/15/bin/initdb -D "$dir" -A trust -U postgres -E UTF8 --no-sync >&2
  echo "host all all all trust" >> "$dir/pg_hba.conf"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups /usr/lib/postgresql/15/bin/postgres "$@"
