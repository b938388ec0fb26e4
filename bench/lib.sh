# shellcheck shell=bash
# bench/lib.sh: shell helpers the load scripts of bench/ share (sourced, not
# run). The method is shared/reference/performance.md's: servers pinned to
# one core, the load generator to the other, candidates interleaved, every
# figure reported with its ratio to a baseline measured in the same run.

# A script sources it (`. "$(dirname "$0")/lib.sh"`, after set -euo
# pipefail), which sets ROOT, the repository the script is in, and the
# cores of the method: SERVER_CPU (default 0) for the servers, LOAD_CPU
# (default 1) for the load generator.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}

# out_dir NAME: sets OUT (default a new directory /tmp/praxa-NAME.XXXXXX)
# and makes it.
out_dir() {
	OUT=${OUT:-$(mktemp -d "/tmp/praxa-$1.XXXXXX")}
	mkdir -p "$OUT"
}

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# wait_url LOGFILE PREFIX: the URL a server printed ("PREFIX: listening on
# URL"), within 30 s.
wait_url() {
	local file=$1 prefix=$2 url=""
	for _ in $(seq 1 300); do
		url=$(sed -n "s/^$prefix: listening on \(http:\/\/[^ ]*\).*/\1/p" "$file" 2>/dev/null | head -n1)
		[ -n "$url" ] && { echo "$url"; return 0; }
		sleep 0.1
	done
	echo "no listening line in $file" >&2
	cat "$file" >&2
	return 1
}

# need_tools SCRIPT TOOL...: SCRIPT stops unless every TOOL is on PATH.
need_tools() {
	local script=$1 tool
	shift
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || { echo "$script: $tool is missing" >&2; exit 1; }
	done
}

# need_two_cpus SCRIPT SERVER LOAD: SCRIPT stops unless the machine has two
# CPUs, one for SERVER (on SERVER_CPU), one for LOAD (on LOAD_CPU).
need_two_cpus() {
	if [ "$(nproc)" -lt 2 ]; then
		echo "$1: needs two CPUs ($2 on ${SERVER_CPU:-0}, $3 on ${LOAD_CPU:-1})" >&2
		exit 1
	fi
}

# PIDS are the processes a script started (start, start_as and its own);
# stop_all stops them and waits for them to end.
PIDS=()
stop_all() {
	local pid
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}

# start NAME ARGS...: starts $OUT/NAME pinned to SERVER_CPU; sets PID_NAME
# and URL_NAME.
start() { start_as "$1" "$@"; }

# start_as NAME BIN ARGS...: start, for a second server of the program
# $OUT/BIN (a path under $OUT; it prints "BASENAME: listening on URL"),
# named NAME.
start_as() {
	local name=$1 bin=$2
	shift 2
	taskset -c "$SERVER_CPU" "$OUT/$bin" "$@" 2>"$OUT/$name.log" &
	PIDS+=($!)
	printf -v "PID_$name" '%s' "$!"
	local url
	url=$(wait_url "$OUT/$name.log" "$(basename "$bin")")
	printf -v "URL_$name" '%s' "$url"
}

# cpu_ticks PID...: user+system ticks the processes used so far.
cpu_ticks() {
	local n=0 p t
	for p in "$@"; do
		t=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)
		n=$((n + t))
	done
	echo "$n"
}
# core_pct TICKS SECS: TICKS of CPU time as a whole % of one core over SECS
# seconds.
core_pct() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" -v s="$2" 'BEGIN { printf "%.0f", 100 * t / hz / s }'; }

# children_pct TIMES0 TIMES1 SECS: the % of one core this shell's children
# used between two first lines of `times` output ("XmY.YYYs XmY.YYYs": user,
# system) SECS seconds apart.
children_pct() {
	printf '%s\n%s\n' "$1" "$2" | awk -v s="$3" '
		function sec(v,  m) { m = v; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", v); sub(/s$/, "", v); return m * 60 + v }
		NR == 1 {a = sec($1) + sec($2)} NR == 2 {b = sec($1) + sec($2)} END {printf "%.0f", 100 * (b - a) / s}'
}

# foreign_pct BUSY_TICKS SECS SERVERS LOAD: the % of one core the machine
# was busy (busy_ticks) over SECS seconds beyond the servers' and the load
# generator's own % (core_pct, children_pct); 0 at the least.
foreign_pct() {
	awk -v t="$1" -v hz="$(getconf CLK_TCK)" -v s="$2" -v srv="$3" -v l="$4" \
		'BEGIN { f = 100 * t / hz / s - srv - l; if (f < 0) f = 0; printf "%.0f", f }'
}

# busy_ticks: user+nice+system ticks of all CPUs (not irq, softirq, steal).
busy_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4}' /proc/stat; }
steal_ticks() { awk '$1 == "cpu" {print $9}' /proc/stat; }

# quiet_wait: waits for three seconds in a row in which both cores together
# were at most QUIET_MAX % busy, at most QUIET_WAIT seconds (then measures
# anyway: the machine is shared, and each run records how much CPU others
# used meanwhile); QUIET_WAIT=0 does not wait.
quiet_wait() {
	[ "${QUIET_WAIT:-30}" -gt 0 ] || return 0
	local waited=0 quiet=0 a b busy
	while :; do
		a=$(busy_ticks); sleep 1; b=$(busy_ticks)
		busy=$(( (b - a) * 100 / $(getconf CLK_TCK) ))
		if [ "$busy" -le "${QUIET_MAX:-10}" ]; then quiet=$((quiet + 1)); else quiet=0; fi
		[ "$quiet" -ge 3 ] && return 0
		waited=$((waited + 1))
		if [ "$waited" -ge "${QUIET_WAIT:-30}" ]; then
			log "the machine did not quiet down in ${QUIET_WAIT:-30}s (busy ${busy}%): measuring anyway"
			return 0
		fi
	done
}

# --- the host's speed ---------------------------------------------------------
# The machines are virtual and shared: for tens of seconds at a time the
# host gives the server's core fewer cycles per second of CPU time, with no
# steal time reported (BENCHMARKS.md, "The host's slow periods"), and every
# server on that core spends more CPU per request. bench/hostprobe, pinned
# to the server's core, samples the rate at which it runs a tight loop in
# its own CPU time; a run is compared with the fastest rate the probe has
# seen (its 90th percentile): HOST_MIN (default 0.85) of it or more counts
# as the host at speed.

# host_probe_start BIN FILE: starts the probe BIN pinned to SERVER_CPU,
# writing its samples to FILE; sets HOST_FILE and PID_hostprobe (the
# caller adds it to the processes it stops).
host_probe_start() {
	HOST_FILE=$2
	taskset -c "${SERVER_CPU:-0}" "$1" >"$HOST_FILE" 2>"$HOST_FILE.log" &
	PID_hostprobe=$!
}

# host_now: the current time in milliseconds, as the probe stamps samples.
host_now() { date +%s%3N; }

# host_speed FROM_MS TO_MS: the probe's median rate between the two times
# over its 90th percentile of all samples so far, two decimals; 1.00 when
# there are no samples (no probe).
host_speed() {
	local file=${HOST_FILE:-/dev/null} ref med
	ref=$(awk '{print $2}' "$file" | sort -g | awk '{a[NR] = $1} END { i = int(0.9 * NR); if (i < 1) i = 1; if (NR) print a[i] }')
	med=$(awk -v from="$1" -v to="$2" '$1 >= from && $1 <= to {print $2}' "$file" | median)
	awk -v r="${ref:-0}" -v m="${med:-0}" 'BEGIN { if (r > 0 && m > 0) printf "%.2f\n", m / r; else print "1.00" }'
}

# host_ok SPEED: whether a run at SPEED (host_speed) had the host at speed.
host_ok() { awk -v s="$1" -v min="${HOST_MIN:-0.85}" 'BEGIN { exit !(s >= min) }'; }

# host_wait: before a run, waits (at most HOST_WAIT seconds, default 60; 0
# does not wait) until the last two seconds had the host at speed, then
# returns; after HOST_WAIT it measures anyway (the run records its speed).
host_wait() {
	[ -n "${HOST_FILE:-}" ] && [ "${HOST_WAIT:-60}" -gt 0 ] || return 0
	local waited=0 now
	while :; do
		now=$(host_now)
		host_ok "$(host_speed $((now - 2000)) "$now")" && return 0
		if [ "$waited" -ge "${HOST_WAIT:-60}" ]; then
			log "the host stayed slow for ${HOST_WAIT:-60}s (speed $(host_speed $((now - 2000)) "$now")): measuring anyway"
			return 0
		fi
		sleep 1
		waited=$((waited + 1))
	done
}

# median, minmax: of the numbers on stdin, one a line.
median() { sort -g | awk '{a[NR] = $1} END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
minmax() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }

# mcp_proxy_config FILE UPSTREAM_URL: the praxa configuration of the MCP
# load scripts: the upstream's echo imported from an mcp connection as the
# capability up.echo, listed as an MCP tool of its own, and no
# per-principal rate limit (one token sends all the traffic).
mcp_proxy_config() {
	cat >"$1" <<YAML
server:
  limits:
    ratePerSecond: -1
connections:
  upstream:
    kind: mcp
    url: $2
proxy:
  import:
    - connection: upstream
      prefix: up
      include: [echo]
      exposeDirectly: true
YAML
}
