package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
	"github.com/praxa/praxa/gateway/workflow"
)

// maxOutput bounds what is kept of a command's stdout and of its stderr.
const maxOutput = 1 << 20

// cliConn is one cli connection.
type cliConn struct {
	name   string
	cfg    config.Connection
	log    *slog.Logger
	getenv func(string) string
	// bwrap is the sandbox program of a confined connection.
	bwrap string
	// refused says why the connection cannot run here ("" when it can).
	refused string
}

func newCLIConn(name string, c config.Connection, o *Options) *cliConn {
	cc := &cliConn{name: name, cfg: c, log: o.Logger.With("connection", name), getenv: o.Getenv}
	if c.Confine != nil {
		p, err := exec.LookPath(o.Bwrap)
		if err != nil {
			cc.refused = fmt.Sprintf("the connection demands confinement (confine.writable) but bubblewrap (%s) is not installed on this machine; it is refused rather than run unconfined", o.Bwrap)
			cc.log.Error("cli connection refused", "reason", cc.refused)
		}
		cc.bwrap = p
	}
	return cc
}

// cliRunner runs cli executors.
type cliRunner struct{ m *Manager }

// Run runs the connection's command with the executor's arguments, each
// "$." argument resolved against the scope (a list gives several
// arguments, an object its JSON, a missing value an empty string). With no
// shell the arguments are argv; with shell: true the command line (each
// resolved argument quoted) runs through /bin/sh -c. The output is
// {exitCode, stdout, stderr?, json?}: json is stdout parsed when it is
// JSON. A non-zero exit fails the call unless treatNonZeroAsFailure is
// false; a call that runs out of time is killed, with its process group,
// and its outcome is unknown.
func (r cliRunner) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	c, ok := r.m.cli[x.Connection]
	if !ok {
		return nil, noConnection(config.ExecutorCLI, x.Connection)
	}
	if c.refused != "" {
		return nil, unavailable(config.ExecutorCLI, c.name, "%s", c.refused)
	}
	checked, perr := c.checkPaths(x, scope)
	if perr != nil {
		return nil, perr
	}
	var argv []string
	var line strings.Builder
	line.WriteString(c.cfg.Command)
	for _, a := range x.Args {
		if !strings.HasPrefix(a, "$.") {
			argv = append(argv, a)
			line.WriteString(" " + a)
			continue
		}
		values, isPath := checked[a]
		if !isPath || len(values) == 0 {
			values = argValues(workflow.Resolve(a, scope))
		}
		for _, v := range values {
			if strings.HasPrefix(v, "-") && !slices.Contains(x.OptionArguments, a) {
				return nil, c.optionRefused(a, v)
			}
			argv = append(argv, v)
			line.WriteString(" " + config.ShellQuote(v))
		}
	}
	var sb *sandbox
	if c.cfg.Confine != nil {
		var xe *workflow.ExecutorError
		if sb, xe = c.sandbox(); xe != nil {
			return nil, xe
		}
		defer sb.release()
	}
	env, missing := childEnv(c.cfg.Env, c.getenv, sb.environment())
	if len(missing) > 0 {
		c.log.Warn("cli connection env refers to unset environment variables", "variables", missing)
	}
	var path string
	var args []string
	if c.cfg.Shell {
		path, args = "/bin/sh", []string{"-c", line.String()}
	} else {
		p, err := lookPath(c.cfg.Command, env)
		if err != nil {
			return nil, unavailable(config.ExecutorCLI, c.name, "%s", execErrorMessage(c.cfg.Command, err))
		}
		path, args = p, argv
	}
	if sb != nil {
		args = append(sb.wrap(path), args...)
		path = c.bwrap
	}
	ctx, cancel := context.WithTimeout(ctx, timeout(x))
	defer cancel()
	cmd := exec.Command(path, args...)
	cmd.Env = env
	// While telemetry.Tracing, the command is a client span, whose context
	// TRACEPARENT carries.
	if tracing.Recording(ctx) {
		_, span := tracing.StartChild(ctx, "exec "+c.name, trace.SpanKindClient,
			tracing.KeyConnection.String(tracing.Bounded(c.name)), attribute.String("process.executable.name", filepath.Base(path)))
		if span != nil {
			ctx = workflow.WithTraceparent(ctx, tracing.Traceparent(span.SpanContext()))
			defer span.End()
		}
	}
	if tp := workflow.Traceparent(ctx); tp != "" {
		cmd.Env = append(slices.Clip(env), "TRACEPARENT="+tp)
	}
	cmd.Dir = c.cfg.WorkingDirectory
	prepare(cmd)
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxOutput, maxOutput
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := spawn(cmd); err != nil {
		return nil, unavailable(config.ExecutorCLI, c.name, "%s", execErrorMessage(c.cfg.Command, err))
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
		// The command is done; anything it left running in its group goes.
		killGroup(cmd.Process.Pid)
	case <-ctx.Done():
		killGroup(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		<-waited
		return nil, &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: config.ExecutorCLI, Connection: c.name,
			Message: fmt.Sprintf("%s did not finish in time and was killed (%v); what it did before is unknown", c.cfg.Command, context.Cause(ctx)),
			Output:  map[string]any{"stdout": stdout.String(), "stderr": stderr.String()}}
	}
	code := 0
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	default:
		return nil, &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: config.ExecutorCLI, Connection: c.name,
			Message: fmt.Sprintf("%s: %v", c.cfg.Command, err)}
	}
	out := map[string]any{"exitCode": code, "stdout": stdout.String()}
	if stderr.Len() > 0 {
		out["stderr"] = stderr.String()
	}
	if v, ok := parseJSON(stdout.Bytes()); ok {
		out["json"] = v
	}
	if stdout.truncated || stderr.truncated {
		out["truncated"] = true
	}
	failOnNonZero := x.TreatNonZeroAsFailure == nil || *x.TreatNonZeroAsFailure
	if code != 0 && failOnNonZero {
		msg := fmt.Sprintf("%s exited with status %d", c.cfg.Command, code)
		if s := strings.TrimSpace(stderr.String()); s != "" {
			msg += ": " + clip(lastLine(s), 300)
		}
		return nil, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorCLI, Connection: c.name, Message: msg, Output: out}
	}
	return out, nil
}

// optionRefused refuses a value from the scope, at the argument a, that
// starts with '-': the command would read the caller's data as an option
// (cat --help, cp --target-directory=/elsewhere).
func (c *cliConn) optionRefused(a, v string) *contracts.Error {
	return &contracts.Error{Code: contracts.CodeInvalidParams,
		Message: fmt.Sprintf("cli connection %s: the value %q of %s starts with '-', which %s would read as an option; the command was not run", c.name, clip(v, 64), a, c.cfg.Command),
		Hint:    "Send a value that does not start with '-'. A caller's value is data, never an option of the command; an operator who means it to be one lists the argument under optionArguments."}
}

// argValues turns a resolved value into command line arguments.
func argValues(v any) []string {
	switch v := v.(type) {
	case nil:
		return []string{""}
	case string:
		return []string{v}
	case bool:
		return []string{strconv.FormatBool(v)}
	case json.Number:
		return []string{v.String()}
	case float64:
		return []string{strconv.FormatFloat(v, 'f', -1, 64)}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, argValues(x)...)
		}
		return out
	default:
		b, _ := json.Marshal(v)
		return []string{string(b)}
	}
}

// parseJSON parses b when it holds one JSON object or array and nothing
// else but white space. (The decoder's More is not that check: it answers
// false before a stray ']' or '}', which let "[]]0" through.)
func parseJSON(b []byte) (any, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.InputOffset() != int64(len(b)) {
		return nil, false
	}
	return v, true
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max       int
	truncated bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room < len(p) {
		b.truncated = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

var _ = time.Second
