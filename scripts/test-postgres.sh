#!/usr/bin/env bash
# The PostgreSQL session-store suite, the resume bench and the streaming export/import check: uses PANTO_TEST_PG_URL when set, else starts a throwaway server
# (scripts/pg-test-server.sh) for the run and stops it after. Skips (exit 0, saying why) when PostgreSQL is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
started=""
if [ -z "${PANTO_TEST_PG_URL:-}" ]; then
  if ! env_lines="$(bash scripts/pg-test-server.sh start)"; then
    echo "test:postgres: no PostgreSQL server could be started (apt-get install -y postgresql); PostgreSQL store tests skipped"
    exit 0
  fi
  eval "$env_lines"
  started="$PANTO_TEST_PG_DIR"
  trap 'bash scripts/pg-test-server.sh stop "$started"' EXIT
fi
export PANTO_TEST_PG_URL
npx vitest run --config vitest.postgres.config.ts "$@"
node bench/session-store.mjs --entries=2000 --quick
node scripts/test-session-stream.mjs
