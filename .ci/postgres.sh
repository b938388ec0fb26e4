#!/usr/bin/env bash
# Brings up a PostgreSQL server for the pgstore tests and prints the DSN of
# its test database on stdout (everything else goes to stderr):
#   dsn=$(bash .ci/postgres.sh) && export PRAXA_TEST_PG_DSN=$dsn
# It installs Debian's postgresql package when no server is installed,
# creates and starts the newest cluster, and creates the role and database
# praxa (password praxa). Every step is skipped when already done, so it can
# run again on the same machine.
set -euo pipefail

log() { echo "postgres: $*" >&2; }
die() {
	echo "postgres: $*" >&2
	exit 1
}
as_postgres() { su postgres -s /bin/sh -c "$1"; }

if ! compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null; then
	log "installing Debian's postgresql package"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || die "apt-get update failed"
	apt-get install -y -qq postgresql >&2 || die "apt-get install -y postgresql failed"
fi
command -v pg_ctlcluster >/dev/null || die "pg_ctlcluster not found (postgresql-common is missing)"

version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
if [[ -z $version || ! -d /etc/postgresql/$version/main ]]; then
	version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
	log "creating cluster $version/main"
	pg_createcluster "$version" main >&2 || die "pg_createcluster $version main failed"
fi
if ! pg_ctlcluster "$version" main status >/dev/null 2>&1; then
	log "starting cluster $version/main"
	pg_ctlcluster "$version" main start >&2 ||
		die "pg_ctlcluster $version main start failed; its log: $(tail -n 20 /var/log/postgresql/postgresql-"$version"-main.log 2>/dev/null)"
fi
port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $3 }')
[[ -n $port ]] || die "cannot tell the port of cluster $version/main"
for _ in $(seq 100); do
	pg_isready -q -h 127.0.0.1 -p "$port" && break
	sleep 0.1
done
pg_isready -q -h 127.0.0.1 -p "$port" || die "cluster $version/main does not accept connections on 127.0.0.1:$port"

psql_admin="psql -X -q -v ON_ERROR_STOP=1 -p $port"
if [[ $(as_postgres "$psql_admin -tAc \"SELECT 1 FROM pg_roles WHERE rolname = 'praxa'\"") != 1 ]]; then
	log "creating role praxa"
	as_postgres "$psql_admin -c \"CREATE ROLE praxa LOGIN SUPERUSER PASSWORD 'praxa'\"" >&2 || die "CREATE ROLE praxa failed"
fi
if [[ $(as_postgres "$psql_admin -tAc \"SELECT 1 FROM pg_database WHERE datname = 'praxa'\"") != 1 ]]; then
	log "creating database praxa"
	as_postgres "createdb -p $port -O praxa praxa" >&2 || die "createdb praxa failed"
fi
dsn="postgres://praxa:praxa@127.0.0.1:$port/praxa?sslmode=disable"
psql -X -q -d "$dsn" -c "SELECT 1" >/dev/null || die "cannot connect as praxa to 127.0.0.1:$port"
log "PostgreSQL $version ready on 127.0.0.1:$port"
echo "$dsn"
