//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/connect/connecttest"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/issuer"
)

// This file runs the commands the documentation shows, as a reader would
// type them: every ```sh block of README.md and docs/*.md, page by page,
// in one bash session per page (so a page's variables carry from block to
// block), against the built binary and a real `praxa serve`; and every MCP
// host configuration of docs/mcp-hosts.md, through a real MCP client.
//
// What the test changes in a command, and nothing else:
//   - `go run ./cmd/praxa` is the binary built once (buildPraxa);
//   - 127.0.0.1:8080 is a free port of this machine, and /tmp/ a directory
//     of the test;
//   - `praxa serve ...` starts the server in the background (as "in
//     another terminal" does), on that port, and waits for /readyz;
//   - curl fails the page when it answers other than 2xx, or other than
//     NNN after a comment saying the command "answers NNN";
//   - a command that ends in a comment "# → TEXT" must print TEXT.
// A command that cannot run here is listed in docNotRun or docPageNotRun,
// with the test that runs it instead or the reason; any other command runs.

// docNotRun lists commands, by their first words, that no page runs here.
var docNotRun = []struct{ prefix, why string }{
	{"go test -race ./...", ".ci/run's last step runs it (and this test within it)"},
}

// docPageNotRun lists pages whose shell commands this test does not run.
var docPageNotRun = map[string]string{
	"docs/deploy.md": "its commands need a registry, a PostgreSQL server and a Kubernetes cluster: " +
		"tools/chartcheck (TestDeployDoc) runs its helm commands as helm template, .ci/run builds and runs the image " +
		"(deploy/image/build.sh, smoke.sh), TestBackupRestoreDrill runs praxa backup and restore, and gateway/e2e's " +
		"replicas_pg_test runs two gateways on one PostgreSQL database",
	"docs/conformance.md": ".ci/run's conformance step runs praxa conformance against praxa serve --dev; " +
		"the page's other command needs another gateway",
}

// docPages returns the repository's root and its documentation pages:
// README.md, then docs/*.md.
func docPages(t *testing.T) (root string, pages []string) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages, err = filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return root, append([]string{filepath.Join(root, "README.md")}, pages...)
}

// TestDocCommands runs the documentation's commands (see above).
func TestDocCommands(t *testing.T) {
	root, pages := docPages(t)
	type page struct {
		name   string
		blocks []docBlock
	}
	var run []page
	for _, p := range pages {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, p)
		var blocks []docBlock
		for _, b := range fencedBlocks(string(raw)) {
			if b.lang == "sh" || (b.lang == "json" && hostConfig(b.text) != nil) {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if why, ok := docPageNotRun[name]; ok {
			t.Logf("%s: not run here: %s", name, why)
			continue
		}
		run = append(run, page{name, blocks})
	}
	for name := range docPageNotRun {
		if !slices.ContainsFunc(pages, func(p string) bool { return strings.HasSuffix(p, "/"+name) }) {
			t.Errorf("docPageNotRun names %s, which is not a page any more", name)
		}
	}
	for _, need := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(need); err != nil {
			t.Skipf("the pages' commands need %s: %v", need, err)
		}
	}
	bin := buildPraxa(t)
	for _, p := range run {
		t.Run(p.name, func(t *testing.T) {
			var sh, hosts []docBlock
			for _, b := range p.blocks {
				if b.lang == "sh" {
					sh = append(sh, b)
				} else {
					hosts = append(hosts, b)
				}
			}
			if len(sh) > 0 {
				runDocShell(t, bin, root, p.name, sh)
			}
			if len(hosts) > 0 {
				runHostConfigs(t, bin, hosts)
			}
		})
	}
}

// docBlock is one fenced code block of a page, dedented.
type docBlock struct {
	lang string
	line int // of the opening fence, from 1
	text string
}

// fencedBlocks returns the fenced code blocks of a Markdown page, with the
// indentation of their fence (a block inside a list item) removed.
func fencedBlocks(doc string) []docBlock {
	var blocks []docBlock
	var cur *docBlock
	var indent string
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			indent = line[:len(line)-len(trimmed)]
			lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), " ")
			cur = &docBlock{lang: lang, line: n}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += strings.TrimPrefix(line, indent) + "\n"
		}
	}
	return blocks
}

// answersRE finds the status a comment says the next command answers.
var answersRE = regexp.MustCompile(`\banswers (\d{3})\b`)

// serveRE finds `praxa serve` as the command of a line, after variable
// assignments.
var serveRE = regexp.MustCompile(`^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)praxa serve\b(.*?)(\s*&)?$`)

// docScript turns a page's shell blocks into one bash script (see the
// comment at the top of this file); it returns the commands it leaves out.
func docScript(blocks []docBlock, port, tmp string) (script string, skipped []string) {
	var b strings.Builder
	for _, blk := range blocks {
		fmt.Fprintf(&b, "# block at line %d\n", blk.line)
		text := strings.ReplaceAll(blk.text, "go run ./cmd/praxa", "praxa")
		text = strings.ReplaceAll(text, "127.0.0.1:8080", "127.0.0.1:"+port)
		text = strings.ReplaceAll(text, "/tmp/", tmp+"/")
		var st shellState
		expect, skipping := "", false
		for line := range strings.Lines(text) {
			line = strings.TrimSuffix(line, "\n")
			starts := st.atCommand()
			st.feed(line)
			if !starts {
				if !skipping {
					b.WriteString(printsCheck(line, st) + "\n")
				}
				continue
			}
			skipping = false
			trimmed := strings.TrimSpace(line)
			switch {
			case trimmed == "":
				b.WriteString("\n")
				continue
			case strings.HasPrefix(trimmed, "#"):
				if m := answersRE.FindStringSubmatch(trimmed); m != nil {
					expect = m[1]
				}
				b.WriteString(line + "\n")
				continue
			}
			for _, n := range docNotRun {
				if strings.HasPrefix(trimmed, n.prefix) {
					skipped = append(skipped, trimmed+": "+n.why)
					skipping = true
				}
			}
			if skipping {
				continue
			}
			if expect != "" {
				b.WriteString("praxa_doc_expect " + expect + "\n")
				expect = ""
			}
			if m := serveRE.FindStringSubmatch(trimmed); m != nil && !st.continues() {
				line = m[1] + "praxa_doc_serve" + m[2]
			}
			b.WriteString(printsCheck(line, st) + "\n")
		}
	}
	return b.String(), skipped
}

// printsCheck pipes the last line of a command that ends in "# → TEXT"
// into praxa_doc_prints, which checks that it printed TEXT; st has read the
// line.
func printsCheck(line string, st shellState) string {
	if st.continues() || st.comment < 0 {
		return line
	}
	text, ok := strings.CutPrefix(line[st.comment:], "# → ")
	if !ok {
		return line
	}
	return strings.TrimRight(line[:st.comment], " ") + " | praxa_doc_prints '" + strings.ReplaceAll(text, "'", `'\''`) + "'"
}

// shellState follows quotes and backslash continuations from line to line,
// enough to tell where a command starts; comment is where the last line's
// comment starts, or -1.
type shellState struct {
	single, double, cont bool
	comment              int
}

func (s *shellState) atCommand() bool { return !s.single && !s.double && !s.cont }
func (s *shellState) continues() bool { return s.single || s.double || s.cont }

func (s *shellState) feed(line string) {
	s.cont, s.comment = false, -1
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case s.single:
			s.single = c != '\''
		case s.double:
			if c == '\\' {
				i++
			} else if c == '"' {
				s.double = false
			}
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			s.comment = i
			return
		case c == '\\':
			if i == len(line)-1 {
				s.cont = true
			}
			i++
		case c == '\'':
			s.single = true
		case c == '"':
			s.double = true
		}
	}
}

// docPrelude defines what docScript's rewritten commands call.
const docPrelude = `set -euo pipefail
shopt -s inherit_errexit
PS4='+ doc: '
praxa_doc_expect() { printf '%s' "$1" >"$PRAXA_DOC_WORK/expect"; }
# The functions below trace nothing of their own (local -: set +x until they return).
curl() {
	local -
	set +x
	local want=2xx out code
	if [[ -f $PRAXA_DOC_WORK/expect ]]; then
		want=$(<"$PRAXA_DOC_WORK/expect")
		rm -f "$PRAXA_DOC_WORK/expect"
	fi
	out=$(command curl --max-time 120 -w '\n%{http_code}' "$@") || {
		echo "praxa-doc: curl $* failed" >&2
		return 1
	}
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	printf '%s\n' "$out"
	if [[ $want == 2xx && $code != 2?? ]] || [[ $want != 2xx && $code != "$want" ]]; then
		echo "praxa-doc: curl answered $code where the page expects $want: curl $*" >&2
		return 1
	fi
}
praxa_doc_prints() {
	local -
	set +x
	local out
	out=$(cat)
	printf '%s\n' "$out"
	if [[ $out != "$1" ]]; then
		echo "praxa-doc: printed [$out] where the page says [$1]" >&2
		return 1
	fi
}
praxa_doc_stop() {
	local -
	set +x
	if [[ -n ${PRAXA_DOC_PID:-} ]]; then
		kill -INT "$PRAXA_DOC_PID" 2>/dev/null || true
		wait "$PRAXA_DOC_PID" 2>/dev/null || true
		PRAXA_DOC_PID=
	fi
}
praxa_doc_serve() {
	local -
	set +x
	praxa_doc_stop
	echo "praxa-doc: praxa serve $*" >>"$PRAXA_DOC_WORK/serve.log"
	praxa serve "$@" --addr "127.0.0.1:$PRAXA_DOC_PORT" >>"$PRAXA_DOC_WORK/serve.log" 2>&1 &
	PRAXA_DOC_PID=$!
	local i
	for ((i = 0; i < 1200; i++)); do
		if command curl -fs -o /dev/null "http://127.0.0.1:$PRAXA_DOC_PORT/readyz"; then
			return 0
		fi
		if ! kill -0 "$PRAXA_DOC_PID" 2>/dev/null; then
			echo "praxa-doc: praxa serve $* exited" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "praxa-doc: praxa serve $* is not ready after 120s" >&2
	return 1
}
trap praxa_doc_stop EXIT
set -x
`

// runDocShell runs a page's shell blocks in one bash session.
func runDocShell(t *testing.T, bin, root, name string, blocks []docBlock) {
	work := t.TempDir()
	dirs := map[string]string{}
	for _, d := range []string{"home", "tmp", "gobin", "shims"} {
		dirs[d] = filepath.Join(work, d)
		must(t, os.Mkdir(dirs[d], 0o755), "mkdir")
	}
	port := freePort(t)
	script, skipped := docScript(blocks, port, dirs["tmp"])
	for _, s := range skipped {
		t.Logf("not run here: %s", s)
	}
	if strings.Contains(script, "examples/connections.yaml") {
		npxShim(t, dirs["shims"])
	}
	path := filepath.Join(work, "page.sh")
	must(t, os.WriteFile(path, []byte(docPrelude+script), 0o644), "write the script")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", path)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(goEnv(t),
		"PATH="+strings.Join([]string{dirs["gobin"], filepath.Dir(bin), dirs["shims"], os.Getenv("PATH")}, string(os.PathListSeparator)),
		"HOME="+dirs["home"], "TMPDIR="+dirs["tmp"], "GOBIN="+dirs["gobin"], "LANG=C.UTF-8",
		"PRAXA_DOC_WORK="+work, "PRAXA_DOC_PORT="+port)
	out, err := cmd.CombinedOutput()
	// Whatever the script left running (a server it started) ends with it.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		serveLog, _ := os.ReadFile(filepath.Join(work, "serve.log"))
		t.Fatalf("%s: %v\n%s\n--- the servers' log (last lines):\n%s", name, err, tail(string(out), 120), tail(string(serveLog), 40))
	}
	t.Logf("%s: ran %d blocks:\n%s", name, len(blocks), commandsRun(string(out)))
}

// jwtRE matches a JSON Web Token, which commandsRun shows as TOKEN.
var jwtRE = regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)

// commandsRun lists the commands a page's script traced (set -x), each
// cut to one line.
func commandsRun(out string) string {
	var cmds []string
	for line := range strings.Lines(out) {
		c, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "+ doc: ")
		if !ok || c == "local -" || c == "set +x" || strings.HasPrefix(c, "printf ") {
			continue
		}
		c = jwtRE.ReplaceAllString(c, "TOKEN")
		if len(c) > 160 {
			c = c[:160] + "..."
		}
		cmds = append(cmds, "  "+c)
	}
	return strings.Join(cmds, "\n")
}

// goEnv is what the go command needs in a child whose HOME is elsewhere:
// the build and module caches of this one.
func goEnv(t *testing.T) []string {
	out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	var vars map[string]string
	must(t, json.Unmarshal(out, &vars), "go env")
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// npxShim puts an npx on PATH that runs the MCP server
// examples/connections.yaml fetches with npx from the local install the
// connection tests use, refusing any other package.
func npxShim(t *testing.T, dir string) {
	node, args := connecttest.Everything(t)
	want := connecttest.EverythingPackage + "@" + connecttest.EverythingVersion
	shim := fmt.Sprintf(`#!/bin/sh
[ "$1" = -y ] && [ "$2" = %q ] || { echo "npx shim: only %s" >&2; exit 1; }
shift 2
exec %q %q "$@"
`, want, want, node, args[0])
	must(t, os.WriteFile(filepath.Join(dir, "npx"), []byte(shim), 0o755), "write the npx shim")
}

// freePort returns a port of 127.0.0.1 nothing listens on now.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// hostServer is one server of an MCP host's configuration: a command it
// starts, or a URL it connects to.
type hostServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// hostConfig decodes an MCP host's configuration (Claude Desktop's and
// Cursor's mcpServers, VS Code's servers), or returns nil.
func hostConfig(text string) map[string]hostServer {
	var c struct {
		MCPServers map[string]hostServer `json:"mcpServers"`
		Servers    map[string]hostServer `json:"servers"`
	}
	if json.Unmarshal([]byte(text), &c) != nil {
		return nil
	}
	if c.MCPServers != nil {
		return c.MCPServers
	}
	return c.Servers
}

// placeholderRE finds what a reader replaces in a host configuration: a
// <token from ...> or a VS Code ${input:...}.
var placeholderRE = regexp.MustCompile(`<[^>]*>|\$\{input:[^}]*\}`)

// runHostConfigs starts every server of the pages' host configurations
// against a real `praxa serve --dev`, with a real token in place of the
// placeholders, and reads the praxec home through each.
//
// A server that obtains its own token by the client credentials grant
// (--client-id) runs against a second gateway, trusting a real issuer
// whose token endpoint knows that client with the token as its secret;
// one that runs a --token-command finds the praxa under test on PATH.
func runHostConfigs(t *testing.T, bin string, blocks []docBlock) {
	dataDir := t.TempDir()
	srv := startDevServe(t, bin, dataDir)
	tok := mintToken(t, bin, dataDir)
	// The client credentials gateway, started before the subtests when a
	// server of the page names a client.
	ccURL := ""
	for _, b := range blocks {
		for _, s := range hostConfig(b.text) {
			if i := slices.Index(s.Args, "--client-id"); i >= 0 && i+1 < len(s.Args) && ccURL == "" {
				ccURL = clientCredentialsGateway(t, bin, s.Args[i+1], tok)
			}
		}
	}
	pathEnv := "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	fill := func(s, gateway string) string {
		s = placeholderRE.ReplaceAllString(s, tok)
		s = strings.ReplaceAll(s, "http://127.0.0.1:8080", srv.url)
		s = strings.ReplaceAll(s, "https://praxa.example.com", gateway)
		return strings.ReplaceAll(s, "/home/me/.local/share/praxa", dataDir)
	}
	for _, b := range blocks {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range hostConfig(b.text) {
				if !yield(n) {
					return
				}
			}
		})
		for _, name := range names {
			s := hostConfig(b.text)[name]
			t.Run(fmt.Sprintf("line %d %s", b.line, name), func(t *testing.T) {
				var cs *mcp.ClientSession
				switch {
				case s.Command != "":
					if s.Command != "praxa" {
						t.Fatalf("the host runs %q, not praxa", s.Command)
					}
					gateway := srv.url
					if slices.Contains(s.Args, "--client-id") {
						gateway = ccURL
					}
					env := []string{pathEnv}
					for k, v := range s.Env {
						env = append(env, k+"="+fill(v, gateway))
					}
					var args []string
					for _, a := range s.Args {
						args = append(args, fill(a, gateway))
					}
					cs, _ = connectStdio(t, bin, env, args...)
				case s.URL != "":
					h := map[string]string{}
					for k, v := range s.Headers {
						h[k] = fill(v, srv.url)
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					var err error
					cs, err = mcp.NewClient(&mcp.Implementation{Name: "praxa-doc-host", Version: "0"}, nil).Connect(ctx,
						&mcp.StreamableClientTransport{Endpoint: fill(s.URL, srv.url), HTTPClient: &http.Client{Transport: headers(h)}, DisableStandaloneSSE: true}, nil)
					must(t, err, "connect to %s", fill(s.URL, srv.url))
					t.Cleanup(func() { cs.Close() })
				default:
					t.Fatalf("server %s has neither a command nor a url", name)
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{}})
				must(t, err, "praxec.query")
				if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(text, `"links"`) {
					t.Errorf("praxec.query through %s: %s", name, text)
				}
			})
		}
	}
}

// clientCredentialsGateway starts a gateway trusting a real issuer whose
// token endpoint answers the client credentials grant of clientID, with
// secret as its secret, and returns the gateway's URL.
func clientCredentialsGateway(t *testing.T, bin, clientID, secret string) string {
	is := gatewaytest.NewIssuer(t, issuer.Options{}).Issuer
	const resource = "https://praxa.test/"
	is.EnableTokenGrants(issuer.TokenOptions{Audience: resource, Clients: []issuer.Client{
		{ID: clientID, Secret: secret, Account: issuer.Account{Tenant: "dev", Scopes: allScopes()}}}})
	cfg := filepath.Join(t.TempDir(), "praxec.yaml")
	must(t, os.WriteFile(cfg, []byte("auth:\n  resource: "+resource+"\n  issuers:\n    - issuer: "+is.Issuer()+"\n"), 0o600), "config")
	return startServe(t, bin, "--data-dir", t.TempDir(), "--config", cfg).url
}

// headers sends the given headers with every request.
type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestDocLinks: every relative link of README.md and docs/*.md names a file
// of the repository and, with a fragment, a heading of that page.
func TestDocLinks(t *testing.T) {
	root, pages := docPages(t)
	pages = append(pages, filepath.Join(root, "BENCHMARKS.md"))
	headings := map[string]map[string]bool{}
	anchors := func(path string) map[string]bool {
		if h, ok := headings[path]; ok {
			return h
		}
		h := map[string]bool{}
		raw, err := os.ReadFile(path)
		if err == nil {
			for _, line := range strings.Split(string(raw), "\n") {
				if title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
					h[headingAnchor(title)] = true
				}
			}
		}
		headings[path] = h
		return h
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, page)
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links %s: %v", name, target, err)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchors(path)[frag] {
				t.Errorf("%s links %s: no heading of %s has the anchor #%s", name, target, filepath.Base(path), frag)
			}
		}
	}
}

// headingAnchor is the fragment GitHub gives a heading: lower case, spaces
// as hyphens, punctuation other than - and _ dropped.
func headingAnchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}
