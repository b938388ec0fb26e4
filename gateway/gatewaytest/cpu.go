package gatewaytest

import "syscall"

// ProcessCPU is the CPU time (user and system) the process has used so
// far, in nanoseconds. A benchmark's difference of it over its loop
// divided by b.N (reported as the cpu-ns/op metric) says what an
// operation costs the machine, which ns/op does not on a shared machine:
// wall time grows when another process takes the core, CPU time barely
// does.
func ProcessCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
