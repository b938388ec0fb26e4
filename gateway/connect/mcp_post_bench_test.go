//go:build unix

package connect

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// CPUTime is the CPU time the process has used (user and system).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPostPath compares a call of a 2026-07-28 upstream's tool (a
// go-sdk stateless server in the same process) sent as its own POST with
// the same call through go-sdk's client session, interleaved call by
// call, from 1 and 8 goroutines; cpu-ns/op is the process's CPU time per
// call of each (client and upstream together):
//
//	go test -run '^$' -bench BenchmarkPostPath -benchtime 2000x -count 5 ./gateway/connect/
func BenchmarkPostPath(b *testing.B) {
	for _, par := range []int{1, 8} {
		b.Run(fmt.Sprintf("par=%d", par), func(b *testing.B) {
			url, _, _ := statelessUpstream(b)
			conns := map[string]*mcpConn{"post": newTestConn(b, url, true), "session": newTestConn(b, url, false)}
			ctx := context.Background()
			args := map[string]any{"s": "hello", "n": 1}
			spent := map[string]time.Duration{}
			wall := map[string]time.Duration{}
			for b.Loop() {
				for _, name := range []string{"post", "session"} {
					c := conns[name]
					cpu, start := CPUTime(), time.Now()
					errs := make(chan error, par)
					for range par {
						go func() {
							_, _, err := c.callForTest(ctx, "text", args)
							errs <- err
						}()
					}
					for range par {
						if err := <-errs; err != nil {
							b.Fatal(err)
						}
					}
					spent[name] += CPUTime() - cpu
					wall[name] += time.Since(start)
				}
			}
			calls := float64(b.N * par)
			for name := range conns {
				b.ReportMetric(float64(spent[name].Nanoseconds())/calls, name+"-cpu-ns/call")
			}
			b.ReportMetric(wall["session"].Seconds()/wall["post"].Seconds(), "post/session-calls/s")
			b.ReportMetric(float64(spent["post"])/float64(spent["session"]), "post/session-cpu")
		})
	}
}
