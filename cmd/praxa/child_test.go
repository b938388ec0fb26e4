package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// This file runs the built binary as child processes: `praxa serve --dev`
// on a free port, `praxa token`, and whatever a test starts itself. Every
// child gets an explicit environment, never the test's own.

// buildPraxa builds the binary into a temporary directory of t.
func buildPraxa(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the binary: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "praxa")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// childEnv is the whole environment of a child: a PATH and the given
// variables, nothing inherited.
func childEnv(vars ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH")}, vars...)
}

var listeningRE = regexp.MustCompile(`praxa: listening on (\S+)`)

// devServe is one running `praxa serve --dev`.
type devServe struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{} // closed once the process exited and stderr is drained
	mu   sync.Mutex
	log  bytes.Buffer
}

func (s *devServe) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// startDevServe runs `praxa serve --dev --addr 127.0.0.1:0` on dataDir, with
// further flags, until it prints its address; the child is stopped when t
// ends.
func startDevServe(t *testing.T, bin, dataDir string, flags ...string) *devServe {
	t.Helper()
	return startServe(t, bin, append([]string{"--dev", "--data-dir", dataDir}, flags...)...)
}

// startServe runs `praxa serve --addr 127.0.0.1:0` with flags until it
// prints its address; the child is stopped when t ends.
func startServe(t *testing.T, bin string, flags ...string) *devServe {
	t.Helper()
	return startServeEnv(t, bin, nil, flags...)
}

// startServeEnv is startServe with the variables env added to the child's
// environment.
func startServeEnv(t *testing.T, bin string, env []string, flags ...string) *devServe {
	t.Helper()
	s := &devServe{done: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)...)
	s.cmd.Dir = t.TempDir() // no ./praxec.yaml: the embedded example configuration
	s.cmd.Env = childEnv(env...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := watchServe(s.cmd, stderr, s.done, func(line string) {
		s.mu.Lock()
		if s.log.Len() < 1<<20 {
			s.log.WriteString(line + "\n")
		}
		s.mu.Unlock()
	})
	t.Cleanup(func() {
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Errorf("praxa serve did not stop within 30s; killing it")
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case s.url = <-urlc:
	case <-s.done:
		t.Fatalf("praxa serve exited before listening:\n%s", s.stderr())
	case <-time.After(60 * time.Second):
		t.Fatalf("praxa serve printed no address within 60s:\n%s", s.stderr())
	}
	return s
}

// devGateway builds praxa, runs `praxa serve --dev` on a new data
// directory (which creates the dev issuer there) and mints a token from
// it: the binary, the data directory, the server and the token.
func devGateway(t *testing.T) (bin, dir string, gw *devServe, tok string) {
	t.Helper()
	bin, dir = buildPraxa(t), t.TempDir()
	gw = startDevServe(t, bin, dir)
	return bin, dir, gw, mintToken(t, bin, dir)
}

// needNPM skips t unless PRAXA_NODE_TESTS is set (CI sets it) and npm is
// on PATH, saying what the test would do; it returns npm's path.
func needNPM(t *testing.T, what string) string {
	t.Helper()
	if os.Getenv("PRAXA_NODE_TESTS") == "" {
		t.Skipf("set PRAXA_NODE_TESTS=1 to %s (needs npm)", what)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm on PATH")
	}
	return npm
}

// mintToken runs `praxa token --data-dir dataDir` with extra flags.
func mintToken(t *testing.T, bin, dataDir string, flags ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{"token", "--data-dir", dataDir}, flags...)...)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("praxa token: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// runChild runs bin with args and env to completion (at most a minute)
// and returns its exit code and output.
func runChild(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	cmd.Stdin = strings.NewReader("") // an MCP server that starts anyway sees EOF at once
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not end within a minute", bin, args)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return code, out.String(), errOut.String()
}

// must fails t on err.
func must(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

// storedTrace reads at most limit events of tenant's trace from the
// store in dataDir, a handle of its own beside a running gateway's.
func storedTrace(t *testing.T, dataDir, tenant, trace string, limit int) []store.Event {
	t.Helper()
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, dataPath(dataDir), nil)
	must(t, err, "open the store")
	defer st.Close()
	var events []store.Event
	err = st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		events, err = tx.TraceEvents(ctx, tenant, trace, limit)
		return err
	})
	must(t, err, "read the trace")
	return events
}

// watchServe reads the standard error of cmd, a praxa serve child, for
// the life of the process (the server logs every request and would block
// on a full pipe), hands each line to keep, and sends the address of the
// first listening line on the channel it returns; done is closed once
// the process has exited.
func watchServe(cmd *exec.Cmd, stderr io.Reader, done chan struct{}, keep func(line string)) <-chan string {
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			keep(line)
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				select {
				case urlc <- m[1]:
				default:
				}
			}
		}
		cmd.Wait()
		close(done)
	}()
	return urlc
}
