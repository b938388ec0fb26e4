#!/usr/bin/env bash
# bench/load.sh: wrk load harness for the gateway, method of
# shared/reference/performance.md: servers pinned to one core, wrk to the
# other, every figure reported with its ratio to a baseline measured in the
# same run, candidates interleaved.
#
# Candidates (all on 127.0.0.1, nothing else is contacted):
#   bare        GET  /v8/ping on bench/barechi (chi, small JSON, no middleware)
#   query       POST /v8/praxec/query {} on praxa serve --dev, bearer token
#               (cached after the first verification): the home read,
#               answered from memory
#   mission     GET  /v8/missions/{id} on the same server: a store read
#               (default durable SQLite store)
#   read        GET  /v8/traces/{id} on the same server: a store read
#   post        POST /v8/intents on the same server, a new Idempotency-Key per
#               request (post-intent.lua): fsync'd, group-committed SQLite
#   post-tmpfs  (only with TMPFS=1) the same POST on a second praxa serve whose
#               data directory is on tmpfs (/dev/shm): the durable settings,
#               but fsync costs nothing there. It stands in for a NoSync store,
#               which praxa serve has no switch for.
#
# Usage: bench/load.sh            (from anywhere; builds from this checkout)
# Environment (defaults): DURATION=10s WARMUP=3s RUNS=3 THREADS=2 CONNS=64
#   SERVER_CPU=0 LOAD_CPU=1 TMPFS=0 OUT=<new dir under /tmp, on disk>
#   QUIET_WAIT=300 QUIET_MAX=10 MAX_FOREIGN=30 RETRIES=2 HOST_WAIT=60
#   HOST_MIN=0.85 (see "measuring")
#   PPROF=0: with PPROF=1 each praxa serve also serves net/http/pprof (CPU,
#   block, mutex, trace) on a loopback port of its own (PRAXA_PPROF_ADDR,
#   cmd/praxa/pprof.go); the addresses are printed at start and logged in
#   $OUT/<name>.log.
# Output: a table of medians (min-max) and the ratios, also in $OUT/summary.txt
# and $OUT/ratios.txt (one "name value range" a line, read by bench/all.sh);
# raw wrk outputs and server logs stay in $OUT.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh" # ROOT, SERVER_CPU, LOAD_CPU, out_dir
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
TMPFS=${TMPFS:-0}
out_dir load

# --- tools -----------------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
	log "installing wrk from Debian's packages"
	if ! apt-get install -y wrk >"$OUT/apt.log" 2>&1; then
		apt-get update >>"$OUT/apt.log" 2>&1
		apt-get install -y wrk >>"$OUT/apt.log" 2>&1
	fi
fi
need_tools load.sh wrk taskset curl go
need_two_cpus load.sh server wrk

log "building praxa and barechi from $ROOT into $OUT"
(cd "$ROOT" && go build -o "$OUT/praxa" ./cmd/praxa && go build -o "$OUT/barechi" ./bench/barechi &&
	go build -o "$OUT/hostprobe" ./bench/hostprobe)

# One token sends all the traffic: lift the per-principal rate limit. The
# noop capability starts the mission the mission candidate reads.
cat >"$OUT/praxec.yaml" <<'EOF'
server:
  limits:
    ratePerSecond: -1
proxy:
  expose:
    - name: bench.noop
      description: Does nothing (load.sh reads the mission it starts).
EOF

# --- servers ---------------------------------------------------------------
cleanup() {
	stop_all
	if [ -n "${TMPFS_DIR:-}" ]; then rm -rf "$TMPFS_DIR"; fi
}
trap cleanup EXIT

# start_praxa NAME DATADIR: starts praxa serve --dev pinned to SERVER_CPU.
start_praxa() {
	local name=$1 dir=$2 pprof=""
	[ "${PPROF:-0}" = 1 ] && pprof=127.0.0.1:0
	PRAXA_PPROF_ADDR=$pprof start_as "$name" praxa serve --dev --addr 127.0.0.1:0 --data-dir "$dir" --config "$OUT/praxec.yaml"
	if [ -n "$pprof" ]; then
		log "$name: pprof on http://$(sed -n 's/.*"msg":"pprof listening","addr":"\([^"]*\)".*/\1/p' "$OUT/$name.log" | head -n1)/debug/pprof/"
	fi
}

host_probe_start "$OUT/hostprobe" "$OUT/hostprobe.txt"
PIDS+=("$PID_hostprobe")

start barechi -addr 127.0.0.1:0

start_praxa disk "$OUT/data"
if [ "$TMPFS" = 1 ]; then
	TMPFS_DIR=$(mktemp -d /dev/shm/praxa-load.XXXXXX)
	start_praxa tmpfs "$TMPFS_DIR"
fi

export PRAXA_TOKEN
PRAXA_TOKEN=$("$OUT/praxa" token --data-dir "$OUT/data" --ttl 2h)
TOKEN_tmpfs=""
if [ "$TMPFS" = 1 ]; then TOKEN_tmpfs=$("$OUT/praxa" token --data-dir "$TMPFS_DIR" --ttl 2h); fi

# One intent, whose trace the read candidate reads.
answer=$(curl -sS --max-time 10 -H "Authorization: Bearer $PRAXA_TOKEN" -H 'Content-Type: application/json' \
	-H "Idempotency-Key: load-sh-trace-seed-$(date +%s)" \
	-d '{"intent":"seed the trace the load test reads"}' "$URL_disk/v8/intents")
TRACE=$(printf '%s' "$answer" | sed -n 's/.*"traceId":"\([0-9a-f]*\)".*/\1/p')
[ -n "$TRACE" ] || { echo "load.sh: no traceId in: $answer" >&2; exit 1; }
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PRAXA_TOKEN" "$URL_disk/v8/traces/$TRACE")
[ "$code" = 200 ] || { echo "load.sh: GET /v8/traces/$TRACE answered $code" >&2; exit 1; }
# One mission (a run of proxy_default that fired bench.noop), which the
# mission candidate reads.
answer=$(curl -sS --max-time 10 -H "Authorization: Bearer $PRAXA_TOKEN" -H 'Content-Type: application/json' \
	-H "Idempotency-Key: load-sh-mission-seed-$(date +%s)" \
	-d '{"goal":"seed the mission the load test reads","definitionId":"proxy_default","input":{"capability":"bench.noop"}}' \
	"$URL_disk/v8/missions")
RUN=$(printf '%s' "$answer" | sed -n 's/^{"runId":"\([A-Za-z0-9_]*\)".*/\1/p')
[ -n "$RUN" ] || { echo "load.sh: no runId in: $answer" >&2; exit 1; }
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PRAXA_TOKEN" "$URL_disk/v8/missions/$RUN")
[ "$code" = 200 ] || { echo "load.sh: GET /v8/missions/$RUN answered $code" >&2; exit 1; }
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PRAXA_TOKEN" \
	-H 'Content-Type: application/json' -d '{}' "$URL_disk/v8/praxec/query")
[ "$code" = 200 ] || { echo "load.sh: POST /v8/praxec/query answered $code" >&2; exit 1; }

CANDIDATES=(bare query mission read post)
if [ "$TMPFS" = 1 ]; then CANDIDATES+=(post-tmpfs); fi

# --- measuring -------------------------------------------------------------
# The machine is shared: other work on either core skews every figure. Each
# run waits (at most QUIET_WAIT seconds) for a second in which both cores are
# nearly idle, and records how much CPU went to processes other than the
# server and wrk while it ran ("foreign", in % of one core). It also waits
# (at most HOST_WAIT seconds) for the host to give the server's core its
# usual speed, and records that speed over the run (lib.sh's host_speed;
# below HOST_MIN, default 0.85, the run is run again like one with too much
# foreign CPU).
QUIET_WAIT=${QUIET_WAIT:-300}
QUIET_MAX=${QUIET_MAX:-10} # busy % of both cores together that counts as quiet
MAX_FOREIGN=${MAX_FOREIGN:-30} # a run with more foreign CPU is run again ...
RETRIES=${RETRIES:-2}          # ... at most this many times (the last one is kept)
to_ms() { # wrk latency ("812.00us", "1.23ms", "2.01s") -> milliseconds
	awk -v v="$1" 'BEGIN {
		n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
		if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
		printf "%.3f", n }'
}

# run CANDIDATE DURATION TAG: one wrk run; prints
# "rps p50ms p99ms failed server-cpu% foreign-cpu% steal% host-speed", failed
# being non-2xx answers plus socket errors, host-speed lib.sh's host_speed
# over the run.
run() {
	local cand=$1 dur=$2 tag=$3 url script="" pid token=$PRAXA_TOKEN
	case $cand in
	bare) url="$URL_barechi/v8/ping"; pid=$PID_barechi ;;
	query) url="$URL_disk/v8/praxec/query"; script="$ROOT/bench/post-query.lua"; pid=$PID_disk ;;
	mission) url="$URL_disk/v8/missions/$RUN"; script="$ROOT/bench/get-auth.lua"; pid=$PID_disk ;;
	read) url="$URL_disk/v8/traces/$TRACE"; script="$ROOT/bench/get-auth.lua"; pid=$PID_disk ;;
	post) url="$URL_disk/v8/intents"; script="$ROOT/bench/post-intent.lua"; pid=$PID_disk ;;
	post-tmpfs) url="$URL_tmpfs/v8/intents"; script="$ROOT/bench/post-intent.lua"; pid=$PID_tmpfs; token=$TOKEN_tmpfs ;;
	esac
	local args=(-t"$THREADS" -c"$CONNS" -d"$dur" --latency --timeout 10s)
	[ -n "$script" ] && args+=(-s "$script")
	local file="$OUT/wrk-$cand-$tag.txt" before after busy0 busy1 steal0 steal1 wrk0 wrk1
	quiet_wait
	host_wait
	local h0 h1
	h0=$(host_now)
	times >"$OUT/.times" # in this shell: a pipeline would run it in a subshell
	wrk0=$(awk 'NR == 2 {print $1 " " $2}' "$OUT/.times")
	before=$(cpu_ticks "$pid"); busy0=$(busy_ticks); steal0=$(steal_ticks)
	PRAXA_TOKEN=$token KEY_PREFIX="load-$cand-$tag-$(date +%s)" \
		taskset -c "$LOAD_CPU" wrk "${args[@]}" "$url" >"$file" 2>&1 ||
		{ echo "load.sh: wrk failed (whole seconds only in DURATION and WARMUP), see $file" >&2; cat "$file" >&2; exit 1; }
	after=$(cpu_ticks "$pid"); busy1=$(busy_ticks); steal1=$(steal_ticks)
	h1=$(host_now)
	times >"$OUT/.times"
	wrk1=$(awk 'NR == 2 {print $1 " " $2}' "$OUT/.times")
	local rps p50 p99 bad secs
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$file")
	p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$file")")
	p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$file")")
	# non-2xx answers plus socket errors (connect, read, write, timeout)
	bad=$(awk '/Non-2xx or 3xx responses:/ {n += $5}
		/Socket errors:/ {gsub(/,/, ""); n += $4 + $6 + $8 + $10}
		END {print n + 0}' "$file")
	secs=$(awk -v d="$dur" 'BEGIN { n = d + 0; if (d ~ /m$/) n *= 60; print n }')
	local cpu foreign steal wrkcpu
	cpu=$(core_pct "$((after - before))" "$secs")
	wrkcpu=$(children_pct "$wrk0" "$wrk1" "$secs")
	foreign=$(foreign_pct "$((busy1 - busy0))" "$secs" "$cpu" "$wrkcpu")
	steal=$(core_pct "$((steal1 - steal0))" "$secs")
	[ -n "$rps" ] || { echo "load.sh: wrk failed, see $file" >&2; cat "$file" >&2; exit 1; }
	echo "$rps $p50 $p99 ${bad:-0} $cpu $foreign $steal $(host_speed "$h0" "$h1")"
}

log "servers: bare $URL_barechi, praxa $URL_disk${URL_tmpfs:+, praxa on tmpfs $URL_tmpfs}; trace $TRACE, mission $RUN"
log "warm-up: one ${WARMUP} run per candidate, discarded"
for cand in "${CANDIDATES[@]}"; do HOST_WAIT=0 run "$cand" "$WARMUP" warmup >/dev/null; done

declare -A RES
for r in $(seq 1 "$RUNS"); do
	for cand in "${CANDIDATES[@]}"; do
		for attempt in $(seq 0 "$RETRIES"); do
			RES[$cand,$r]=$(run "$cand" "$DURATION" "run$r-$attempt")
			foreign=$(echo "${RES[$cand,$r]}" | awk '{print $6}')
			speed=$(echo "${RES[$cand,$r]}" | awk '{print $8}')
			[ "$foreign" -le "$MAX_FOREIGN" ] && host_ok "$speed" && break
			log "run $r $cand: foreign CPU ${foreign}% (at most ${MAX_FOREIGN}%), host speed $speed (at least ${HOST_MIN:-0.85})$([ "$attempt" -lt "$RETRIES" ] && echo ': run again' || echo ': kept anyway')"
		done
		log "run $r $cand: $(echo "${RES[$cand,$r]}" | awk '{printf "%s req/s, p50 %s ms, p99 %s ms, failed %s, server CPU %s%%, foreign CPU %s%%, steal %s%%, host speed %s", $1, $2, $3, $4, $5, $6, $7, $8}')"
	done
done

# --- summary ---------------------------------------------------------------
# col CANDIDATE FIELD: the values of one field over the runs, one per line.
col() { for r in $(seq 1 "$RUNS"); do echo "${RES[$1,$r]}" | awk -v f="$2" '{print $f}'; done; }
# ratio A B: median of A's req/s over median of B's, and the range of the
# per-round ratios (the candidates of one round ran back to back).
ratio() {
	local a b
	a=$(col "$1" 1 | median)
	b=$(col "$2" 1 | median)
	local per
	per=$(for r in $(seq 1 "$RUNS"); do
		paste <(echo "${RES[$1,$r]}" | awk '{print $1}') <(echo "${RES[$2,$r]}" | awk '{print $1}') | awk '{printf "%.3f\n", $1 / $2}'
	done | minmax)
	awk -v a="$a" -v b="$b" -v per="$per" -v n1="$1" -v n2="$2" 'BEGIN { printf "%-22s %.3f  (per-round %s)\n", n1 " / " n2, a / b, per }'
	awk -v a="$a" -v b="$b" -v per="$per" -v n1="$1" -v n2="$2" 'BEGIN { printf "rest-%s/%s %.3f %s\n", n1, n2, a / b, per }' >>"$OUT/ratios.txt"
}
# tail_ratio NAME A FA B FB: the median of field FA of A (2: p50, 3: p99)
# over the median of field FB of B, and the range of the per-round ratios.
tail_ratio() {
	local a b per
	a=$(col "$2" "$3" | median)
	b=$(col "$4" "$5" | median)
	per=$(for r in $(seq 1 "$RUNS"); do
		echo "${RES[$2,$r]} ${RES[$4,$r]}" | awk -v fa="$3" -v fb="$(($5 + 8))" '{printf "%.3f\n", $fa / $fb}'
	done | minmax)
	awk -v a="$a" -v b="$b" -v per="$per" -v n="$1" 'BEGIN { printf "%-22s %.3f  (per-round %s)\n", n, a / b, per }'
	awk -v a="$a" -v b="$b" -v per="$per" -v n="$1" 'BEGIN { printf "rest-%s %.3f %s\n", n, a / b, per }' >>"$OUT/ratios.txt"
}

: >"$OUT/ratios.txt"
{
	echo "praxa load harness, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, server on CPU $SERVER_CPU, wrk on CPU $LOAD_CPU"
	echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency; $RUNS measured runs per candidate (interleaved), ${WARMUP} warm-up discarded"
	echo
	printf '%-11s %-30s %-22s %-24s %-7s %-8s %-19s %s\n' candidate "req/s median (min-max)" "p50 ms" "p99 ms" failed "srv CPU%" "foreign CPU% (max)" "host speed (min)"
	for cand in "${CANDIDATES[@]}"; do
		printf '%-11s %-30s %-22s %-24s %-7s %-8s %-19s %s\n' "$cand" \
			"$(col "$cand" 1 | median) ($(col "$cand" 1 | minmax))" \
			"$(col "$cand" 2 | median) ($(col "$cand" 2 | minmax))" \
			"$(col "$cand" 3 | median) ($(col "$cand" 3 | minmax))" \
			"$(col "$cand" 4 | awk '{s += $1} END {print s}')" \
			"$(col "$cand" 5 | median)" \
			"$(col "$cand" 6 | sort -g | tail -n1)" \
			"$(col "$cand" 8 | sort -g | head -n1)"
	done
	echo
	echo "ratios of req/s medians:"
	ratio query bare
	ratio mission bare
	ratio read bare
	ratio post bare
	ratio post read
	if [ "$TMPFS" = 1 ]; then ratio post post-tmpfs; fi
	echo "ratios of latencies (medians of the runs' p99 and p50):"
	tail_ratio query-p99/bare-p99 query 3 bare 3
	tail_ratio mission-p99/bare-p99 mission 3 bare 3
	tail_ratio read-p99/bare-p99 read 3 bare 3
	tail_ratio post-p99/post-p50 post 3 post 2
	if [ "$TMPFS" = 1 ]; then tail_ratio post-tmpfs-p99/p50 post-tmpfs 3 post-tmpfs 2; fi
	echo
	echo "raw outputs and server logs: $OUT"
} | tee "$OUT/summary.txt"
