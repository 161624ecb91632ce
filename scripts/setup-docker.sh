#!/usr/bin/env bash
# Makes a container engine with Docker's HTTP API available for fencecheck's
# optional docker mode (--deploy docker, docker/compose.yml). Run by `fencecheck
# setup` (so before every `npm test`) and by every docker-mode run before it
# starts (setup/index.ts), several times at once.
#
#  - An engine that already answers is kept, whatever it is: a user with Docker
#    keeps their Docker, and nothing is printed.
#  - Otherwise, on Debian: installs Podman (with runc), starts its Docker-API
#    service on /run/podman/podman.sock (where docker/engine.ts looks), and gives
#    it the base image backends/*/docker/Dockerfile start FROM, made with debootstrap from
#    this machine's apt mirror, since no image registry may be reachable.
#
# Docker mode is optional, so nothing here may fail the caller for want of
# rights: without root (or sudo -n), one warning line and exit 0. Real failures
# (apt, debootstrap, a service that does not answer) exit non-zero, which its
# caller reports. FENCECHECK_NO_DOCKER=1 skips all of it.
# Why an engine that serves Docker's API, and which: docs/docker.md.
set -euo pipefail

[ "${FENCECHECK_NO_DOCKER:-}" != 1 ] || exit 0

say() { echo "fencecheck: $*" >&2; }

podman_sock=/run/podman/podman.sock
base_image=docker.io/library/debian:bookworm-slim
lock=/tmp/fencecheck-docker-setup.lock

# GET an API path from an engine ("unix:/path/to.sock" or "http://host:port");
# the body on stdout, success only on a 2xx. curl when present, else Node (which
# fencecheck needs anyway), so the checks never need anything installed.
api() {
  local target=$1 path=$2
  if command -v curl >/dev/null 2>&1; then
    case $target in
      unix:*) curl -sf --max-time 5 --unix-socket "${target#unix:}" "http://d$path" ;;
      *) curl -sf --max-time 5 "$target$path" ;;
    esac
  elif command -v node >/dev/null 2>&1; then
    node -e '
      const [target, path] = process.argv.slice(1);
      const to = target.startsWith("unix:") ? { socketPath: target.slice(5) } : { host: new URL(target).hostname, port: new URL(target).port };
      require("http").get({ ...to, path, timeout: 5000 }, (r) => {
        r.pipe(process.stdout);
        r.on("end", () => process.exit(r.statusCode >= 200 && r.statusCode < 300 ? 0 : 1));
      }).on("error", () => process.exit(1)).on("timeout", () => process.exit(1));
    ' "$target" "$path"
  else
    return 1
  fi
}

# Where an engine may answer, in the order docker/engine.ts tries them: DOCKER_HOST
# alone when set (the user's choice, and the only place the runs will look), else
# Docker's socket, Podman's rootful socket, the user's rootless one.
targets=()
if [ -n "${DOCKER_HOST:-}" ]; then
  case $DOCKER_HOST in
    unix://*) targets=("unix:${DOCKER_HOST#unix://}") ;;
    tcp://*) targets=("http://${DOCKER_HOST#tcp://}") ;;
    *) say "DOCKER_HOST=$DOCKER_HOST is neither unix:///path nor tcp://host:port; docker mode will not run"; exit 0 ;;
  esac
else
  targets=(unix:/var/run/docker.sock "unix:$podman_sock")
  if [ -n "${XDG_RUNTIME_DIR:-}" ]; then targets+=("unix:$XDG_RUNTIME_DIR/podman/podman.sock"); fi
fi

# The first engine that answers, in $engine (empty: none).
find_engine() {
  engine=
  local t
  for t in "${targets[@]}"; do
    case $t in unix:*) [ -S "${t#unix:}" ] || continue ;; esac
    if api "$t" /_ping >/dev/null 2>&1; then engine=$t; return 0; fi
  done
  return 1
}

# Only Podman serves /libpod/ (a Docker answers 404). Only for Podman do we make
# the base image: a Docker with a registry pulls it itself at the first build.
is_podman() { api "$1" /libpod/_ping >/dev/null 2>&1; }
has_base_image() { api "$1" "/v1.41/images/$base_image/json" >/dev/null 2>&1; }
ready() { find_engine && { ! is_podman "$engine" || has_base_image "$engine"; }; }

# The quick path, taken on every run once everything is there: no lock, no apt.
if ready; then exit 0; fi
if [ -n "${DOCKER_HOST:-}" ] && [ -z "$engine" ]; then
  # A Podman on our own socket would not be used: the runs talk to DOCKER_HOST only.
  say "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine, or unset DOCKER_HOST to let this script set up Podman"
  exit 0
fi

# Root for apt, the service and debootstrap: ourselves, or sudo without a password.
# Without either: the exact command to run, once, as root.
if [ "$(id -u)" = 0 ]; then
  as_root() { "$@"; }
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root() { sudo -n "$@"; }
else
  say "docker mode (optional; everything else works) needs a container engine, which root sets up: sudo bash $(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup-docker.sh"
  exit 0
fi

# One set-up at a time: test files run setup.sh concurrently, and two of them
# must not both run apt-get, start a second service or debootstrap twice. Opened
# read-only, so a lock file another user made still serves. fd 9 is closed for
# the service started below, or the service would hold the lock for its whole life.
[ -e "$lock" ] || { : >"$lock" && chmod 666 "$lock"; } 2>/dev/null || true
exec 9<"$lock"
if ! flock -n 9; then
  say "waiting for another setup-docker.sh to finish"
  flock -w 900 9 || { say "gave up waiting for $lock after 15 minutes"; exit 1; }
fi
# The one we waited for may have done it all.
if ready; then exit 0; fi

apt_updated=
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    say "docker mode (optional; everything else works) needs Docker or Podman, and this machine has no apt-get to install Podman"
    exit 0
  fi
  say "installing $* with apt-get (its output: /tmp/fencecheck-apt.log)"
  # Wait for a dpkg lock rather than fail: another apt may be running. dpkg's
  # chatter goes to a file: it would bury the test suite's first lines.
  if [ -z "$apt_updated" ]; then as_root apt-get -o DPkg::Lock::Timeout=300 update -qq >>/tmp/fencecheck-apt.log 2>&1; fi
  apt_updated=1
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >>/tmp/fencecheck-apt.log 2>&1; then
    tail -5 /tmp/fencecheck-apt.log >&2
    return 1
  fi
}

if [ -z "$engine" ]; then
  # --- Podman, installed ---------------------------------------------------------
  need=()
  command -v podman >/dev/null 2>&1 || need+=(podman debootstrap)
  # crun, Debian's default runtime for Podman, fails in these containers
  # ("setrlimit RLIMIT_NOFILE: Operation not permitted", "cgroups in hybrid mode
  # not supported"); runc works.
  command -v runc >/dev/null 2>&1 || need+=(runc)
  command -v curl >/dev/null 2>&1 || command -v node >/dev/null 2>&1 || need+=(curl)
  if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}"; fi

  # --- Podman, configured --------------------------------------------------------
  # /etc/containers/containers.conf: runtime = "runc" (above), and no default
  # ulimits (Podman's default nofile limit is refused by the same setrlimit).
  # A key the user has already set, to anything, is left alone; a missing one is
  # added to its section, the section appended when missing. Podman reads this
  # when the service starts, so it is done before.
  conf=/etc/containers/containers.conf
  conf_has() { # section key
    [ -f "$conf" ] && awk -v s="[$1]" -v k="$2" '
      /^[[:space:]]*\[/ { cur = $0; gsub(/[[:space:]]|#.*/, "", cur); next }
      cur == s && $0 ~ "^[[:space:]]*" k "[[:space:]]*=" { found = 1 }
      END { exit !found }' "$conf"
  }
  conf_add() { # section line
    local tmp
    tmp=$(mktemp)
    if [ -f "$conf" ] && grep -Eq "^[[:space:]]*\[$1\][[:space:]]*(#.*)?$" "$conf"; then
      awk -v s="[$1]" -v l="$2" '
        { print }
        !done && /^[[:space:]]*\[/ { h = $0; gsub(/[[:space:]]|#.*/, "", h); if (h == s) { print l; done = 1 } }' "$conf" >"$tmp"
    else
      { if [ -f "$conf" ]; then cat "$conf"; echo; fi; printf '[%s]\n%s\n' "$1" "$2"; } >"$tmp"
    fi
    as_root mkdir -p "$(dirname "$conf")"
    # cp onto an existing file keeps its owner and mode.
    as_root cp "$tmp" "$conf"
    as_root chmod a+r "$conf"
    rm -f "$tmp"
  }
  if ! conf_has containers default_ulimits; then
    say "setting default_ulimits = [] in $conf"
    conf_add containers 'default_ulimits = []'
  fi
  if ! conf_has engine runtime; then
    say "setting runtime = \"runc\" in $conf"
    conf_add engine 'runtime = "runc"'
  fi

  # --- Podman's Docker-API service, started ---------------------------------------
  log=
  if [ -d /run/systemd/system ]; then
    # systemd is PID 1: its socket unit starts the service on the first request.
    say "starting podman.socket with systemd ($podman_sock)"
    as_root systemctl enable --now podman.socket >&2 9<&-
  else
    # No systemd (a container, CI, WSL): a service of its own, in a session of its
    # own, so it outlives this script and the test run that called it; its output
    # goes to a log, never to our caller's pipes, which it would otherwise hold
    # open. --time=0: it never exits for being idle. A socket file left by a
    # service that died would keep the new one from listening. It runs from /: a
    # service started from a checkout that is later deleted fails every container
    # start ("write child: broken pipe": its children cannot start in a directory
    # that is gone).
    log=/run/podman/fencecheck-service.log
    say "starting podman system service on $podman_sock (log: $log)"
    as_root sh -c 'cd / && mkdir -p /run/podman && rm -f "$1" &&
      exec setsid -f podman system service --time=0 "unix://$1" </dev/null >>"$2" 2>&1' sh "$podman_sock" "$log" 9<&-
  fi
  for _ in $(seq 150); do
    if [ -S "$podman_sock" ] && api "unix:$podman_sock" /_ping >/dev/null 2>&1; then break; fi
    sleep 0.1
  done
  if ! api "unix:$podman_sock" /_ping >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ] && [ -S "$podman_sock" ] && [ ! -w "$podman_sock" ]; then
      # Root's socket is root's: another user needs a Podman of their own.
      say "$podman_sock is root's; run fencecheck as root, or use rootless Podman: systemctl --user enable --now podman.socket"
      exit 0
    fi
    say "Podman's service did not answer on $podman_sock within 15 s; see ${log:-journalctl -u podman.service}"
    exit 1
  fi
  engine="unix:$podman_sock"
fi

# --- The base image, made from Debian's mirror -------------------------------------
# Podman only (see is_podman). No registry is tried: where none can be reached, a
# pull costs only its time-outs, and debootstrap needs nothing but the apt mirror.
if is_podman "$engine" && ! has_base_image "$engine"; then
  command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
  # Root's Podman serves $podman_sock; a rootless one is the user's own.
  if [ "$engine" = "unix:$podman_sock" ]; then podman_cli() { as_root podman "$@"; }; else podman_cli() { podman "$@"; }; fi

  # This machine's Debian mirror: the URI apt uses for the suite itself (so not
  # -updates' or a third party's), Deb822 or one-line format.
  mirror_for() { # suite
    local f files=()
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
      if [ -f "$f" ]; then files+=("$f"); fi
    done
    [ ${#files[@]} -gt 0 ] || return 0
    awk -v suite="$1" '
      function hit(uri) { if (uri != "" && !found) { print uri; found = 1 } }
      function end_stanza() { if (has) hit(uri); uri = ""; has = 0 }
      # Deb822: stanzas end at a blank line or at the end of a file.
      FNR == 1 || /^[[:space:]]*$/ { end_stanza() }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) has = 1 }
      /^Enabled:[[:space:]]*no/ { uri = "" }
      # One-line: deb [options] URI suite components...
      /^deb[[:space:]]/ {
        n = 2
        if ($2 ~ /^\[/) { while (n <= NF && $n !~ /\]$/) n++; n++ }
        if ($(n + 1) == suite) hit($n)
      }
      END { end_stanza() }' "${files[@]}"
  }
  mirror=$(mirror_for bookworm)
  mirror=${mirror:-http://deb.debian.org/debian}
  security=$(mirror_for bookworm-security)

  dir=$(mktemp -d /var/tmp/fencecheck-bookworm.XXXXXX)
  trap 'as_root rm -rf "$dir"; rm -f "$dir.log"' EXIT
  say "building $base_image with debootstrap from $mirror (once; about half a minute)"
  if ! as_root debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.log" 2>&1; then
    tail -n 20 "$dir.log" >&2
    say "debootstrap failed; docker mode will try to pull $base_image"
    exit 1
  fi
  # apt in builds (RUN apt-get update) reaches the same mirror, laid out as in
  # Debian's own image. The .debs debootstrap downloaded are no part of an image.
  {
    printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror"
    if [ -n "$security" ]; then
      printf '\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$security"
    fi
  } | as_root tee "$dir/etc/apt/sources.list.d/debian.sources" >/dev/null
  as_root rm -f "$dir/etc/apt/sources.list" "$dir/etc/hostname"
  as_root find "$dir/var/cache/apt" "$dir/var/lib/apt/lists" -type f -delete
  # "slim" as Debian's image is (debuerreotype's slimify): no documentation, man
  # pages or translations, neither now nor from the packages builds install; a
  # third of the size (about 120 MB without this, 75 MB with).
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/groff/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/linda/*' \
    'path-exclude /usr/share/lintian/*' 'path-exclude /usr/share/locale/*' \
    'path-include /usr/share/locale/locale.alias' 'path-exclude /usr/share/man/*' |
    as_root tee "$dir/etc/dpkg/dpkg.cfg.d/docker" >/dev/null
  slim=()
  for d in doc groff info linda lintian locale man; do
    if [ -d "$dir/usr/share/$d" ]; then slim+=("$dir/usr/share/$d"); fi
  done
  if [ ${#slim[@]} -gt 0 ]; then
    as_root find "${slim[@]}" -mindepth 1 ! -type d ! -path '*/doc/*/copyright' ! -path '*/locale/locale.alias' -delete
    as_root find "${slim[@]}" -mindepth 1 -depth -type d -empty -delete
  fi
  say "importing it into Podman"
  as_root tar -C "$dir" -c . | podman_cli import --quiet --change 'CMD ["bash"]' - "$base_image" >/dev/null
fi
