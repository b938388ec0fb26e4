#!/usr/bin/env bash
# bench/abbench.sh: compares Go benchmarks between builds (or between two
# benchmarks of one build) on this shared, noisy machine: ROUNDS rounds, each
# running every NAME=BINARY:BENCH once (-count=1) pinned to CPU 0 beside
# bench/hostprobe, the order reversed every other round (ABBA...), each run
# after bench/lib.sh's host_wait. It then prints, for each benchmark of the
# first and every other NAME, the median and range of the per-round ratios
# OTHER / FIRST of ns/op and cpu-ns/op (the ratio of two runs of one round is
# far steadier than a ratio of medians when other processes come and go),
# and benchstat's comparison.
#
# Usage: bench/abbench.sh NAME=BINARY:BENCH NAME=BINARY:BENCH ...
#   build each BINARY with `go test -c -o FILE ./bench` (an older commit's
#   from `git archive COMMIT | tar -x -C DIR`); BENCH is a -test.bench
#   regexp. With one binary and two BENCH regexps the ratios compare the
#   benchmarks of the same round by position (the first of each run).
# Environment (defaults): ROUNDS=10 BENCHTIME=2s HOST_WAIT=30 HOST_MIN=0.85
#   OUT=<new dir under /tmp>
# Output: $OUT/NAME.txt (every round, benchstat-ready), $OUT/NAME.rN.txt,
#   $OUT/speed.txt (round, name, the host's speed during the run).
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh" # ROOT, SERVER_CPU, LOAD_CPU, out_dir
ROUNDS=${ROUNDS:-10}
BENCHTIME=${BENCHTIME:-2s}
export HOST_WAIT=${HOST_WAIT:-30}
out_dir abbench
[ "$#" -ge 2 ] || { echo "usage: $0 NAME=BINARY:BENCH NAME=BINARY:BENCH ..." >&2; exit 2; }

(cd "$ROOT" && go build -o "$OUT/hostprobe" ./bench/hostprobe)
SERVER_CPU=0 host_probe_start "$OUT/hostprobe" "$OUT/hostprobe.txt"
trap 'kill "$PID_hostprobe" 2>/dev/null || true' EXIT
sleep 3
cd "$ROOT/bench"
pairs=("$@")
names=()
for p in "${pairs[@]}"; do names+=("${p%%=*}"); done
for r in $(seq "$ROUNDS"); do
	order=("${pairs[@]}")
	if ((r % 2 == 0)); then mapfile -t order < <(printf '%s\n' "${pairs[@]}" | tac); fi
	for p in "${order[@]}"; do
		name=${p%%=*} rest=${p#*=}
		bin=${rest%%:*} bench=${rest#*:}
		host_wait
		h0=$(host_now)
		taskset -c 0 "$bin" -test.run='^$' -test.bench="$bench" -test.benchtime="$BENCHTIME" -test.count=1 -test.cpu=1 \
			>"$OUT/$name.r$r.txt" 2>&1 || log "$name round $r failed: see $OUT/$name.r$r.txt"
		echo "$r $name $(host_speed "$h0" "$(host_now)")" >>"$OUT/speed.txt"
		cat "$OUT/$name.r$r.txt" >>"$OUT/$name.txt"
	done
	log "round $r of $ROUNDS done"
done

# metric FILE I UNIT: the value of UNIT of the I-th benchmark line of FILE.
metric() { awk -v i="$2" -v u="$3" '/^Benchmark/ && ++n == i { for (k = 2; k < NF; k++) if ($(k + 1) == u) print $k }' "$1"; }
base=${names[0]}
for other in "${names[@]:1}"; do
	n=$(grep -c '^Benchmark' "$OUT/$base.r1.txt" || true)
	for i in $(seq "$n"); do
		bname=$(awk -v i="$i" '/^Benchmark/ && ++n == i { print $1 }' "$OUT/$other.r1.txt")
		for unit in ns/op cpu-ns/op; do
			for r in $(seq "$ROUNDS"); do
				a=$(metric "$OUT/$base.r$r.txt" "$i" "$unit") b=$(metric "$OUT/$other.r$r.txt" "$i" "$unit")
				[ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", b / a }'
			done | { ratios=$(cat); [ -n "$ratios" ] &&
				printf '%s %s / %s %s: median %s, range %s, %d rounds\n' "$bname" "$other" "$base" "$unit" \
					"$(echo "$ratios" | median)" "$(echo "$ratios" | minmax)" "$(echo "$ratios" | wc -l)"; } || true
		done
	done
done
if command -v benchstat >/dev/null; then
	files=()
	for n in "${names[@]}"; do files+=("$OUT/$n.txt"); done
	benchstat "${files[@]}"
fi
echo "output in $OUT"
