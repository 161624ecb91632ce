#!/bin/sh
# fencecheck-mariadb --no-defaults --datadir=DIR [mariadbd options...]: the run's
# MariaDB in a container, with mariadbd's own arguments (backends/mariadb/server.ts
# gives a local mariadbd the same). DIR is the run's data directory, mounted
# from the host at the same path and owned by whoever made it there: it is
# given to the mysql user here, made a data directory on the first start
# (mariadb-install-db: root without a password at localhost and, for the
# clients that come through the published port from the host, whose address
# here is the network's gateway, at '%': the port is published on the host's
# loopback only), and then mariadbd replaces this shell, as the mysql user, so
# that it is the container's PID 1 and the kill and pause nemeses reach it directly.
set -eu
usage() { echo "usage: fencecheck-mariadb --no-defaults --datadir=DIR [mariadbd options]" >&2; exit 2; }
# --no-defaults first, or mariadbd reads /etc/mysql.
[ "${1:-}" = "--no-defaults" ] || usage
dir=""
for a in "$@"; do
  case "$a" in --datadir=?*) dir="${a#--datadir=}" ;; esac
done
[ -n "$dir" ] || usage
mkdir -p "$dir"
chown mysql:mysql "$dir"
chmod 0700 "$dir"
if [ ! -d "$dir/mysql" ]; then
  extra="$(mktemp)"
  # install-db bootstraps with the grant tables off: FLUSH PRIVILEGES turns them on for CREATE USER.
  cat > "$extra" <<'SQL'
FLUSH PRIVILEGES;
CREATE USER IF NOT EXISTS 'root'@'%';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
SQL
  chmod 0644 "$extra"
  setpriv --reuid=mysql --regid=mysql --init-groups env HOME="$dir" LC_ALL=C \
    mariadb-install-db --no-defaults --datadir="$dir" --auth-root-authentication-method=normal \
      --skip-test-db --skip-name-resolve --innodb-log-file-size=8M --innodb-buffer-pool-size=16M \
      --extra-file="$extra" >&2
  rm -f "$extra"
fi
exec setpriv --reuid=mysql --regid=mysql --init-groups /usr/sbin/mariadbd "$@"
