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
#   peer      echo on bench/peers/mcpgo (mcpgorelay): the Go MCP proxy
#             people would pick instead, on mark3labs/mcp-go (the library
#             TBXark/mcp-proxy is built on, at the version TBXark pins,
#             v0.44.0, or PEER_MCPGO) with TBXark's design: one
#             stateless streamable HTTP server, one held client session
#             to the upstream, the upstream's tools registered unchanged,
#             TBXark's bearer check; built from the module proxy (its own
#             module); the phase fails when it cannot be built. It is
#             driven at the newest revision its mcp-go serves (v0.44.0:
#             2025-11-25), and the summary says so
#   tbxark    (TBXARK_SRC set) echo on TBXark/mcp-proxy itself, built from
#             the source tree TBXARK_SRC names (a snapshot fetched outside
#             this repository: this script never fetches it), its route
#             /echo/, authTokens = the bearer token; left out with a line
#             in the summary when it does not build or start. Its mcp-go
#             (v0.44.0) serves 2025-11-25 at most: it is driven at that
#             revision, and the summary says so
#   command   praxec.command start of proxy_default with input.capability
#             up.echo on the same praxa's /mcp: the same upstream call as
#             a run (the run, its lease and its commits)
#   homebase  praxec.query {} on praxa built from BASE_REF (default
#             c6825fc, with git archive into a temporary directory), same
#             configuration, data of its own: the home read of that binary
#   praxa25, home25 (REVISIONS=1 or only)
#             praxa's and home's calls with the client pinned to MCP
#             2025-11-25 (initialize handshake, no per-request _meta, no
#             Mcp-Method/Mcp-Name headers) instead of 2026-07-28: what a
#             tools/call costs at 2026-07-28 against 2025-11-25, on the
#             same server in the same run
# The load driver is bench/mcpload (go-sdk client); every candidate but
# praxa25, home25, tbxark and peer (below 2026-07-28 unless PEER_MCPGO
# serves it) negotiates 2026-07-28.
#
# After the interleaved rounds, the soak (SOAK=1): SOAK_SESSIONS (64)
# sessions call up.echo on praxa for SOAK_DURATION (30s). A 2 s warm-up at
# the same sessions fills the gateway's connection pools first; its
# goroutines (go_goroutines of /metrics), open file descriptors
# (/proc/PID/fd) and threads are read 5 s after the warm-up ("before") and
# 5 s after the soak ("after"), and once before the warm-up ("cold").
#
# Usage: bench/mcp.sh            (from anywhere; builds from this checkout)
# Environment (defaults): DURATION=5s WARMUP=1s RUNS=3 SESSIONS="1 8"
#   SERVER_CPU=0 LOAD_CPU=1 OUT=<new dir under /tmp>
#   QUIET_WAIT=20 QUIET_MAX=10 MAX_FOREIGN=30 RETRIES=1 HOST_WAIT=60
#   HOST_MIN=0.85 (bench/lib.sh: the host's speed; a run below it is run
#   again, like one with more foreign CPU than MAX_FOREIGN)
#   BASE_REF=c6825fc (the git ref homebase is built from; "" leaves it
#   out) TBXARK_SRC= (TBXark/mcp-proxy's source tree; unset: not run)
#   PEER_MCPGO= (a mark3labs/mcp-go version to build the peer on instead
#   of its go.mod's, e.g. v1.6.0: go get in a copy of the module)
#   SOAK=1 SOAK_SESSIONS=64 SOAK_DURATION=30s
#   ONLY= (a list of candidates: measure only those)
#   REVISIONS=0: 1 adds praxa25 and home25 and the ratios
#   mcp-proxied-2026/2025-xN and mcp-home-2026/2025-xN (calls/s at
#   2026-07-28 over calls/s at 2025-11-25: below 1, 2026-07-28 costs more);
#   only measures praxa, praxa25, home and home25 alone.
# Output: a table of medians (min-max), the ratios, also in $OUT/summary.txt,
# and $OUT/ratios.txt (one "name value range A-calls/s A-µs/call B-calls/s
# B-µs/call" a line, read by bench/all.sh; µs/call: CPU of the server the
# candidate is, its upstream's not counted); raw mcpload lines and server
# logs stay in $OUT.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh" # ROOT, SERVER_CPU, LOAD_CPU, out_dir
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
RUNS=${RUNS:-3}
SESSIONS=${SESSIONS:-1 8}
QUIET_WAIT=${QUIET_WAIT:-20}
QUIET_MAX=${QUIET_MAX:-10}
MAX_FOREIGN=${MAX_FOREIGN:-30}
RETRIES=${RETRIES:-1}
REVISIONS=${REVISIONS:-0}
BASE_REF=${BASE_REF-c6825fc}
TBXARK_SRC=${TBXARK_SRC:-}
PEER_MCPGO=${PEER_MCPGO:-}
SOAK=${SOAK:-1}
SOAK_SESSIONS=${SOAK_SESSIONS:-64}
SOAK_DURATION=${SOAK_DURATION:-30s}
out_dir mcp
export QUIET_WAIT QUIET_MAX

need_tools mcp.sh taskset curl go
need_two_cpus mcp.sh servers load

log "building praxa and the MCP baselines from $ROOT into $OUT"
(cd "$ROOT" && go build -o "$OUT/" ./cmd/praxa ./bench/mcpecho ./bench/mcprelay ./bench/mcphome ./bench/mcpload ./bench/hostprobe)
log "building the peer (bench/peers/mcpgo, its own module${PEER_MCPGO:+, on mark3labs/mcp-go $PEER_MCPGO}) into $OUT/mcpgorelay"
PEER_SRC=$ROOT/bench/peers/mcpgo
if [ -n "$PEER_MCPGO" ]; then
	PEER_SRC=$(mktemp -d /tmp/praxa-peer.XXXXXX)
	cp -r "$ROOT/bench/peers/mcpgo/." "$PEER_SRC"
fi
if ! (cd "$PEER_SRC" && { [ -z "$PEER_MCPGO" ] || { go get "github.com/mark3labs/mcp-go@$PEER_MCPGO" && go mod tidy; }; } &&
	go build -o "$OUT/mcpgorelay" .) >"$OUT/peer-build.log" 2>&1; then
	cat "$OUT/peer-build.log" >&2
	[ -n "$PEER_MCPGO" ] && rm -rf "$PEER_SRC"
	echo "mcp.sh: the peer (bench/peers/mcpgo${PEER_MCPGO:+ on mark3labs/mcp-go $PEER_MCPGO}) cannot be built" >&2
	exit 1
fi
[ -n "$PEER_MCPGO" ] && rm -rf "$PEER_SRC"
# TBXark/mcp-proxy itself, from a snapshot the caller fetched (never here).
TBXARK=""
if [ -n "$TBXARK_SRC" ]; then
	if (cd "$TBXARK_SRC" && go build -o "$OUT/mcp-proxy" .) >"$OUT/tbxark-build.log" 2>&1; then
		TBXARK_MCPGO=$(cd "$TBXARK_SRC" && go list -m -f '{{.Version}}' github.com/mark3labs/mcp-go 2>/dev/null || echo '?')
		TBXARK="built from $TBXARK_SRC (mark3labs/mcp-go $TBXARK_MCPGO)"
	else
		TBXARK_NOTE="TBXark/mcp-proxy from $TBXARK_SRC did not build (see $OUT/tbxark-build.log): not run"
		log "$TBXARK_NOTE"
	fi
fi
# praxa as BASE_REF was, for the home read's baseline.
if [ -n "$BASE_REF" ]; then
	BASE_COMMIT=$(git -C "$ROOT" rev-parse --short --verify "$BASE_REF^{commit}")
	BASE_SRC=$(mktemp -d /tmp/praxa-base.XXXXXX)
	log "building praxa at $BASE_REF ($BASE_COMMIT) into $OUT/base/praxa"
	git -C "$ROOT" archive "$BASE_COMMIT" | tar -x -C "$BASE_SRC"
	mkdir -p "$OUT/base"
	(cd "$BASE_SRC" && go build -o "$OUT/base/praxa" ./cmd/praxa)
	rm -rf "$BASE_SRC"
	BASE_SRC=""
fi

# --- servers ---------------------------------------------------------------
cleanup() {
	stop_all
	[ -n "${TMPFS_DIR:-}" ] && rm -rf "$TMPFS_DIR"
	[ -n "${BASE_SRC:-}" ] && rm -rf "$BASE_SRC"
	return 0
}
trap cleanup EXIT

# free_port: a loopback TCP port nothing listens on now (for a server that
# cannot be told to pick one itself).
free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}

# start_tbxark: TBXark/mcp-proxy on a free port, pinned to SERVER_CPU, one
# upstream (echo: mcpecho over streamable HTTP) and PRAXA_TOKEN as its one
# auth token; sets PID_tbxark and URL_tbxark (its route /echo/), or
# TBXARK_NOTE and TBXARK="" when it does not come up within 30 s.
start_tbxark() {
	local port
	port=$(free_port)
	cat >"$OUT/tbxark.json" <<JSON
{"mcpProxy": {"baseURL": "http://127.0.0.1:$port", "addr": "127.0.0.1:$port", "name": "mcp-proxy",
  "version": "0", "type": "streamable-http", "options": {"logEnabled": false, "authTokens": ["\${PRAXA_TOKEN}"]}},
 "mcpServers": {"echo": {"transportType": "streamable-http", "url": "$URL_mcpecho"}}}
JSON
	taskset -c "$SERVER_CPU" "$OUT/mcp-proxy" -config "$OUT/tbxark.json" 2>"$OUT/tbxark.log" &
	PIDS+=($!)
	PID_tbxark=$!
	for _ in $(seq 1 300); do
		if grep -q '<echo> Handling requests at /echo/' "$OUT/tbxark.log"; then
			URL_tbxark="http://127.0.0.1:$port/echo/"
			return 0
		fi
		sleep 0.1
	done
	TBXARK_NOTE="TBXark/mcp-proxy did not come up (see $OUT/tbxark.log): not run"
	TBXARK=""
	log "$TBXARK_NOTE"
}

host_probe_start "$OUT/hostprobe" "$OUT/hostprobe.txt"
PIDS+=("$PID_hostprobe")
start mcpecho -addr 127.0.0.1:0
# shellcheck disable=SC2154 # set by start
start mcprelay -addr 127.0.0.1:0 -upstream "$URL_mcpecho"
start_as rawrelay mcprelay -addr 127.0.0.1:0 -upstream "$URL_mcpecho" -raw

# The upstream's echo becomes the capability up.echo (lib.sh).
mcp_proxy_config "$OUT/praxec.yaml" "$URL_mcpecho"
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
# The peer checks the same bearer token as praxa (TBXark's authTokens).
start_as peer mcpgorelay -addr 127.0.0.1:0 -upstream "$URL_mcpecho" -token-env PRAXA_TOKEN
# "mcpgorelay: mark3labs/mcp-go V serves up to P, upstream protocol Q, N tools"
read -r PEER_VERSION PEER_SERVES PEER_PROTO < <(sed -n 's/^mcpgorelay: mark3labs\/mcp-go \([^ ]*\) serves up to \([^ ,]*\), upstream protocol \([^ ,]*\).*/\1 \2 \3/p' "$OUT/peer.log")
[ -n "$TBXARK" ] && start_tbxark
if [ -n "$BASE_REF" ]; then
	start_as praxabase base/praxa serve --dev --addr 127.0.0.1:0 --data-dir "$OUT/base-data" --config "$OUT/praxec.yaml"
	export PRAXA_TOKEN_BASE
	PRAXA_TOKEN_BASE=$("$OUT/base/praxa" token --data-dir "$OUT/base-data" --ttl 2h)
fi

ECHO_ARGS='{"text":"hello from mcpload"}'
# The same call as a run: the start the describe link of up.echo names.
COMMAND_ARGS='{"definitionId":"proxy_default","input":{"capability":"up.echo","text":"hello from mcpload"}}'
case $REVISIONS in
0) CANDIDATES=(direct relay rawrelay peer tbxark praxa praxatmpfs command home homebase barehome) ;;
1) CANDIDATES=(direct relay rawrelay peer tbxark praxa praxatmpfs praxa25 command home home25 homebase barehome) ;;
only) CANDIDATES=(praxa praxa25 home home25) ;;
*) echo "mcp.sh: REVISIONS=$REVISIONS: want 0, 1 or only" >&2; exit 1 ;;
esac
# Leave out what was not built.
drop() { local c keep=(); for c in "${CANDIDATES[@]}"; do [ "$c" = "$1" ] || keep+=("$c"); done; CANDIDATES=("${keep[@]}"); }
[ -n "$TBXARK" ] || drop tbxark
[ -n "$BASE_REF" ] || drop homebase
# ONLY="a b ...": measure only these of the candidates (the ratios whose
# two sides were both measured are printed).
if [ -n "${ONLY:-}" ]; then
	for c in "${CANDIDATES[@]}"; do [[ " $ONLY " == *" $c "* ]] || drop "$c"; done
fi
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
	peer) T_URL=$URL_peer T_PROTO=$PEER_SERVES T_PIDS=("$PID_peer" "$PID_mcpecho") ;;
	tbxark) T_URL=$URL_tbxark T_PROTO=2025-11-25 T_PIDS=("$PID_tbxark" "$PID_mcpecho") ;;
	command) T_URL=$URL_praxa/mcp T_TOOL=praxec.command T_ARGS=$COMMAND_ARGS T_PIDS=("$PID_praxa" "$PID_mcpecho") ;;
	homebase) T_URL=$URL_praxabase/mcp T_TOOL=praxec.query T_ARGS='{}' T_TOKEN_ENV=PRAXA_TOKEN_BASE T_PIDS=("$PID_praxabase") ;;
	praxa) T_URL=$URL_praxa/mcp T_TOOL=up.echo T_PIDS=("$PID_praxa" "$PID_mcpecho") ;;
	praxatmpfs) T_URL=$URL_praxatmpfs/mcp T_TOOL=up.echo T_TOKEN_ENV=PRAXA_TOKEN_TMPFS T_PIDS=("$PID_praxatmpfs" "$PID_mcpecho") ;;
	home) T_URL=$URL_praxa/mcp T_TOOL=praxec.query T_ARGS='{}' T_PIDS=("$PID_praxa") ;;
	praxa25) T_URL=$URL_praxa/mcp T_TOOL=up.echo T_PROTO=2025-11-25 T_PIDS=("$PID_praxa" "$PID_mcpecho") ;;
	home25) T_URL=$URL_praxa/mcp T_TOOL=praxec.query T_ARGS='{}' T_PROTO=2025-11-25 T_PIDS=("$PID_praxa") ;;
	barehome) T_URL=$URL_mcphome T_TOOL=praxec.query T_ARGS='{}' T_PIDS=("$PID_mcphome") ;;
	esac
}

# run CANDIDATE SESSIONS DURATION TAG: one mcpload run; prints "calls/s
# p50ms p99ms errors server-cpu% foreign-cpu% text-bytes host-speed
# µs/call all-µs/call" (lib.sh's host_speed over the run; it waits for the
# host to be at speed first, as for quiet). server-cpu% and all-µs/call are
# of every server the call goes through (a proxy with its upstream),
# µs/call of the candidate's own server only: CPU over the whole mcpload
# run over the calls it measured.
run() {
	local cand=$1 n=$2 dur=$3 tag=$4
	target "$cand"
	local file="$OUT/mcpload-$cand-s$n-$tag.txt" hz secs before after front0 front1 busy0 busy1 l0 l1 t0 t1
	hz=$(getconf CLK_TCK)
	quiet_wait
	host_wait
	local h0 h1
	h0=$(host_now)
	times >"$OUT/.times"
	l0=$(awk 'NR == 2 {print $1 " " $2}' "$OUT/.times")
	front0=$(cpu_ticks "${T_PIDS[0]}"); before=$(cpu_ticks "${T_PIDS[@]}"); busy0=$(busy_ticks); t0=$(date +%s%N)
	taskset -c "$LOAD_CPU" "$OUT/mcpload" -url "$T_URL" -tool "$T_TOOL" -args "$T_ARGS" -sessions "$n" \
		-duration "$dur" -protocol "$T_PROTO" -token-env "$T_TOKEN_ENV" -label "$cand" >"$file" 2>&1 || {
		# The soak (SOAK_RUN=1) reports failed calls; anywhere else they stop the phase.
		if [ "${SOAK_RUN:-0}" != 1 ] || ! grep -q '^mcpload ' "$file"; then
			cat "$file" >&2; echo "mcp.sh: mcpload failed for $cand" >&2; exit 1
		fi
	}
	front1=$(cpu_ticks "${T_PIDS[0]}"); after=$(cpu_ticks "${T_PIDS[@]}"); busy1=$(busy_ticks); t1=$(date +%s%N)
	h1=$(host_now)
	times >"$OUT/.times"
	l1=$(awk 'NR == 2 {print $1 " " $2}' "$OUT/.times")
	# CPU shares are of the whole mcpload run (start, connect, first call
	# and the measured stretch): the servers are nearly idle outside it.
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	local cpu loadcpu foreign
	cpu=$(core_pct "$((after - before))" "$secs")
	loadcpu=$(children_pct "$l0" "$l1" "$secs")
	foreign=$(foreign_pct "$((busy1 - busy0))" "$secs" "$cpu" "$loadcpu")
	awk -v cpu="$cpu" -v foreign="$foreign" -v speed="$(host_speed "$h0" "$h1")" -v hz="$hz" \
		-v front="$((front1 - front0))" -v all="$((after - before))" '/^mcpload / {
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		c = v["calls"] > 0 ? v["calls"] : 1
		printf "%s %s %s %s %s %s %s %s %.0f %.0f\n", v["calls_per_s"], v["p50_ms"], v["p99_ms"], v["errors"], cpu, foreign,
			v["text_bytes"], speed, front / hz * 1e6 / c, all / hz * 1e6 / c }' "$file"
}

log "servers: mcpecho $URL_mcpecho, mcprelay $URL_mcprelay, raw $URL_rawrelay, peer $URL_peer, praxa $URL_praxa (tmpfs: $URL_praxatmpfs), mcphome $URL_mcphome${URL_praxabase:+, praxa at $BASE_REF $URL_praxabase}${URL_tbxark:+, TBXark $URL_tbxark}"
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
			log "run $r $cand x$n: $(echo "${RES[$cand,$n,$r]}" | awk '{printf "%s calls/s, p50 %s ms, p99 %s ms, errors %s, server CPU %s%% (%s µs/call, %s with its upstream), foreign CPU %s%%, host speed %s", $1, $2, $3, $4, $5, $9, $10, $6, $8}')"
		done
	done
done

# --- soak ------------------------------------------------------------------
# state PID URL: "goroutines fds threads" of the praxa at URL (goroutines
# from its /metrics, whose scrape counts one of its own, the same each time).
state() {
	local g
	g=$(curl -s "$2/metrics" | awk '$1 == "go_goroutines" {print $2}')
	echo "${g:-?} $(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l) $(awk '$1 == "Threads:" {print $2}' "/proc/$1/status")"
}
if [ "$SOAK" = 1 ] && has praxa; then
	log "soak: up.echo on praxa, $SOAK_SESSIONS sessions for $SOAK_DURATION (after a 2s warm-up at the same sessions)"
	SOAK_COLD=$(state "$PID_praxa" "$URL_praxa")
	QUIET_WAIT=0 HOST_WAIT=0 run praxa "$SOAK_SESSIONS" 2s soak-warmup >/dev/null
	sleep 5
	SOAK_BEFORE=$(state "$PID_praxa" "$URL_praxa")
	SOAK_RES=$(SOAK_RUN=1 run praxa "$SOAK_SESSIONS" "$SOAK_DURATION" soak)
	sleep 5
	SOAK_AFTER=$(state "$PID_praxa" "$URL_praxa")
	log "soak: $(echo "$SOAK_RES" | awk '{printf "%s calls/s, p50 %s ms, p99 %s ms, errors %s, %s µs/call", $1, $2, $3, $4, $9}'); goroutines fds threads: cold $SOAK_COLD, before $SOAK_BEFORE, after $SOAK_AFTER"
fi

# --- summary ---------------------------------------------------------------
col() { for r in $(seq 1 "$RUNS"); do echo "${RES[$1,$2,$r]}" | awk -v f="$3" '{print $f}'; done; }
# revision CANDIDATE: the MCP revision its client negotiates.
revision() { target "$1"; echo "$T_PROTO"; }
# ratio NAME A B N: median calls/s of A over B's at N sessions, the range
# of the per-round ratios, and beside them each side's calls/s and µs of
# its server's CPU a call (medians); also appended to ratios.txt.
ratio() {
	local name=$1 a b per au bu
	has "$2" && has "$3" || return 0
	a=$(col "$2" "$4" 1 | median)
	b=$(col "$3" "$4" 1 | median)
	au=$(col "$2" "$4" 9 | median)
	bu=$(col "$3" "$4" 9 | median)
	per=$(for r in $(seq 1 "$RUNS"); do
		echo "${RES[$2,$4,$r]} ${RES[$3,$4,$r]}" | awk '{printf "%.3f\n", $1 / $11}'
	done | minmax)
	awk -v a="$a" -v b="$b" -v au="$au" -v bu="$bu" -v name="$name" -v per="$per" -v an="$2" -v bn="$3" 'BEGIN {
		printf "%-34s %.3f  (per-round %-11s)  %s %.0f calls/s %s µs/call, %s %.0f calls/s %s µs/call\n", name, a / b, per, an, a, au, bn, b, bu }'
	awk -v a="$a" -v b="$b" -v au="$au" -v bu="$bu" -v name="$name" -v per="$per" 'BEGIN {
		printf "%s %.3f %s %.0f %s %.0f %s\n", name, a / b, per, a, au, b, bu }' >>"$OUT/ratios.txt"
}

: >"$OUT/ratios.txt"
{
	echo "praxa MCP load harness, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, servers on CPU $SERVER_CPU, mcpload on CPU $LOAD_CPU"
	echo "mcpload -duration $DURATION per run; $RUNS measured runs per candidate (interleaved), ${WARMUP} warm-up discarded"
	has barehome && echo "home body: $(col home 1 7 | head -n1) bytes from praxa, $(col barehome 1 7 | head -n1) bytes from mcphome"
	has peer && echo "peer: bench/peers/mcpgo on mark3labs/mcp-go $PEER_VERSION, driven at $(revision peer) (the newest its server serves), its upstream session at $PEER_PROTO"
	has tbxark && echo "tbxark: TBXark/mcp-proxy $TBXARK, driven at $(revision tbxark) (the newest its mcp-go serves), its upstream session at 2025-11-25"
	[ -n "${TBXARK_NOTE:-}" ] && echo "tbxark: $TBXARK_NOTE"
	[ -z "$TBXARK_SRC" ] && echo "tbxark: TBXARK_SRC not set: TBXark/mcp-proxy itself not run"
	has homebase && echo "homebase: praxa built from $BASE_REF ($BASE_COMMIT)"
	echo
	printf '%-10s %-4s %-26s %-22s %-24s %-6s %-8s %-11s %-19s %s\n' candidate sess "calls/s median (min-max)" "p50 ms" "p99 ms" errors "srv CPU%" "µs/call" "foreign CPU% (max)" "host speed (min)"
	for n in $SESSIONS; do
		for cand in "${CANDIDATES[@]}"; do
			printf '%-10s %-4s %-26s %-22s %-24s %-6s %-8s %-11s %-19s %s\n' "$cand" "$n" \
				"$(col "$cand" "$n" 1 | median) ($(col "$cand" "$n" 1 | minmax))" \
				"$(col "$cand" "$n" 2 | median) ($(col "$cand" "$n" 2 | minmax))" \
				"$(col "$cand" "$n" 3 | median) ($(col "$cand" "$n" 3 | minmax))" \
				"$(col "$cand" "$n" 4 | awk '{s += $1} END {print s}')" \
				"$(col "$cand" "$n" 5 | median)" \
				"$(col "$cand" "$n" 9 | median)/$(col "$cand" "$n" 10 | median)" \
				"$(col "$cand" "$n" 6 | sort -g | tail -n1)" \
				"$(col "$cand" "$n" 8 | sort -g | head -n1)"
		done
	done
	echo
	echo "srv CPU%: the servers the call goes through (a proxy: with mcpecho), % of one core over each mcpload run;"
	echo "µs/call: CPU of the candidate's own server / of every server the call goes through, per measured call"
	echo "ratios of calls/s medians (then each side's calls/s and its own server's µs of CPU a call):"
	for n in $SESSIONS; do
		ratio "mcp-proxied/direct-x$n" praxa direct "$n"
		ratio "mcp-proxied/peer-x$n" praxa peer "$n"
		ratio "mcp-proxied/tbxark-x$n" praxa tbxark "$n"
		ratio "mcp-proxied-2025/tbxark-x$n" praxa25 tbxark "$n"
		ratio "mcp-proxied-2025/peer-x$n" praxa25 peer "$n"
		ratio "mcp-peer/direct-x$n" peer direct "$n"
		ratio "mcp-tbxark/direct-x$n" tbxark direct "$n"
		ratio "mcp-command/proxied-x$n" command praxa "$n"
		ratio "mcp-command/direct-x$n" command direct "$n"
		ratio "mcp-home/home-base-x$n" home homebase "$n"
		ratio "mcp-relay/direct-x$n" relay direct "$n"
		ratio "mcp-rawrelay/direct-x$n" rawrelay direct "$n"
		ratio "mcp-proxied/relay-x$n" praxa relay "$n"
		ratio "mcp-proxied-tmpfs/direct-x$n" praxatmpfs direct "$n"
		ratio "mcp-home/bare-home-x$n" home barehome "$n"
		ratio "mcp-proxied-2026/2025-x$n" praxa praxa25 "$n"
		ratio "mcp-home-2026/2025-x$n" home home25 "$n"
	done
	if [ -n "${SOAK_RES:-}" ]; then
		echo
		echo "soak: up.echo on praxa, $SOAK_SESSIONS sessions, $SOAK_DURATION (goroutines fds threads: cold $SOAK_COLD; before $SOAK_BEFORE; 5 s after $SOAK_AFTER)"
		echo "$SOAK_RES" | awk '{printf "  %s calls/s, p50 %s ms, p99 %s ms (p99/p50 %.2f), errors %s, %s µs/call (%s with mcpecho), foreign CPU %s%%, host speed %s\n", $1, $2, $3, $3 / $2, $4, $9, $10, $6, $8}'
		echo "$SOAK_RES" | awk -v b="$SOAK_BEFORE" -v a="$SOAK_AFTER" '{
			split(b, x, " "); split(a, y, " ")
			printf "soak-errors %d - %.0f %s\n", $4, $1, $9
			printf "soak-p99/p50 %.2f %s/%s %.0f %s\n", $3 / $2, $3, $2, $1, $9
			d = y[1] - x[1]; printf "soak-goroutines-delta %d %s->%s %.0f %s\n", d < 0 ? -d : d, x[1], y[1], $1, $9
			d = y[2] - x[2]; printf "soak-fds-delta %d %s->%s %.0f %s\n", d < 0 ? -d : d, x[2], y[2], $1, $9 }' >>"$OUT/ratios.txt"
	fi
	echo
	echo "raw outputs and server logs: $OUT"
} | tee "$OUT/summary.txt"
