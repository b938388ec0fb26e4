//go:build pprofdebug

package main

import (
	"log"
	"net/http"
	_ "net/http/pprof" // the profiles, on the debug listener only
	"os"
	"runtime"
)

// With -tags pprofdebug, PRAXA_PPROF_ADDR (default 127.0.0.1:6060) serves
// net/http/pprof, for profiling praxa serve under load (bench/load.sh).
// Release builds carry none of it.
func init() {
	addr := os.Getenv("PRAXA_PPROF_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6060"
	}
	runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(10000)
	go func() { log.Println(http.ListenAndServe(addr, nil)) }()
}
