#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 cluster for Ebb's storage tests and
# prints the lines that point the tests at it (its URL, and the directory
# of the server programs, for the tests that start servers of their own):
#
#   eval "$(.ci/postgres.sh)"     # start (or reuse) the cluster
#   go test ./internal/storage/postgres/
#   .ci/postgres.sh stop          # stop it and delete its files
#
# The cluster listens on 127.0.0.1 only, on a free port, with trust auth,
# and keeps everything (data, socket, log) under $EBB_PG_DIR (default
# ${TMPDIR:-/tmp}/ebb-postgres). Running the script again while the cluster
# is up prints the same line without touching it. When the server binaries
# are missing it installs postgresql-15 with apt-get (Debian/Ubuntu).
#
# Only the export lines go to stdout; progress goes to stderr.
set -euo pipefail

dir="${EBB_PG_DIR:-${TMPDIR:-/tmp}/ebb-postgres}"
data="$dir/data"
db="ebb_test"

log() { echo "postgres.sh: $*" >&2; }

# as_owner runs a command as the cluster's owner: initdb and postgres
# refuse to run as root, so root hands over to the postgres user.
as_owner() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

find_bindir() {
	local d
	for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
		if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
			echo "$d"
			return 0
		fi
	done
	if command -v pg_config >/dev/null; then
		d="$(pg_config --bindir)"
		if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
			echo "$d"
			return 0
		fi
	fi
	return 1
}

install_postgres() {
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		sudo=(sudo)
	fi
	log "installing postgresql-15"
	"${sudo[@]}" apt-get update >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql-15 >&2
}

port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

url() {
	echo "export EBB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$1/$db?sslmode=disable"
	echo "export EBB_TEST_POSTGRES_BINDIR=$bindir"
}

bindir="$(find_bindir)" || {
	install_postgres
	bindir="$(find_bindir)" || {
		log "no initdb/pg_ctl after installing postgresql-15"
		exit 1
	}
}

if [[ "${1:-}" == "stop" ]]; then
	if [[ -f "$data/PG_VERSION" ]]; then
		as_owner "$bindir/pg_ctl" -D "$data" -m fast stop >&2 || true
	fi
	rm -rf "$dir"
	log "stopped and removed $dir"
	exit 0
fi

# Already running (and answering: a killed server can leave files that
# look alive): print the same line again.
if [[ -f "$dir/port" && -f "$data/PG_VERSION" ]] &&
	as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1 &&
	port_in_use "$(cat "$dir/port")"; then
	url "$(cat "$dir/port")"
	exit 0
fi

mkdir -p "$dir"
if [[ $(id -u) -eq 0 ]]; then
	chown postgres: "$dir"
fi
if [[ ! -f "$data/PG_VERSION" ]]; then
	log "initdb in $data"
	as_owner "$bindir/initdb" -D "$data" -U postgres --auth=trust \
		--encoding=UTF8 --locale=C.UTF-8 >/dev/null
fi

# Try free ports until one starts; another process can take a port
# between the check and the start.
started=""
for port in $(seq 54330 54429); do
	if port_in_use "$port"; then
		continue
	fi
	if as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200" \
		start >&2; then
		started="$port"
		break
	fi
	log "could not start on port $port, trying the next one"
done
if [[ -z "$started" ]]; then
	log "could not start PostgreSQL; see $dir/postgres.log"
	exit 1
fi
echo "$started" | as_owner tee "$dir/port" >/dev/null

psql=("$bindir/psql" -h 127.0.0.1 -p "$started" -U postgres -d postgres -v ON_ERROR_STOP=1 -tAq)
if [[ "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" != "1" ]]; then
	"${psql[@]}" -c "CREATE DATABASE $db" >&2
fi
log "PostgreSQL $("${psql[@]}" -c 'SHOW server_version') on 127.0.0.1:$started, database $db"
url "$started"
