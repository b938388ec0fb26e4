package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
)

// TestLexiconCommand: a gateway without lexicon writes refuses a define
// with the seed's LEXICON_WRITES_DISABLED, its text and links verbatim, and
// names the real command in operatorCommand on REST and MCP alike; praxa
// lexicon define and alias, run on the gateway's SQLite file with the
// configuration it loads, write the overlay the running gateway then
// resolves, each audited as lexicon.defined by the operator; praxa lexicon
// list shows the merged lexicon.
func TestLexiconCommand(t *testing.T) {
	app, dataDir, serveLog := startDevInProcess(t)
	tok := devToken(t, serveLog)
	ctx := context.Background()
	query := func(body map[string]any) map[string]any {
		t.Helper()
		status, b := post(t, app.url+"/v8/praxec/query", tok, body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || status != http.StatusOK {
			t.Fatalf("praxec.query %v: %d %s", body, status, b)
		}
		return m
	}
	lookup := func(term string) map[string]any {
		t.Helper()
		entry, _ := query(map[string]any{"subject": "lexicon:" + term})["entry"].(map[string]any)
		return entry
	}

	// The refusal: the seed's text, and the real command beside it.
	define := map[string]any{"subject": "lexicon:guardrail", "definition": map[string]any{"definition_short": "x"}}
	status, b := post(t, app.url+"/v8/praxec/command", tok, define)
	var p map[string]any
	_ = json.Unmarshal(b, &p)
	if status != http.StatusForbidden || p["code"] != string(contracts.CodeLexiconWritesDisabled) ||
		p["hint"] != "Operators add lexicon terms via the `praxec lexicon define` CLI subcommand." ||
		p["operatorCommand"] != catalogue.OperatorDefineCommand || !strings.HasPrefix(catalogue.OperatorDefineCommand, "praxa lexicon define ") {
		t.Fatalf("define on a gateway without lexicon writes: %d %s", status, b)
	}
	cs := gatewaytest.MCPSession(t, app.url+"/mcp", tok)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolPraxecCommand, Arguments: define})
	must(t, err, "call praxec.command")
	var envelope contracts.ErrorEnvelope
	if !res.IsError || json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &envelope) != nil ||
		envelope.Error.Code != contracts.CodeLexiconWritesDisabled || envelope.Error.OperatorCommand != catalogue.OperatorDefineCommand ||
		len(envelope.Links) != 2 || envelope.Links[0].Args["command"] != "praxec lexicon define <term> <definition>" {
		t.Fatalf("define over MCP: %+v", res.Content)
	}
	if lookup("guardrail") != nil {
		t.Fatal("the refused define wrote the term")
	}

	// Usage mistakes change nothing.
	for _, args := range [][]string{
		{"lexicon"},
		{"lexicon", "forget", "guardrail"},
		{"lexicon", "define", "guardrail", "--data-dir", dataDir, "--dev"},
		{"lexicon", "define", "guardrail", "A check.", "--data-dir", dataDir, "--dev"},
		{"lexicon", "alias", "guardrail", "--tenant", devTenant, "--data-dir", dataDir, "--dev"},
	} {
		if code, _, stderr := runCommand(t, args...); code != 2 || !strings.Contains(stderr, "Usage: praxa lexicon") {
			t.Errorf("%v: %d %s", args, code, stderr)
		}
	}

	// The operator defines the term on the gateway's store and
	// configuration: the running gateway answers it at once.
	code, stdout, stderr := runCommand(t, "lexicon", "define", "guardrail", "A check that stops a move.", "--tenant", devTenant,
		"--context", "gateway", "--refs", "guard rail, guard", "--data-dir", dataDir, "--dev")
	if code != 0 || !strings.HasPrefix(stdout, "guardrail defined") {
		t.Fatalf("lexicon define: %d\n%s%s", code, stdout, stderr)
	}
	for _, name := range []string{"guardrail", "Guard Rail", "guard"} {
		if e := lookup(name); e == nil || e["definition_short"] != "A check that stops a move." || e["bounded_context"] != "gateway" {
			t.Errorf("lookup %q after the define: %v", name, e)
		}
	}
	hits := query(map[string]any{"query": "guardrail", "kind": "lexicon"})["hits"].([]any)
	if len(hits) == 0 || hits[0].(map[string]any)["term"] != "guardrail" {
		t.Errorf("lexicon search after the define: %v", hits)
	}
	// Run without a token, the command acts as the operating-system
	// user: subject os:NAME, the uid recorded.
	osSubject, uid := testOSAccount(t)
	event := lexiconEvent(t, dataDir, stdout)
	if event.Subject != osSubject || event.ClientID != "praxa-cli" || event.Attributes["uid"] != uid || event.Tenant != devTenant ||
		event.Attributes["term"] != "guardrail" || event.Attributes["action"] != "define" {
		t.Errorf("the define's audit event: %+v", event)
	}

	code, stdout, stderr = runCommand(t, "lexicon", "alias", "guardrail", "safety check", "--tenant", devTenant, "--data-dir", dataDir, "--dev")
	if code != 0 || !strings.Contains(stdout, "aliases: safety check") {
		t.Fatalf("lexicon alias: %d\n%s%s", code, stdout, stderr)
	}
	if e := lookup("safety check"); e == nil || e["definition_short"] != "A check that stops a move." {
		t.Errorf("lookup of the alias: %v", e)
	}
	if event := lexiconEvent(t, dataDir, stdout); event.Subject != osSubject || event.Attributes["action"] != "aliases_add" {
		t.Errorf("the alias's audit event: %+v", event)
	}

	// The service's checks hold on the operator path: an alias naming
	// another term is refused, and nothing changes.
	code, _, stderr = runCommand(t, "lexicon", "alias", "guardrail", "evidence-pack", "--tenant", devTenant, "--data-dir", dataDir, "--dev")
	if code != 1 || !strings.Contains(stderr, "ambiguous") || !strings.Contains(stderr, "is another term") {
		t.Errorf("an alias naming another term: %d %s", code, stderr)
	}
	code, _, stderr = runCommand(t, "lexicon", "alias", "no-such-term", "x", "--tenant", devTenant, "--data-dir", dataDir, "--dev")
	if code != 1 || !strings.Contains(stderr, "no term") {
		t.Errorf("an alias of an undefined term: %d %s", code, stderr)
	}

	code, stdout, stderr = runCommand(t, "lexicon", "list", "--format", "json", "--data-dir", dataDir, "--dev")
	var listed []map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &listed) != nil {
		t.Fatalf("lexicon list: %d\n%s%s", code, stdout, stderr)
	}
	sources := map[string]any{}
	for _, row := range listed {
		sources[row["term"].(string)] = row["source"]
	}
	if sources["guardrail"] != "overlay" || sources["evidence-pack"] != "config" {
		t.Errorf("lexicon list: %s", stdout)
	}
	code, stdout, _ = runCommand(t, "lexicon", "list", "--data-dir", dataDir, "--dev")
	if code != 0 || !strings.Contains(stdout, "TERM") || !regexp.MustCompile(`guardrail\s+overlay\s+gateway\s+guard rail, guard, safety check\s+A check`).MatchString(stdout) {
		t.Errorf("lexicon list (table):\n%s", stdout)
	}

	// A command paused on an unknown subject leaves a placeholder term
	// (PENDING_DEFINITION), which lexicon list --tenant shows.
	status, b = post(t, app.url+"/v8/praxec/command", tok, map[string]any{"definitionId": "guarded_merge", "input": map[string]any{"topic": "quantum foam"}})
	if status != http.StatusOK || !strings.Contains(string(b), "SUBJECT_NEEDS_DEFINITION") {
		t.Fatalf("a start naming an unknown topic: %d %s", status, b)
	}
	code, stdout, stderr = runCommand(t, "lexicon", "list", "--tenant", devTenant, "--data-dir", dataDir, "--dev")
	if code != 0 || !regexp.MustCompile(`quantum foam\s+pending\s+PENDING_DEFINITION: 1 command\(s\) of `+devTenant).MatchString(stdout) {
		t.Errorf("lexicon list --tenant:\n%s%s", stdout, stderr)
	}
	code, stdout, _ = runCommand(t, "lexicon", "list", "--format", "json", "--tenant", devTenant, "--data-dir", dataDir, "--dev")
	if code != 0 || !strings.Contains(stdout, `"term":"quantum foam","source":"pending","state":"PENDING_DEFINITION"`) {
		t.Errorf("lexicon list --tenant --format json:\n%s", stdout)
	}
	if code, stdout, _ = runCommand(t, "lexicon", "list", "--data-dir", dataDir, "--dev"); code != 0 || strings.Contains(stdout, "quantum foam") {
		t.Errorf("lexicon list without --tenant lists a tenant's placeholder:\n%s", stdout)
	}
}

// lexiconEvent reads the one event of the audit trace a praxa lexicon
// line names from the data directory's store.
func lexiconEvent(t *testing.T, dataDir, line string) store.Event {
	t.Helper()
	m := regexp.MustCompile(`audit trace ([0-9a-f]{32})`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no audit trace in %q", line)
	}
	events := storedTrace(t, dataDir, devTenant, m[1], 10)
	if len(events) != 1 || events[0].Type != "lexicon.defined" {
		t.Fatalf("trace %s: %+v", m[1], events)
	}
	return events[0]
}

// TestLexiconHelpAndCompletion: praxa lexicon -h and each verb's -h print
// on stdout, each flag described; the completion scripts offer the verbs
// after lexicon.
func TestLexiconHelpAndCompletion(t *testing.T) {
	for _, args := range [][]string{{"lexicon", "-h"}, {"lexicon", "define", "-h"}, {"lexicon", "alias", "--help"}, {"lexicon", "list", "-h"}} {
		code, stdout, stderr := runCommand(t, args...)
		if code != 0 || !strings.Contains(stdout, "Usage: praxa lexicon") || stderr != "" {
			t.Errorf("%v: %d\nstdout %q\nstderr %q", args, code, stdout, stderr)
		}
	}
	_, define, _ := runCommand(t, "lexicon", "define", "-h")
	for _, flag := range []string{"-tenant string\n    \tthe tenant", "-context string\n    \tthe term's bounded context", "-refs", "-governance", "-config", "-store", "-data-dir"} {
		if !strings.Contains(define, "  "+flag) {
			t.Errorf("lexicon define -h does not describe %s:\n%s", flag, define)
		}
	}
	for shell, want := range map[string]string{
		"bash": `lexicon) echo "define alias list" ;;`,
		"zsh":  `lexicon) verbs=(define alias list) ;;`,
		"fish": `__fish_seen_subcommand_from lexicon; and not __fish_seen_subcommand_from define alias list" -a "define alias list"`,
	} {
		if _, stdout, _ := runCommand(t, "completion", shell); !strings.Contains(stdout, want) || !strings.Contains(stdout, " lexicon ") {
			t.Errorf("completion %s does not offer the lexicon verbs:\n%s", shell, stdout)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the script with")
	}
	_, script, _ := runCommand(t, "completion", "bash")
	probe := script + "\n" + `COMP_WORDS=(praxa lexicon a); COMP_CWORD=2; _praxa; echo "${COMPREPLY[@]}"`
	got, err := exec.Command(bash, "-c", probe).Output()
	if err != nil || strings.TrimSpace(string(got)) != "alias" {
		t.Errorf("bash completion of praxa lexicon a: %q, %v", got, err)
	}
}
