//go:build linux

package connect

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// pidNamespaces reports whether children can be started in a PID namespace
// of their own (probed once: root may; others need user namespaces).
var pidNamespaces = sync.OnceValue(func() bool {
	if os.Getenv("PRAXA_NO_PIDNS") != "" {
		return false
	}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = sysProcAttr(true)
	if err := spawn(cmd); err != nil {
		return false
	}
	return cmd.Wait() == nil
})

// sysProcAttr puts a child in its own process group, with SIGKILL as its
// parent-death signal, and (pidns) in its own PID namespace (inside a user
// namespace mapping the gateway's ids when it is not root).
func sysProcAttr(pidns bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if pidns {
		a.Cloneflags = syscall.CLONE_NEWPID
		if os.Geteuid() != 0 {
			a.Cloneflags |= syscall.CLONE_NEWUSER
			a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
			a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
		}
	}
	return a
}

// prepare sets how cmd is started.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = sysProcAttr(pidNamespaces())
}

// killGroup kills the process group whose leader is pid.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
