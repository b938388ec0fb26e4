#!/usr/bin/env bash
# bench/all.sh: one command for every ratio of the hot-path targets, from
# one run: bench/mcp.sh (MCP: proxied, relayed and direct calls, the peer
# proxy on mark3labs/mcp-go and TBXark/mcp-proxy itself when TBXARK_SRC
# names its source, the same call as a praxec.command run, the home read
# against a bare go-sdk server and against praxa built from BASE_REF, the
# 64-session soak), bench/load.sh with TMPFS=1 (REST: the
# home read answered from memory and the store reads against bare chi, tail
# ratios, the durable write against the same server on tmpfs) and
# bench/gobench.sh on BenchmarkSubmitIntent (the durable write in process
# against memstore) and BenchmarkStoreGrowth (a store read and a proxied
# call at 10k and 1M stored missions, audit events and idempotency records;
# generating the stores takes about two minutes and 1.5 GB of disk, in
# GROWTH_DIR, removed at the end unless GROWTH_DIR was given, so that a
# later run with the same GROWTH_DIR reuses them). Each phase measures its
# candidates interleaved against baselines of the same phase; the phases
# run one after the other.
#
# Usage: bench/all.sh
# Environment (defaults): DURATION=5s WARMUP=1s RUNS=3 QUIET_WAIT=10
#   RETRIES=1 MCP=1 REST=1 INPROC=1 GROWTH=1 GROWTH_DIR=$OUT/growth MAX_OTHER=1000
#   OUT=<new dir under /tmp>; every variable of mcp.sh and load.sh passes
#   through (SERVER_CPU, LOAD_CPU, SESSIONS, CONNS, THREADS, QUIET_MAX,
#   MAX_FOREIGN, HOST_MIN, HOST_WAIT: a run with the host slow or too much
#   foreign CPU is run again once; BASE_REF, TBXARK_SRC, SOAK,
#   SOAK_SESSIONS, SOAK_DURATION). DURATION and WARMUP in whole seconds
#   (wrk takes no fractions). Set MCP=0, REST=0, INPROC=0 or GROWTH=0 to leave a phase
#   out. The MCP phase runs with REVISIONS=1 (bench/mcp.sh): the same
#   proxied call and home read at 2026-07-28 and at 2025-11-25 (set
#   REVISIONS=0 to leave those out).
# Output: each phase's table, then the targets with their ratios (the MCP
# ones with each side's calls/s and its server's µs of CPU a call), also in
# $OUT/targets.txt; everything else under $OUT/{mcp,rest,inproc,growth}.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh" # ROOT, SERVER_CPU, LOAD_CPU, out_dir
export DURATION=${DURATION:-5s} WARMUP=${WARMUP:-1s} RUNS=${RUNS:-3}
export QUIET_WAIT=${QUIET_WAIT:-10} RETRIES=${RETRIES:-1}
MCP=${MCP:-1}
REST=${REST:-1}
INPROC=${INPROC:-1}
GROWTH=${GROWTH:-1}
out_dir all
: >"$OUT/ratios.txt"

if [ "$MCP" = 1 ]; then
	log "MCP phase (bench/mcp.sh, REVISIONS=${REVISIONS:-1}) into $OUT/mcp"
	OUT="$OUT/mcp" REVISIONS=${REVISIONS:-1} "$ROOT/bench/mcp.sh"
	cat "$OUT/mcp/ratios.txt" >>"$OUT/ratios.txt"
fi

if [ "$REST" = 1 ]; then
	log "REST phase (bench/load.sh, TMPFS=1) into $OUT/rest"
	OUT="$OUT/rest" TMPFS=1 "$ROOT/bench/load.sh"
	cat "$OUT/rest/ratios.txt" >>"$OUT/ratios.txt"
fi

# bench_ratio NAME FILE A B: the ratio of ns/op medians B over A of two
# benchmarks of a go test output (so: A's ops/s over B's), with the range of
# the per-round ratios (lines of one round come in order).
bench_ratio() {
	local name=$1 file=$2 a=$3 b=$4
	awk -v a="$a" -v b="$b" -v name="$name" '
		function med(arr, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
			return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2 }
		{ sub(/-[0-9]+$/, "", $1) }
		$1 == a { na++; va[na] = $3 } $1 == b { nb++; vb[nb] = $3 }
		END {
			if (na == 0 || nb == 0 || na != nb) { printf "%s n/a n/a\n", name; exit }
			lo = 1e18; hi = 0
			for (i = 1; i <= na; i++) { r = vb[i] / va[i]; if (r < lo) lo = r; if (r > hi) hi = r }
			printf "%s %.3f %.3f-%.3f\n", name, med(vb, nb) / med(va, na), lo, hi }' "$file"
}

# gobench DIR BENCH BENCHTIME: bench/gobench.sh into DIR, pinned to
# SERVER_CPU, RUNS rounds of -count=1 (each round runs every benchmark
# BENCH matches, back to back, so that a slow period of the host cannot fall
# on one candidate only); a round with the host slow is dropped and run
# again, at most RUNS * (1 + RETRIES) rounds in all; foreign CPU is recorded,
# not gated (MAX_OTHER).
gobench() {
	OUT="$1" BENCH="$2" BENCHTIME="$3" MAX_OTHER=${MAX_OTHER:-1000} CPU=${SERVER_CPU:-0} CPUS=1 ROUNDS=$RUNS \
		MAX_ATTEMPTS=$((RUNS * (1 + RETRIES))) "$ROOT/bench/gobench.sh" >/dev/null
}

if [ "$INPROC" = 1 ]; then
	log "in-process phase (bench/gobench.sh, BenchmarkSubmitIntent) into $OUT/inproc"
	gobench "$OUT/inproc" 'BenchmarkSubmitIntent/(sqlite-durable|memstore)$' 1s
	bench_ratio inproc-sqlite-durable/memstore "$OUT/inproc/bench.txt" \
		BenchmarkSubmitIntent/sqlite-durable BenchmarkSubmitIntent/memstore >>"$OUT/ratios.txt"
	echo
	echo "in process, POST /v8/intents, 64 in flight, pinned to CPU ${SERVER_CPU:-0} (go test -bench, $RUNS rounds):"
	grep '^Benchmark' "$OUT/inproc/bench.txt" || true
fi

if [ "$GROWTH" = 1 ]; then
	log "growth phase (bench/gobench.sh, BenchmarkStoreGrowth) into $OUT/growth"
	keep=${GROWTH_DIR:+1}
	GROWTH_DIR=${GROWTH_DIR:-$OUT/growth}
	mkdir -p "$OUT/growth" "$GROWTH_DIR"
	PRAXA_GROWTH_DIR="$GROWTH_DIR" gobench "$OUT/growth" 'BenchmarkStoreGrowth' 2s
	echo
	echo "store growth, one request at a time in process, pinned to CPU ${SERVER_CPU:-0} (go test -bench, $RUNS rounds):"
	grep '^Benchmark' "$OUT/growth/bench.txt" || true
	for what in mission trace proxied; do
		bench_ratio "growth-$what-1M/10k" "$OUT/growth/bench.txt" \
			"BenchmarkStoreGrowth/1M/$what" "BenchmarkStoreGrowth/10k/$what" >>"$OUT/ratios.txt"
	done
	if [ -z "$keep" ]; then rm -f "$GROWTH_DIR"/growth-*.db "$GROWTH_DIR"/growth-*.db-* "$GROWTH_DIR"/growth-*.seed.json; fi
fi

# target NAME OP BOUND TEXT: one row of the targets table; an MCP row
# (bench/mcp.sh's ratios.txt) ends with each side's calls/s and µs of its
# server's CPU a call.
target() {
	local name=$1 op=$2 bound=$3 text=$4 line value range verdict abs
	line=$(awk -v n="$name" '$1 == n' "$OUT/ratios.txt" | head -n1)
	if [ -z "$line" ]; then return 0; fi
	value=$(echo "$line" | awk '{print $2}')
	range=$(echo "$line" | awk '{print $3}')
	abs=$(echo "$line" | awk 'NF >= 7 {printf "%s/s %sµs : %s/s %sµs", $4, $5, $6, $7} NF == 5 {printf "%s/s %sµs", $4, $5}')
	verdict=$(awk -v v="$value" -v b="$bound" -v op="$op" 'BEGIN {
		if (v == "n/a") print "n/a"; else if (op == ">=" ? v >= b : v <= b) print "met"; else print "NOT met" }')
	[ "$op" = "-" ] && verdict="(baseline)"
	printf '%-48s %-8s %-14s %-10s %-10s %s\n' "$text" "$value" "$range" "$op $bound" "$verdict" "$abs"
}

{
	echo
	echo "hot-path targets, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . 2>/dev/null || echo '+changes')"
	echo "DURATION=$DURATION RUNS=$RUNS (medians; range: per-round ratios; last column: calls/s and µs of server CPU a call, A : B)"
	printf '%-48s %-8s %-14s %-10s %-10s %s\n' figure ratio range target verdict "A : B"
	echo "issue 29, the MCP edge:"
	target "mcp-proxied/peer-x8" ">=" 1.5 "1 proxied /mcp vs the mcp-go peer, 8 sessions"
	target "mcp-proxied/direct-x8" ">=" 0.5 "1 proxied /mcp vs direct, 8 sessions"
	target "mcp-proxied/peer-x1" ">=" 1.0 "2 proxied /mcp vs the mcp-go peer, sequential"
	target "mcp-proxied/direct-x1" ">=" 0.3 "2 proxied /mcp vs direct, sequential"
	target "mcp-proxied/tbxark-x8" "-" "" "  proxied /mcp vs TBXark/mcp-proxy, 8 sessions"
	target "mcp-proxied/tbxark-x1" "-" "" "  proxied /mcp vs TBXark/mcp-proxy, sequential"
	target "mcp-peer/direct-x8" "-" "" "  mcp-go peer vs direct, 8 sessions"
	target "mcp-peer/direct-x1" "-" "" "  mcp-go peer vs direct, sequential"
	target "mcp-command/proxied-x8" ">=" 0.7 "3 praxec.command run vs direct exposure, x8"
	target "mcp-command/proxied-x1" "-" "" "  praxec.command run vs direct exposure, x1"
	target "mcp-home/home-base-x1" ">=" 2 "4 MCP home vs ${BASE_REF-c6825fc}'s, sequential"
	target "mcp-home/home-base-x8" ">=" 2 "4 MCP home vs ${BASE_REF-c6825fc}'s, 8 sessions"
	target "soak-errors" "<=" 0 "5 soak, ${SOAK_SESSIONS:-64} sessions ${SOAK_DURATION:-30s}: errors"
	target "soak-p99/p50" "<=" 5 "5 soak: p99 / p50"
	target "soak-goroutines-delta" "<=" 2 "5 soak: goroutines, 5 s after vs before"
	target "soak-fds-delta" "<=" 2 "5 soak: open fds, 5 s after vs before"
	echo "issue 13, the hot path:"
	# its target 1 (the proxied call vs direct, 0.3 / 0.5) is issue 29's 1 and 2, above
	target "mcp-relay/direct-x1" "-" "" "  bare go-sdk relay vs direct, sequential"
	target "mcp-relay/direct-x8" "-" "" "  bare go-sdk relay vs direct, 8 sessions"
	target "mcp-rawrelay/direct-x1" "-" "" "  go-sdk server, raw upstream POST vs direct, sequential"
	target "mcp-rawrelay/direct-x8" "-" "" "  go-sdk server, raw upstream POST vs direct, 8 sessions"
	target "mcp-proxied-tmpfs/direct-x1" "-" "" "  proxied /mcp, data on tmpfs, vs direct, sequential"
	target "mcp-proxied-tmpfs/direct-x8" "-" "" "  proxied /mcp, data on tmpfs, vs direct, 8 sessions"
	target "mcp-proxied/relay-x1" "-" "" "  proxied /mcp vs bare relay, sequential"
	target "mcp-proxied/relay-x8" "-" "" "  proxied /mcp vs bare relay, 8 sessions"
	target "mcp-proxied-2026/2025-x1" "-" "" "  proxied /mcp at 2026-07-28 vs 2025-11-25, x1"
	target "mcp-proxied-2026/2025-x8" "-" "" "  proxied /mcp at 2026-07-28 vs 2025-11-25, x8"
	target "mcp-home-2026/2025-x1" "-" "" "  MCP home at 2026-07-28 vs 2025-11-25, x1"
	target "mcp-home-2026/2025-x8" "-" "" "  MCP home at 2026-07-28 vs 2025-11-25, x8"
	target "rest-query/bare" ">=" 0.4 "2 REST read from memory vs bare chi"
	target "rest-mission/bare" ">=" 0.3 "2 GET /v8/missions/{id} vs bare chi"
	target "rest-read/bare" ">=" 0.3 "2 GET /v8/traces/{id} vs bare chi"
	target "mcp-home/bare-home-x1" ">=" 0.9 "2 MCP home vs bare go-sdk, sequential"
	target "mcp-home/bare-home-x8" ">=" 0.9 "2 MCP home vs bare go-sdk, 8 sessions"
	target "rest-query-p99/bare-p99" "<=" 10 "3 p99 read from memory / bare chi p99"
	target "rest-mission-p99/bare-p99" "<=" 10 "3 p99 GET mission / bare chi p99"
	target "rest-read-p99/bare-p99" "<=" 10 "3 p99 GET trace / bare chi p99"
	target "rest-post-p99/post-p50" "<=" 3 "3 durable write p99 / its p50"
	target "rest-post/post-tmpfs" ">=" 0.7 "4 durable write vs same server on tmpfs"
	target "inproc-sqlite-durable/memstore" ">=" 0.5 "4 durable write in process vs memstore"
	target "growth-mission-1M/10k" ">=" 0.9 "5 GET mission ops/s, 1M vs 10k stored"
	target "growth-trace-1M/10k" ">=" 0.9 "5 GET trace ops/s, 1M vs 10k stored"
	target "growth-proxied-1M/10k" ">=" 0.9 "5 proxied call ops/s, 1M vs 10k stored"
	echo
	echo "phase tables: $OUT/mcp/summary.txt, $OUT/rest/summary.txt; all ratios: $OUT/ratios.txt"
} | tee "$OUT/targets.txt"
