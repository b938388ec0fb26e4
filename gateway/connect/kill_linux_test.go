//go:build linux

package connect_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/connect/connecttest"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/workflow"
)

// TestMain lets the test binary act as a gateway process for
// TestSIGKILLLeavesNoChild, and as an MCP server over stdio for
// TestMCPCallsOverlapOverStdio.
func TestMain(m *testing.M) {
	switch os.Getenv("PRAXA_CONNECT_HELPER") {
	case "1":
		helperGateway()
		return
	case "barrier":
		helperBarrierServer()
		return
	}
	os.Exit(m.Run())
}

// helperGateway opens one MCP connection whose server starts a grandchild
// (sleep, marked by its argument), calls a tool, says "ready" and waits to
// be killed.
func helperGateway() {
	node, entry, marker := os.Getenv("HELPER_NODE"), os.Getenv("HELPER_ENTRY"), os.Getenv("HELPER_MARKER")
	script := fmt.Sprintf("sleep %s & exec %s %s stdio", marker, node, entry)
	m := connect.New(map[string]config.Connection{"ev": {Kind: "mcp", Command: "/bin/sh", Args: []string{"-c", script}}}, &connect.Options{Logger: quiet()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := m.Runners()["mcp"].Run(ctx, config.Executor{Kind: "mcp", Connection: "ev", Tool: "echo"},
		workflow.Scope{Arguments: map[string]any{"message": "x"}}); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Printf("ready %d\n", m.ChildPID("ev"))
	select {}
}

// alive lists the live (not zombie) processes whose command line holds s.
func alive(t *testing.T, s string) []string {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, d := range dirs {
		raw, err := os.ReadFile(filepath.Join(d, "cmdline"))
		cmdline := strings.ReplaceAll(string(raw), "\x00", " ")
		if err != nil || !strings.Contains(cmdline, s) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			continue
		}
		out = append(out, filepath.Base(d)+": "+cmdline)
	}
	return out
}

// TestSIGKILLLeavesNoChild: when the gateway is killed with SIGKILL, its
// MCP child and the child's own children die too.
func TestSIGKILLLeavesNoChild(t *testing.T) {
	if !connect.PIDNamespaces() {
		t.Skip("this machine gives the gateway no PID namespace (not root, no user namespaces): a grandchild's death on SIGKILL is not guaranteed here, only the child's (parent-death signal)")
	}
	node, args := connecttest.Everything(t)
	b := make([]byte, 4)
	rand.Read(b)
	// sleep 3xxx.yyy: a valid duration unique enough to find the process.
	marker := fmt.Sprintf("%d.%d", 3000+int(b[0])%1000, 100+int(b[1])%900)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PRAXA_CONNECT_HELPER=1", "HELPER_NODE="+node, "HELPER_ENTRY="+args[0], "HELPER_MARKER="+marker)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	t.Cleanup(func() {
		for _, p := range alive(t, "sleep "+marker) {
			var pid int
			fmt.Sscanf(p, "%d:", &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("helper gateway: %q %v", line, err)
	}
	var childPID int
	fmt.Sscanf(line, "ready %d", &childPID)
	if len(alive(t, "sleep "+marker)) == 0 {
		t.Fatal("the grandchild is not running: the test proves nothing")
	}
	if err := syscall.Kill(childPID, 0); err != nil {
		t.Fatalf("the MCP child %d is not running: %v", childPID, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var left []string
	if !gatewaytest.Poll(10*time.Second, func() bool {
		left = alive(t, "sleep "+marker)
		for _, p := range alive(t, args[0]) {
			if strings.HasPrefix(p, fmt.Sprint(childPID)+":") {
				left = append(left, p)
			}
		}
		return len(left) == 0
	}) {
		t.Fatalf("processes outlived the SIGKILLed gateway (pid namespaces available: %v): %v", pidnsAvailable(), left)
	}
}

func pidnsAvailable() bool { return connect.PIDNamespaces() }
