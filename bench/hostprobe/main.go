// Command hostprobe measures how fast the core it runs on runs a tight
// loop, so that the load harnesses can tell a slow host from
// a slow server. The machines bench/ runs on are virtual and shared: for
// tens of seconds at a time the same core runs such a loop 30 %
// slower and a server almost twice as slowly, with no steal
// time reported to the guest (BENCHMARKS.md, "The host's slow periods").
// A server's CPU time per request then rises with nothing in its code to
// explain it.
//
// Every -every it times -n iterations of a tight loop in the CPU time of
// its own thread (CLOCK_THREAD_CPUTIME_ID), not in wall time: pinned to the
// server's core it shares that core with the server, and the time it waits
// for its turn must not count. It prints one line per sample on stdout,
// "UNIX_MS RATE", RATE in iterations per microsecond of its CPU time; at
// the defaults it uses about 0.3 % of the core.
//
// Usage:
//
//	hostprobe [-every 250ms] [-n 2000000]
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() (time.Duration, error) {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, fmt.Errorf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %w", errno)
	}
	return time.Duration(ts.Nano()), nil
}

// sink keeps what spin computes, so that its loop is not optimised away.
var sink uint64

// spin runs a loop of n short iterations (an add, a compare and a taken
// branch each) and returns their sum. It touches no memory and mispredicts
// nothing, so the server sharing the core (and its use of the caches) does
// not change its speed, while the host's slow periods do: measured against
// a server's CPU time per request on the same core, this loop ran 0.72 as
// fast in the rounds where the server needed 1.5 times the CPU a request,
// where a chain of dependent multiply-adds did not slow down at all and
// four independent chains slowed down by less than 10 % (BENCHMARKS.md,
// "The host's slow periods").
func spin(n int) uint64 {
	var s uint64
	for i := 0; i < n; i++ {
		s += uint64(i)
	}
	return s
}

func main() {
	every := flag.Duration("every", 250*time.Millisecond, "time between samples")
	n := flag.Int("n", 2_000_000, "iterations a sample times")
	flag.Parse()
	if *every <= 0 || *n <= 0 {
		fmt.Fprintln(os.Stderr, "hostprobe: -every and -n must be positive")
		os.Exit(2)
	}
	runtime.LockOSThread()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	out := bufio.NewWriter(os.Stdout)
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			_ = out.Flush()
			// Reading sink here keeps every sample's loop in the binary.
			fmt.Fprintf(os.Stderr, "hostprobe: stopped (checksum %d)\n", sink)
			return
		case <-tick.C:
		}
		t0, err := threadCPU()
		if err != nil {
			fmt.Fprintln(os.Stderr, "hostprobe:", err)
			os.Exit(1)
		}
		sink += spin(*n)
		t1, _ := threadCPU()
		if t1 <= t0 {
			continue
		}
		fmt.Fprintf(out, "%d %.0f\n", time.Now().UnixMilli(), float64(*n)/(float64(t1-t0)/1e3))
		if err := out.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, "hostprobe:", err)
			os.Exit(1)
		}
	}
}
