#!/usr/bin/env bash
# bench/mcpwait.sh: where the proxied MCP call waits. It runs praxa serve
# (this checkout) with its profiling listener (PRAXA_PPROF_ADDR,
# cmd/praxa/pprof.go, which turns the block profile on at one sample per
# 10 µs blocked and the mutex profile at one contention in 10) in front of
# bench/mcpecho, both pinned to SERVER_CPU as bench/mcp.sh pins them, has
# bench/mcpload call up.echo with SESSIONS sessions from LOAD_CPU, and
# takes, over one window of WINDOW seconds under that load: a CPU profile,
# the block and mutex profiles (deltas over the window), the server core's
# busy and idle time (/proc/stat), the CPU of praxa and mcpecho, and a
# goroutine dump every 2 s (their wait reasons counted); then, still under
# load, an execution trace of TRACE seconds, whose network, syscall,
# synchronization and scheduler waits `go tool trace -pprof` extracts.
#
# Usage: bench/mcpwait.sh
# Environment (defaults): SESSIONS=8 WINDOW=20 TRACE=3 SERVER_CPU=0
#   LOAD_CPU=1 QUIET_WAIT=20 QUIET_MAX=10 HOST_WAIT=60 HOST_MIN=0.85
#   OUT=<new dir under /tmp>
# Output: $OUT/summary.txt (the figures and the top of each profile);
# the profiles ({cpu,block,mutex}.pprof, trace.out and trace-{net,syscall,
# sync,sched}.pprof), goroutine dumps and logs stay in $OUT.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh" # ROOT, SERVER_CPU, LOAD_CPU, out_dir
SESSIONS=${SESSIONS:-8}
WINDOW=${WINDOW:-20}
TRACE=${TRACE:-3}
QUIET_WAIT=${QUIET_WAIT:-20}
out_dir mcpwait
export QUIET_WAIT

need_tools mcpwait.sh taskset curl go

log "building praxa, mcpecho, mcpload and hostprobe from $ROOT into $OUT"
(cd "$ROOT" && go build -o "$OUT/" ./cmd/praxa ./bench/mcpecho ./bench/mcpload ./bench/hostprobe)

trap stop_all EXIT

host_probe_start "$OUT/hostprobe" "$OUT/hostprobe.txt"
PIDS+=("$PID_hostprobe")
start mcpecho -addr 127.0.0.1:0
mcp_proxy_config "$OUT/praxec.yaml" "$URL_mcpecho"
PRAXA_PPROF_ADDR=127.0.0.1:0 start praxa serve --dev --addr 127.0.0.1:0 --data-dir "$OUT/data" --config "$OUT/praxec.yaml"
PPROF=http://$(sed -n 's/.*"msg":"pprof listening","addr":"\([^"]*\)".*/\1/p' "$OUT/praxa.log" | head -n1)/debug/pprof
export PRAXA_TOKEN
PRAXA_TOKEN=$("$OUT/praxa" token --data-dir "$OUT/data" --ttl 2h)
log "praxa $URL_praxa (pprof $PPROF), mcpecho $URL_mcpecho"

load() {
	taskset -c "$LOAD_CPU" "$OUT/mcpload" -url "$URL_praxa/mcp" -tool up.echo -args '{"text":"hello from mcpload"}' \
		-sessions "$SESSIONS" -duration "$1" -label praxa
}
load 3s >"$OUT/warmup.txt"

# core_ticks: "busy idle" ticks of SERVER_CPU (idle counts iowait).
core_ticks() { awk -v c="cpu$SERVER_CPU" '$1 == c {print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat; }

quiet_wait
host_wait
log "profiling $WINDOW s under $SESSIONS sessions, then a $TRACE s trace"
load "$((WINDOW + TRACE + 6))s" >"$OUT/mcpload.txt" &
PID_load=$!
sleep 2
h0=$(host_now)
read -r cb0 ci0 < <(core_ticks)
p0=$(cpu_ticks "$PID_praxa"); e0=$(cpu_ticks "$PID_mcpecho")
curl -sf -o "$OUT/cpu.pprof" "$PPROF/profile?seconds=$WINDOW" &
c1=$!
curl -sf -o "$OUT/block.pprof" "$PPROF/block?seconds=$WINDOW" &
c2=$!
curl -sf -o "$OUT/mutex.pprof" "$PPROF/mutex?seconds=$WINDOW" &
c3=$!
for i in $(seq 1 $((WINDOW / 2 - 1))); do
	sleep 2
	curl -sf -o "$OUT/goroutines-$i.txt" "$PPROF/goroutine?debug=2"
done
wait "$c1" "$c2" "$c3"
read -r cb1 ci1 < <(core_ticks)
p1=$(cpu_ticks "$PID_praxa"); e1=$(cpu_ticks "$PID_mcpecho")
h1=$(host_now)
curl -sf -o "$OUT/trace.out" "$PPROF/trace?seconds=$TRACE"
wait "$PID_load"

hz=$(getconf CLK_TCK)
for kind in net syscall sync sched; do
	go tool trace -pprof="$kind" "$OUT/trace.out" >"$OUT/trace-$kind.pprof" 2>/dev/null || true
done
# top FILE N: the top N lines of a profile, flat and cumulative, after
# its total.
top() { go tool pprof -top -nodecount="$2" "$1" 2>/dev/null | sed -n '/^Showing nodes accounting/p; /flat%/,$p'; }
# peek FILE REGEXP: who called the functions REGEXP matches, and how much
# of their time each caller accounts for.
peek() { go tool pprof -peek "$2" "$1" 2>/dev/null | sed -n '/flat%/,$p' | grep -v '^-*+-*$'; }
{
	echo "where the proxied call waits: praxa serve (pprof on) + mcpecho on CPU $SERVER_CPU, mcpload -sessions $SESSIONS up.echo on CPU $LOAD_CPU"
	echo "window $WINDOW s, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . 2>/dev/null || echo '+changes'), host speed $(host_speed "$h0" "$h1")"
	grep '^mcpload ' "$OUT/mcpload.txt" | awk '{for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "load: %s calls/s over the whole run, p50 %s ms, p99 %s ms, errors %s\n", v["calls_per_s"], v["p50_ms"], v["p99_ms"], v["errors"] }'
	awk -v cb="$((cb1 - cb0))" -v ci="$((ci1 - ci0))" -v p="$((p1 - p0))" -v e="$((e1 - e0))" 'BEGIN {
		t = cb + ci; if (t == 0) t = 1
		printf "server core: %.1f %% busy, %.1f %% idle; of the core: praxa %.1f %%, mcpecho %.1f %%, the rest (kernel softirq, others) %.1f %%\n",
			100 * cb / t, 100 * ci / t, 100 * p / t, 100 * e / t, 100 * (cb - p - e) / t }'
	echo
	echo "goroutine wait reasons (all dumps, counted; top frames of parked goroutines):"
	cat "$OUT"/goroutines-*.txt | sed -n 's/^goroutine [0-9]* \[\([^],]*\).*/\1/p' | sort | uniq -c | sort -rn | head -12
	echo
	echo "CPU profile:"; top "$OUT/cpu.pprof" 25
	echo
	echo "block profile (time blocked on channels, select, sync; not network or syscalls):"; top "$OUT/block.pprof" 20
	echo
	echo "mutex profile (time others waited for a lock this stack held):"; top "$OUT/mutex.pprof" 15
	for kind in net syscall sync sched; do
		echo
		echo "trace, $kind waits ($TRACE s; the total over the trace's length is the number of goroutines waiting so, on average):"
		top "$OUT/trace-$kind.pprof" 12
	done
	echo
	echo "trace, sync waits by the function that waited (callers of select and channel receives and sends):"
	peek "$OUT/trace-sync.pprof" 'runtime.selectgo$|runtime.chanrecv[12]$|runtime.chansend1$'
	echo
	echo "trace, syscall waits by the function that waited:"
	peek "$OUT/trace-syscall.pprof" 'libc.___syscall_cp$|syscall.write$|syscall.read$'
	echo
	echo "trace, net waits by the function that waited:"
	peek "$OUT/trace-net.pprof" 'poll.\(\*FD\).Read$'
	echo
	echo "trace, sched waits (runnable, waiting for the core) by the function that was to run:"
	top "$OUT/trace-sched.pprof" 15
	echo
	echo "profiles and dumps: $OUT"
} | tee "$OUT/summary.txt"
