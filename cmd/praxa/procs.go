package main

import (
	"os"
	"runtime"
)

// minProcs is the fewest Ps (GOMAXPROCS) praxa serve runs with.
//
// With one P the Go scheduler polls the network only when it has nothing
// else to run; otherwise sysmon polls it every 10 ms and puts the
// goroutines it finds on the global run queue, which a busy P serves once
// every 61 scheduling rounds (golang/go#51651). Under a saturating load on
// one core, a connection whose next request is already buffered when its
// goroutine finishes the previous one is served again at once, while a
// connection whose goroutine waited on the socket can wait hundreds of
// milliseconds: at 64 connections on one core some connections completed
// ten times as many requests as others, and the durable-write p99 reached
// 15-25 times its p50. A second P polls the network whenever it runs out
// of work (and steals from the first), which spreads the service evenly
// across connections (bench/load.sh; BENCHMARKS.md).
const minProcs = 2

// procsFor is the GOMAXPROCS praxa serve sets, given the runtime's choice
// (from the CPU affinity mask and cgroup quota) and whether the operator
// set GOMAXPROCS: the operator's value always stands, and a runtime choice
// below minProcs is raised to it. 0 leaves it as it is.
func procsFor(current int, operatorSet bool) int {
	if operatorSet || current >= minProcs {
		return 0
	}
	return minProcs
}

// ensureProcs applies procsFor to this process.
func ensureProcs() {
	_, set := os.LookupEnv("GOMAXPROCS")
	if n := procsFor(runtime.GOMAXPROCS(0), set); n > 0 {
		runtime.GOMAXPROCS(n)
	}
}
