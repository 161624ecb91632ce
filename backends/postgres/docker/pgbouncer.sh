#!/bin/sh
# fencecheck-pgbouncer INI: pgbouncer in a container, as the postgres user (it
# refuses to run as root). Its configuration lies in the run's directory for it,
# mounted from the host: that directory is given to the postgres user first.
set -eu
[ -n "${1:-}" ] || { echo "usage: fencecheck-pgbouncer INI" >&2; exit 2; }
chown -R postgres:postgres "$(dirname "$1")"
exec setpriv --reuid=postgres --regid=postgres --init-groups /usr/sbin/pgbouncer "$1"
