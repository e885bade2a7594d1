#!/usr/bin/env bash
# A throwaway PostgreSQL server for the session-store tests (Debian's `postgresql` package), on a loopback port with a
# temporary data directory. Usage:
#   eval "$(bash scripts/pg-test-server.sh start)"   # exports PANTO_TEST_PG_URL and PANTO_TEST_PG_DIR
#   bash scripts/pg-test-server.sh stop "$PANTO_TEST_PG_DIR"
# Runs the server as the `postgres` user when started as root (initdb refuses root). PANTO_TEST_PG_PORT picks the port
# (default 54329). Exits 3 when no PostgreSQL binaries are installed.
set -euo pipefail
cmd="${1:-}"
bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "pg-test-server: no PostgreSQL found (apt-get install -y postgresql)" >&2
  exit 3
fi
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$cmd" in
  start)
    port="${PANTO_TEST_PG_PORT:-54329}"
    dir="$(mktemp -d /tmp/panto-pg-XXXXXX)"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_pg "$bindir/initdb" -D "$dir/data" -U panto --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=100" start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    echo "export PANTO_TEST_PG_URL=postgres://panto@127.0.0.1:$port/postgres PANTO_TEST_PG_DIR=$dir"
    ;;
  stop)
    dir="${2:?usage: pg-test-server.sh stop DIR}"
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: pg-test-server.sh start | stop DIR" >&2
    exit 2
    ;;
esac
