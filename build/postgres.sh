#!/usr/bin/env bash
# Starts a throwaway PostgreSQL for the tests (the relay's store suite runs
# on it) and prints its URL, for:
#
#   export RERUN_TEST_POSTGRES=$(build/postgres.sh)
#
# Debian/Ubuntu: installs the `postgresql` package when no server is there
# (apt-get, sudo when not root; --no-install skips that and fails instead).
# The cluster lives in $RERUN_PG_DIR (default $TMPDIR/rerun-test-postgres):
# its own data folder, socket and port on 127.0.0.1, trust authentication,
# owned by the `postgres` user when run as root (initdb refuses root). A
# cluster already running there is reused; the system's own clusters are
# never touched. `build/postgres.sh stop` stops it.
set -euo pipefail

dir=${RERUN_PG_DIR:-${TMPDIR:-/tmp}/rerun-test-postgres}
install=1
cmd=start
for a in "$@"; do
  case "$a" in
    --no-install) install=0 ;;
    stop) cmd=stop ;;
    *) echo "usage: build/postgres.sh [--no-install] [stop]" >&2; exit 2 ;;
  esac
done
log() { echo "postgres: $*" >&2; }

bindir() { # the newest installed server's bin folder, or nothing
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
  return 0
}

bin=$(bindir)
if [ -z "$bin" ] && command -v initdb >/dev/null; then
  bin=$(dirname "$(command -v initdb)")
fi
if [ -z "$bin" ]; then
  if [ "$cmd" = stop ]; then exit 0; fi
  if [ $install = 0 ] || ! command -v apt-get >/dev/null; then
    log "no PostgreSQL server installed (Debian: apt-get install postgresql)"
    exit 1
  fi
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  log "installing the postgresql package"
  # The package's own cluster (main, port 5432) is not needed here: the
  # policy file keeps apt from creating and starting it.
  $sudo mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.d/rerun-no-main.conf >/dev/null
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends postgresql >&2
  bin=$(bindir)
  [ -n "$bin" ] || { log "the postgresql package installed no server"; exit 1; }
fi

# as USER: run a server program as the cluster's owner.
as() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

if [ "$cmd" = stop ]; then
  if [ -f "$dir/data/postmaster.pid" ]; then
    as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
  fi
  exit 0
fi

mkdir -p "$dir"
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || { log "no postgres user (the postgresql package makes it)"; exit 1; }
  chown postgres: "$dir"
  chmod 700 "$dir"
fi

if [ ! -f "$dir/data/PG_VERSION" ]; then
  rm -rf "$dir/data"
  as "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
fi

url() { echo "postgres://postgres@127.0.0.1:$1/rerun_test?sslmode=disable"; }

# Running already (a previous call): reuse it.
if [ -f "$dir/port" ] && as "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
  port=$(cat "$dir/port")
  if as "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d rerun_test -Atqc 'SELECT 1' >/dev/null 2>&1; then
    url "$port"
    exit 0
  fi
  as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
fi
rm -f "$dir/data/postmaster.pid" # left by a killed server; pg_ctl status said it is not running

# A free port: 54329 unless something (another engineer's server) has it.
port=54329
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
echo "$port" >"$dir/port"

# Durable as in production (the benchmarks measure commits); the socket
# goes in the cluster's folder, not /run/postgresql (root's).
as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
  -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=300" >&2 ||
  { tail -20 "$dir/server.log" >&2; exit 1; }
if [ -z "$(as "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'rerun_test'")" ]; then
  as "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc 'CREATE DATABASE rerun_test' >&2
fi
log "running on 127.0.0.1:$port (data in $dir/data)"
url "$port"
