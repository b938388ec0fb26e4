#!/usr/bin/env bash
# bench/gobench.sh: runs the Go benchmarks of ./bench pinned to one core, in
# ROUNDS rounds of -count=1 so that the candidates of each comparison run back
# to back (interleaved) rather than one candidate's repetitions in a row, and
# records how much of the machine other processes used meanwhile (the VM is
# shared: a benchmark that lost its core to someone else reads slow).
# Before each round it waits (at most QUIET_WAIT s) for three quiet seconds
# and for the host to be at speed (bench/lib.sh's host_wait: bench/hostprobe
# runs pinned beside the benchmark); a round during which other processes
# used more than MAX_OTHER % of a core on average, or the host ran below
# HOST_MIN of its speed, is discarded and run again (at most MAX_ATTEMPTS
# rounds in all).
#
# Usage: bench/gobench.sh [extra go test flags]
# Environment (defaults): CPU=0 BENCH=. BENCHTIME=1s ROUNDS=3 CPUS=1,2
#   QUIET_WAIT=300 QUIET_MAX=10 MAX_OTHER=30 MAX_ATTEMPTS=3*ROUNDS
#   HOST_WAIT=60 HOST_MIN=0.85 OUT=<new dir under /tmp>
# Output: $OUT/bench.txt (the go test output of the kept rounds,
# benchstat-ready), $OUT/round<N>.txt (every attempt) and $OUT/cpu.txt (one
# line a second: attempt, benchmark CPU %, CPU % of other processes (of one
# core, both cores together), steal %) and $OUT/host.txt (one line a round:
# attempt, the host's speed during it).
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh" # ROOT, SERVER_CPU, LOAD_CPU, out_dir
CPU=${CPU:-0}
BENCH=${BENCH:-.}
BENCHTIME=${BENCHTIME:-1s}
ROUNDS=${ROUNDS:-3}
CPUS=${CPUS:-1,2}
QUIET_WAIT=${QUIET_WAIT:-300}
QUIET_MAX=${QUIET_MAX:-10}
export QUIET_WAIT QUIET_MAX
MAX_OTHER=${MAX_OTHER:-30}
MAX_ATTEMPTS=${MAX_ATTEMPTS:-$((3 * ROUNDS))}
out_dir gobench
hz=$(getconf CLK_TCK)

(cd "$ROOT" && go test -c -o "$OUT/bench.test" ./bench && go build -o "$OUT/hostprobe" ./bench/hostprobe)
SERVER_CPU=$CPU host_probe_start "$OUT/hostprobe" "$OUT/hostprobe.txt"
trap 'kill "$PID_hostprobe" 2>/dev/null || true' EXIT
cd "$ROOT/bench"
: >"$OUT/bench.txt"
: >"$OUT/cpu.txt"
: >"$OUT/host.txt"
: >"$OUT/kept.txt"
kept=0
round=0
while [ "$kept" -lt "$ROUNDS" ] && [ "$round" -lt "$MAX_ATTEMPTS" ]; do
	round=$((round + 1))
	quiet_wait
	host_wait
	h0=$(host_now)
	taskset -c "$CPU" "$OUT/bench.test" -test.run='^$' -test.bench="$BENCH" -test.benchtime="$BENCHTIME" \
		-test.count=1 -test.cpu="$CPUS" "$@" >"$OUT/round$round.txt" 2>&1 &
	pid=$!
	prev_p=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)
	read -r prev_b prev_s < <(awk '$1 == "cpu" {print $2 + $3 + $4, $9}' /proc/stat)
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		p=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || break
		read -r b s < <(awk '$1 == "cpu" {print $2 + $3 + $4, $9}' /proc/stat)
		awk -v r="$round" -v p=$((p - prev_p)) -v b=$((b - prev_b)) -v s=$((s - prev_s)) -v hz="$hz" \
			'BEGIN { printf "%d %.0f %.0f %.0f\n", r, 100 * p / hz, 100 * (b - p) / hz, 100 * s / hz }' >>"$OUT/cpu.txt"
		prev_p=$p prev_b=$b prev_s=$s
	done
	wait "$pid" || { cat "$OUT/round$round.txt"; exit 1; }
	speed=$(host_speed "$h0" "$(host_now)")
	echo "$round $speed" >>"$OUT/host.txt"
	other=$(awk -v r="$round" '$1 == r {n++; o += $3} END {printf "%.0f", n ? o / n : 0}' "$OUT/cpu.txt")
	if [ "$other" -gt "$MAX_OTHER" ] || ! host_ok "$speed"; then
		log "gobench: round $round discarded: other processes used ${other}% of a core (at most $MAX_OTHER), host speed $speed (at least ${HOST_MIN:-0.85})"
		continue
	fi
	kept=$((kept + 1))
	echo "$round" >>"$OUT/kept.txt"
	cat "$OUT/round$round.txt" >>"$OUT/bench.txt"
done
[ "$kept" -eq "$ROUNDS" ] || log "gobench: only $kept of $ROUNDS rounds were quiet enough, with the host at speed"

cat "$OUT/bench.txt"
awk 'FNR == NR {speed[$1] = $2; next}
	{n[$1]++; bench[$1] += $2; other[$1] += $3; steal[$1] += $4; if ($3 > 20) busy[$1]++}
	END { for (r in n) printf "round %d, %d s: benchmark CPU %.0f%% of its core on average; other processes %.0f%% (of one core) on average, above 20%% in %d s; steal %.1f%%; host speed %s\n", r, n[r], bench[r] / n[r], other[r] / n[r], busy[r], steal[r] / n[r], speed[r] }' \
	"$OUT/host.txt" "$OUT/cpu.txt" | sort -n -k2 | tee "$OUT/cpu-summary.txt"
echo "output in $OUT"
