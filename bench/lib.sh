# shellcheck shell=bash
# bench/lib.sh: shell helpers the load scripts of bench/ share (sourced, not
# run). The method is shared/reference/performance.md's: servers pinned to
# one core, the load generator to the other, candidates interleaved, every
# figure reported with its ratio to a baseline measured in the same run.

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

# cpu_ticks PID...: user+system ticks the processes used so far.
cpu_ticks() {
	local n=0 p t
	for p in "$@"; do
		t=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)
		n=$((n + t))
	done
	echo "$n"
}
# busy_ticks: user+nice+system ticks of all CPUs (not irq, softirq, steal).
busy_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4}' /proc/stat; }
steal_ticks() { awk '$1 == "cpu" {print $9}' /proc/stat; }

# quiet_wait: waits for three seconds in a row in which both cores together
# were at most QUIET_MAX % busy, at most QUIET_WAIT seconds (then measures
# anyway: the machine is shared, and each run records how much CPU others
# used meanwhile).
quiet_wait() {
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

# median, minmax: of the numbers on stdin, one a line.
median() { sort -g | awk '{a[NR] = $1} END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
minmax() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }
