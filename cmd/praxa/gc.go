package main

import (
	"os"
	"runtime/debug"
)

// serveGCPercent is the GOGC praxa serve runs with when the operator has
// not set GOGC.
//
// Every MCP request makes the SDK decode its JSON a dozen times, each
// decoder with a fresh 32 KiB buffer: about 470 KB of garbage per call
// against a live heap of some 15 MB (the catalogue, compiled schemas, the
// store's caches). At Go's default of 100 the collector then runs every
// few dozen calls and marks the whole live heap each time, 15-20 % of the
// server's CPU under load. At 400 it runs a quarter as often, for a heap
// that peaks near five times the live one (about 75 MB here); an operator
// on a memory-tight host sets GOGC (or GOMEMLIMIT) and that value stands.
const serveGCPercent = 400

// gcPercentFor is the GC percent praxa serve sets, given whether the
// operator set GOGC: -1 leaves the runtime's setting alone.
func gcPercentFor(operatorSet bool) int {
	if operatorSet {
		return -1
	}
	return serveGCPercent
}

// ensureGCPercent applies gcPercentFor to this process.
func ensureGCPercent() {
	_, set := os.LookupEnv("GOGC")
	if p := gcPercentFor(set); p >= 0 {
		debug.SetGCPercent(p)
	}
}
