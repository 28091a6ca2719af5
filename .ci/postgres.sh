#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the store tests and prints its URL.
#
#   export ZKAGENT_TEST_POSTGRES_URL=$(bash .ci/postgres.sh)
#
# Written for a fresh Debian 12 machine running as root with no services
# (CI), and works on a developer machine where PostgreSQL is already
# installed. Idempotent: a second run finds the cluster already running on the
# port and only prints the URL again. Stdout carries exactly one line, the
# URL; every other message goes to stderr so the command substitution above
# captures nothing else.
#
# Overridable: ZKAGENT_PG_PORT (54329), ZKAGENT_PG_DIR (/tmp/zkagent-pg-<port>),
# ZKAGENT_PG_USER / ZKAGENT_PG_PASSWORD (zkagent / zkagent), ZKAGENT_PG_DB
# (zkagent_test).
set -euo pipefail

PORT="${ZKAGENT_PG_PORT:-54329}"
# A fixed directory per port, not mktemp: a second run must find the cluster.
DIR="${ZKAGENT_PG_DIR:-/tmp/zkagent-pg-$PORT}"
DB_USER="${ZKAGENT_PG_USER:-zkagent}"
DB_PASSWORD="${ZKAGENT_PG_PASSWORD:-zkagent}"
DB_NAME="${ZKAGENT_PG_DB:-zkagent_test}"
DATA="$DIR/data"
LOG="$DIR/postgres.log"

log() { printf '[postgres.sh] %s\n' "$*" >&2; }

# Debian keeps the server binaries out of PATH, in /usr/lib/postgresql/<ver>/bin.
find_bindir() {
  if [ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/initdb" ]; then echo "$PG_BINDIR"; return 0; fi
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  return 1
}

if ! BINDIR="$(find_bindir)"; then
  if [ "$(id -u)" -ne 0 ]; then
    log "PostgreSQL is not installed and this is not root: install the 'postgresql' package first"
    exit 1
  fi
  log "installing PostgreSQL (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # The package may also create and start its own 'main' cluster on 5432; it
  # is not used here and does not conflict with the port below.
  apt-get install -y -qq --no-install-recommends postgresql >&2
  BINDIR="$(find_bindir)" || { log "initdb not found after installing postgresql"; exit 1; }
fi

# The server refuses to run as root, so as root everything runs as the
# 'postgres' user that the Debian package creates; otherwise as ourselves.
if [ "$(id -u)" -eq 0 ]; then
  RUN_USER=postgres
  as_pg() { runuser -u postgres -- "$@"; }
else
  RUN_USER="$(id -un)"
  as_pg() { "$@"; }
fi

psql_admin() {
  # Over the unix socket in $DIR, as the bootstrap superuser (trust auth there).
  as_pg "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p "$PORT" -U postgres -d postgres "$@"
}

wait_ready() {
  local i
  for i in $(seq 1 60); do
    if as_pg "$BINDIR/pg_isready" -q -h "$DIR" -p "$PORT"; then return 0; fi
    sleep 0.5
  done
  log "server did not become ready; last log lines:"
  tail -n 30 "$LOG" >&2 || true
  return 1
}

if as_pg "$BINDIR/pg_isready" -q -h "$DIR" -p "$PORT" 2>/dev/null; then
  log "reusing the cluster already running in $DIR on port $PORT"
else
  mkdir -p "$DIR"
  if [ "$(id -u)" -eq 0 ]; then chown "$RUN_USER" "$DIR"; fi
  chmod 700 "$DIR"

  if [ ! -f "$DATA/PG_VERSION" ]; then
    log "creating a cluster in $DATA"
    # trust on the unix socket (only reachable through the 0700 directory) for
    # setup; passwords over TCP, which is what the tests use.
    as_pg "$BINDIR/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      --encoding=UTF8 --locale=C.UTF-8 >&2
    cat >>"$DATA/postgresql.conf" <<EOF
# zkagent test cluster (.ci/postgres.sh)
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
# Several suites each open pools of up to 10 connections, some at the same time.
max_connections = 200
EOF
  fi

  log "starting PostgreSQL on 127.0.0.1:$PORT"
  # A leftover pid file from a killed server is handled by pg_ctl itself.
  as_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >&2 || {
    log "pg_ctl start failed; last log lines:"
    tail -n 30 "$LOG" >&2 || true
    exit 1
  }
fi
wait_ready

# Role and database: created when missing, password reset every run so the
# printed URL always works even if the variables changed.
psql_admin -v user="$DB_USER" -v pass="$DB_PASSWORD" -v db="$DB_NAME" >&2 <<'SQL'
SELECT format('CREATE ROLE %I LOGIN CREATEDB', :'user')
  WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user') \gexec
SELECT format('ALTER ROLE %I LOGIN CREATEDB PASSWORD %L', :'user', :'pass') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'user')
  WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SQL

urlencode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1" 2>/dev/null || printf '%s' "$1"; }
log "ready"
printf 'postgres://%s:%s@127.0.0.1:%s/%s\n' "$(urlencode "$DB_USER")" "$(urlencode "$DB_PASSWORD")" "$PORT" "$DB_NAME"
