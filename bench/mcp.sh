#!/usr/bin/env bash
# bench/mcp.sh: the MCP load harness. It compares, in one run, interleaved,
# a proxied tools/call through Praxa's /mcp with the same call made on the
# upstream directly and through a naive go-sdk relay, and Praxa's MCP home
# read with a bare go-sdk server answering the same bytes; sequential
# (1 session) and concurrent (8 sessions, each its own client session and
# connection). Method of shared/reference/performance.md: every server
# pinned to SERVER_CPU, the load driver to LOAD_CPU.
#
# Candidates (all on 127.0.0.1, nothing else is contacted):
#   direct    echo on bench/mcpecho (a go-sdk server, stateless streamable
#             HTTP): the floor of a proxied call
#   relay     echo on bench/mcprelay: a go-sdk server whose echo calls
#             mcpecho's through one client session held open
#   rawrelay  echo on bench/mcprelay -raw: the same go-sdk server calling
#             mcpecho with one hand-written HTTP POST per call, no
#             client session: the ceiling of any relay built on go-sdk's
#             server, with no authentication, validation or record
#   praxa     up.echo on praxa serve --dev's /mcp, bearer token: mcpecho's
#             echo imported from an mcp connection (proxy.import,
#             exposeDirectly), default durable SQLite store
#   praxatmpfs
#             up.echo on a second praxa, its data on tmpfs: the proxied
#             call without the cost of its audit event's fsync
#   home      praxec.query {} on the same praxa's /mcp
#   barehome  praxec.query on bench/mcphome: a bare go-sdk server answering
#             the same bytes (taken from praxa's POST /v8/praxec/query {}
#             at start) as structuredContent plus text
#   praxa25, home25 (REVISIONS=1 or only)
#             praxa's and home's calls with the client pinned to MCP
#             2025-11-25 (initialize handshake, no per-request _meta, no
#             Mcp-Method/Mcp-Name headers) instead of 2026-07-28: what a
#             tools/call costs at 2026-07-28 against 2025-11-25, on the
#             same server in the same run
# The load driver is bench/mcpload (go-sdk client); every candidate but
# praxa25 and home25 negotiates 2026-07-28.
#
# Usage: bench/mcp.sh            (from anywhere; builds from this checkout)
# Environment (defaults): DURATION=5s WARMUP=1s RUNS=3 SESSIONS="1 8"
#   SERVER_CPU=0 LOAD_CPU=1 OUT=<new dir under /tmp>
#   QUIET_WAIT=20 QUIET_MAX=10 MAX_FOREIGN=30 RETRIES=1 HOST_WAIT=60
#   HOST_MIN=0.85 (bench/lib.sh: the host's speed; a run below it is run
#   again, like one with more foreign CPU than MAX_FOREIGN)
#   REVISIONS=0: 1 adds praxa25 and home25 and the ratios
#   mcp-proxied-2026/2025-xN and mcp-home-2026/2025-xN (calls/s at
#   2026-07-28 over calls/s at 2025-11-25: below 1, 2026-07-28 costs more);
#   only measures praxa, praxa25, home and home25 alone.
# Output: a table of medians (min-max), the ratios, also in $OUT/summary.txt,
# and $OUT/ratios.txt (one "name value range" a line, read by bench/all.sh);
# raw mcpload lines and server logs stay in $OUT.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
RUNS=${RUNS:-3}
SESSIONS=${SESSIONS:-1 8}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
QUIET_WAIT=${QUIET_WAIT:-20}
QUIET_MAX=${QUIET_MAX:-10}
MAX_FOREIGN=${MAX_FOREIGN:-30}
RETRIES=${RETRIES:-1}
REVISIONS=${REVISIONS:-0}
OUT=${OUT:-$(mktemp -d /tmp/praxa-mcp.XXXXXX)}
mkdir -p "$OUT"
export QUIET_WAIT QUIET_MAX

for tool in taskset curl go; do
	command -v "$tool" >/dev/null 2>&1 || { echo "mcp.sh: $tool is missing" >&2; exit 1; }
done
if [ "$(nproc)" -lt 2 ]; then
	echo "mcp.sh: needs two CPUs (servers on $SERVER_CPU, load on $LOAD_CPU)" >&2
	exit 1
fi

log "building praxa and the MCP baselines from $ROOT into $OUT"
(cd "$ROOT" && go build -o "$OUT/" ./cmd/praxa ./bench/mcpecho ./bench/mcprelay ./bench/mcphome ./bench/mcpload ./bench/hostprobe)

# --- servers ---------------------------------------------------------------
PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	[ -n "${TMPFS_DIR:-}" ] && rm -rf "$TMPFS_DIR"
	return 0
}
trap cleanup EXIT

# start NAME ARGS...: starts $OUT/NAME pinned to SERVER_CPU; sets PID_NAME
# and URL_NAME.
start() { start_as "$1" "$@"; }

# start_as NAME BIN ARGS...: start, for a second server of the program
# $OUT/BIN, named NAME.
start_as() {
	local name=$1 bin=$2
	shift 2
	taskset -c "$SERVER_CPU" "$OUT/$bin" "$@" 2>"$OUT/$name.log" &
	PIDS+=($!)
	printf -v "PID_$name" '%s' "$!"
	local url
	url=$(wait_url "$OUT/$name.log" "$bin")
	printf -v "URL_$name" '%s' "$url"
}

host_probe_start "$OUT/hostprobe" "$OUT/hostprobe.txt"
PIDS+=("$PID_hostprobe")
start mcpecho -addr 127.0.0.1:0
# shellcheck disable=SC2154 # set by start
start mcprelay -addr 127.0.0.1:0 -upstream "$URL_mcpecho"
start_as rawrelay mcprelay -addr 127.0.0.1:0 -upstream "$URL_mcpecho" -raw

# One token sends all the traffic: lift the per-principal rate limit. The
# upstream's echo becomes the capability up.echo, listed as an MCP tool of
# its own.
cat >"$OUT/praxec.yaml" <<YAML
server:
  limits:
    ratePerSecond: -1
connections:
  upstream:
    kind: mcp
    url: $URL_mcpecho
proxy:
  import:
    - connection: upstream
      prefix: up
      include: [echo]
      exposeDirectly: true
YAML
"$OUT/praxa" config validate "$OUT/praxec.yaml" >/dev/null
start praxa serve --dev --addr 127.0.0.1:0 --data-dir "$OUT/data" --config "$OUT/praxec.yaml"
# The same gateway with its data on tmpfs: what the audit event's fsync
# costs a proxied call.
TMPFS_DIR=$(mktemp -d /dev/shm/praxa-mcp.XXXXXX)
start_as praxatmpfs praxa serve --dev --addr 127.0.0.1:0 --data-dir "$TMPFS_DIR/data" --config "$OUT/praxec.yaml"
export PRAXA_TOKEN_TMPFS
PRAXA_TOKEN_TMPFS=$("$OUT/praxa" token --data-dir "$TMPFS_DIR/data" --ttl 2h)
export PRAXA_TOKEN
PRAXA_TOKEN=$("$OUT/praxa" token --data-dir "$OUT/data" --ttl 2h)
# shellcheck disable=SC2154 # set by start
start mcphome -addr 127.0.0.1:0 -home-from "$URL_praxa"

ECHO_ARGS='{"text":"hello from mcpload"}'
case $REVISIONS in
0) CANDIDATES=(direct relay rawrelay praxa praxatmpfs home barehome) ;;
1) CANDIDATES=(direct relay rawrelay praxa praxatmpfs praxa25 home home25 barehome) ;;
only) CANDIDATES=(praxa praxa25 home home25) ;;
*) echo "mcp.sh: REVISIONS=$REVISIONS: want 0, 1 or only" >&2; exit 1 ;;
esac
# has CANDIDATE: whether this run measures it.
has() { [[ " ${CANDIDATES[*]} " == *" $1 "* ]]; }

# target CANDIDATE: sets T_URL, T_TOOL, T_ARGS, T_PROTO (the MCP revision
# the client pins) and T_PIDS (the server processes the call goes through,
# whose CPU is reported).
# shellcheck disable=SC2154 # URL_* and PID_* are set by start
target() {
	T_ARGS=$ECHO_ARGS T_TOOL=echo T_PROTO=2026-07-28 T_TOKEN_ENV=PRAXA_TOKEN
	case $1 in
	direct) T_URL=$URL_mcpecho T_PIDS=("$PID_mcpecho") ;;
	relay) T_URL=$URL_mcprelay T_PIDS=("$PID_mcprelay" "$PID_mcpecho") ;;
	rawrelay) T_URL=$URL_rawrelay T_PIDS=("$PID_rawrelay" "$PID_mcpecho") ;;
	praxa) T_URL=$URL_praxa/mcp T_TOOL=up.echo T_PIDS=("$PID_praxa" "$PID_mcpecho") ;;
	praxatmpfs) T_URL=$URL_praxatmpfs/mcp T_TOOL=up.echo T_TOKEN_ENV=PRAXA_TOKEN_TMPFS T_PIDS=("$PID_praxatmpfs" "$PID_mcpecho") ;;
	home) T_URL=$URL_praxa/mcp T_TOOL=praxec.query T_ARGS='{}' T_PIDS=("$PID_praxa") ;;
	praxa25) T_URL=$URL_praxa/mcp T_TOOL=up.echo T_PROTO=2025-11-25 T_PIDS=("$PID_praxa" "$PID_mcpecho") ;;
	home25) T_URL=$URL_praxa/mcp T_TOOL=praxec.query T_ARGS='{}' T_PROTO=2025-11-25 T_PIDS=("$PID_praxa") ;;
	barehome) T_URL=$URL_mcphome T_TOOL=praxec.query T_ARGS='{}' T_PIDS=("$PID_mcphome") ;;
	esac
}

# run CANDIDATE SESSIONS DURATION TAG: one mcpload run; prints "calls/s
# p50ms p99ms errors server-cpu% foreign-cpu% text-bytes host-speed" (lib.sh's
# host_speed over the run; it waits for the host to be at speed first, as
# for quiet).
run() {
	local cand=$1 n=$2 dur=$3 tag=$4
	target "$cand"
	local file="$OUT/mcpload-$cand-s$n-$tag.txt" hz secs before after busy0 busy1 l0 l1 t0 t1
	hz=$(getconf CLK_TCK)
	quiet_wait
	host_wait
	local h0 h1
	h0=$(host_now)
	times >"$OUT/.times"
	l0=$(awk 'NR == 2 {print $1 " " $2}' "$OUT/.times")
	before=$(cpu_ticks "${T_PIDS[@]}"); busy0=$(busy_ticks); t0=$(date +%s%N)
	taskset -c "$LOAD_CPU" "$OUT/mcpload" -url "$T_URL" -tool "$T_TOOL" -args "$T_ARGS" -sessions "$n" \
		-duration "$dur" -protocol "$T_PROTO" -token-env "$T_TOKEN_ENV" -label "$cand" >"$file" 2>&1 || { cat "$file" >&2; echo "mcp.sh: mcpload failed for $cand" >&2; exit 1; }
	after=$(cpu_ticks "${T_PIDS[@]}"); busy1=$(busy_ticks); t1=$(date +%s%N)
	h1=$(host_now)
	times >"$OUT/.times"
	l1=$(awk 'NR == 2 {print $1 " " $2}' "$OUT/.times")
	# CPU shares are of the whole mcpload run (start, connect, first call
	# and the measured stretch): the servers are nearly idle outside it.
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	local cpu loadcpu foreign
	cpu=$(awk -v t="$((after - before))" -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.0f", 100 * t / hz / s }')
	loadcpu=$(printf '%s\n%s\n' "$l0" "$l1" | awk -v s="$secs" '
		function sec(v,  m) { m = v; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", v); sub(/s$/, "", v); return m * 60 + v }
		NR == 1 {a = sec($1) + sec($2)} NR == 2 {b = sec($1) + sec($2)} END {printf "%.0f", 100 * (b - a) / s}')
	foreign=$(awk -v t="$((busy1 - busy0))" -v hz="$hz" -v s="$secs" -v srv="$cpu" -v l="$loadcpu" \
		'BEGIN { f = 100 * t / hz / s - srv - l; if (f < 0) f = 0; printf "%.0f", f }')
	awk -v cpu="$cpu" -v foreign="$foreign" -v speed="$(host_speed "$h0" "$h1")" '/^mcpload / {
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print v["calls_per_s"], v["p50_ms"], v["p99_ms"], v["errors"], cpu, foreign, v["text_bytes"], speed }' "$file"
}

log "servers: mcpecho $URL_mcpecho, mcprelay $URL_mcprelay, raw $URL_rawrelay, praxa $URL_praxa (tmpfs: $URL_praxatmpfs), mcphome $URL_mcphome"
log "warm-up: one ${WARMUP} run per candidate and session count, discarded"
for cand in "${CANDIDATES[@]}"; do
	for n in $SESSIONS; do QUIET_WAIT=0 HOST_WAIT=0 run "$cand" "$n" "$WARMUP" warmup >/dev/null; done
done

declare -A RES
for r in $(seq 1 "$RUNS"); do
	for n in $SESSIONS; do
		for cand in "${CANDIDATES[@]}"; do
			for attempt in $(seq 0 "$RETRIES"); do
				RES[$cand,$n,$r]=$(run "$cand" "$n" "$DURATION" "run$r-$attempt")
				foreign=$(echo "${RES[$cand,$n,$r]}" | awk '{print $6}')
				speed=$(echo "${RES[$cand,$n,$r]}" | awk '{print $8}')
				[ "$foreign" -le "$MAX_FOREIGN" ] && host_ok "$speed" && break
				log "run $r $cand x$n: foreign CPU ${foreign}% (at most ${MAX_FOREIGN}%), host speed $speed (at least ${HOST_MIN:-0.85})$([ "$attempt" -lt "$RETRIES" ] && echo ': run again' || echo ': kept anyway')"
			done
			log "run $r $cand x$n: $(echo "${RES[$cand,$n,$r]}" | awk '{printf "%s calls/s, p50 %s ms, p99 %s ms, errors %s, server CPU %s%%, foreign CPU %s%%, host speed %s", $1, $2, $3, $4, $5, $6, $8}')"
		done
	done
done

# --- summary ---------------------------------------------------------------
col() { for r in $(seq 1 "$RUNS"); do echo "${RES[$1,$2,$r]}" | awk -v f="$3" '{print $f}'; done; }
# ratio NAME A B N: median calls/s of A over B's at N sessions, and the
# range of the per-round ratios; also appended to ratios.txt.
ratio() {
	local name=$1 a b per
	a=$(col "$2" "$4" 1 | median)
	b=$(col "$3" "$4" 1 | median)
	per=$(for r in $(seq 1 "$RUNS"); do
		echo "${RES[$2,$4,$r]} ${RES[$3,$4,$r]}" | awk '{printf "%.3f\n", $1 / $9}'
	done | minmax)
	awk -v a="$a" -v b="$b" -v name="$name" -v per="$per" 'BEGIN { printf "%-36s %.3f  (per-round %s)\n", name, a / b, per }'
	awk -v a="$a" -v b="$b" -v name="$name" -v per="$per" 'BEGIN { printf "%s %.3f %s\n", name, a / b, per }' >>"$OUT/ratios.txt"
}

: >"$OUT/ratios.txt"
{
	echo "praxa MCP load harness, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, servers on CPU $SERVER_CPU, mcpload on CPU $LOAD_CPU"
	echo "mcpload -duration $DURATION per run; $RUNS measured runs per candidate (interleaved), ${WARMUP} warm-up discarded"
	has barehome && echo "home body: $(col home 1 7 | head -n1) bytes from praxa, $(col barehome 1 7 | head -n1) bytes from mcphome"
	echo
	printf '%-9s %-4s %-26s %-22s %-24s %-6s %-8s %-19s %s\n' candidate sess "calls/s median (min-max)" "p50 ms" "p99 ms" errors "srv CPU%" "foreign CPU% (max)" "host speed (min)"
	for n in $SESSIONS; do
		for cand in "${CANDIDATES[@]}"; do
			printf '%-9s %-4s %-26s %-22s %-24s %-6s %-8s %-19s %s\n' "$cand" "$n" \
				"$(col "$cand" "$n" 1 | median) ($(col "$cand" "$n" 1 | minmax))" \
				"$(col "$cand" "$n" 2 | median) ($(col "$cand" "$n" 2 | minmax))" \
				"$(col "$cand" "$n" 3 | median) ($(col "$cand" "$n" 3 | minmax))" \
				"$(col "$cand" "$n" 4 | awk '{s += $1} END {print s}')" \
				"$(col "$cand" "$n" 5 | median)" \
				"$(col "$cand" "$n" 6 | sort -g | tail -n1)" \
				"$(col "$cand" "$n" 8 | sort -g | head -n1)"
		done
	done
	echo
	echo "srv CPU%: the servers the call goes through (relay and praxa: with mcpecho), % of one core over each mcpload run"
	echo "ratios of calls/s medians:"
	for n in $SESSIONS; do
		if has direct; then
			ratio "mcp-proxied/direct-x$n" praxa direct "$n"
			ratio "mcp-relay/direct-x$n" relay direct "$n"
			ratio "mcp-rawrelay/direct-x$n" rawrelay direct "$n"
			ratio "mcp-proxied/relay-x$n" praxa relay "$n"
			ratio "mcp-proxied-tmpfs/direct-x$n" praxatmpfs direct "$n"
			ratio "mcp-home/bare-home-x$n" home barehome "$n"
		fi
		if has praxa25; then
			ratio "mcp-proxied-2026/2025-x$n" praxa praxa25 "$n"
			ratio "mcp-home-2026/2025-x$n" home home25 "$n"
		fi
	done
	echo
	echo "raw outputs and server logs: $OUT"
} | tee "$OUT/summary.txt"
