package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// testOSAccount is the identity an operator command run by this test
// process records: os:NAME from the account database and the uid.
func testOSAccount(t *testing.T) (subject, uid string) {
	t.Helper()
	uid = strconv.Itoa(os.Getuid())
	u, err := user.LookupId(uid)
	if err != nil || u.Username == "" {
		return "os:uid:" + uid, uid
	}
	return "os:" + u.Username, uid
}

// sinkLines reads an audit sink file's lines by event type.
func sinkLines(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("sink line %q: %v", sc.Text(), err)
		}
		out[l["type"].(string)] = l
	}
	return out
}

// TestOperatorActionsReachAuditSink: the state-changing operator commands
// (lexicon define, tokens revoke, capabilities accept, memory import) write their audit
// events to the configured audit.sink as the gateway writes its own, and
// run without a token they act as the operating-system user: subject
// os:NAME, client praxa-cli, the uid recorded. A USER variable naming
// someone else changes nothing.
func TestOperatorActionsReachAuditSink(t *testing.T) {
	cfgDir, dataDir := t.TempDir(), t.TempDir()
	cfgPath := filepath.Join(cfgDir, "praxec.yaml")
	if err := os.WriteFile(cfgPath, []byte("audit:\n  sink: audit.jsonl\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A capability whose upstream offers a new definition, waiting.
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, dataPath(dataDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	const pinned, offered = "1111111111111111111111111111111111111111111111111111111111111111", "2222222222222222222222222222222222222222222222222222222222222222"
	err = st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.PutCapabilityPin(ctx, store.CapabilityPin{Capability: "gh.create_pr", Connection: "gh", Tool: "create_pr",
			SHA256: pinned, Definition: []byte(`{"name":"create_pr"}`), OfferedSHA256: offered, OfferedDefinition: []byte(`{"name":"create_pr","description":"new"}`),
			OfferedAt: time.Now(), Version: 1, AcceptedBy: "first-import", CreatedAt: time.Now(), UpdatedAt: time.Now()}, 0)
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	env := &environment{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return map[string]string{"USER": "mallory"}[k] }}
	for _, args := range [][]string{
		{"lexicon", "define", "guardrail", "A check that stops a move.", "--tenant", "acme"},
		{"tokens", "revoke", "jti-123", "--reason", "leaked"},
		{"capabilities", "accept", "gh.create_pr", "--sha256", offered},
		{"memory", "import", filepath.Join("..", "..", "examples", "memory.jsonl"), "--tenant", "acme"},
	} {
		out.Reset()
		errb.Reset()
		if code := run(ctx, env, append(args, "--data-dir", dataDir, "--config", cfgPath)); code != 0 {
			t.Fatalf("%v: %d\n%s%s", args, code, out.String(), errb.String())
		}
	}
	subject, uid := testOSAccount(t)
	lines := sinkLines(t, filepath.Join(cfgDir, "audit.jsonl"))
	for _, typ := range []string{"lexicon.defined", "token.revoked", "capability.pin_accepted", "memory.imported"} {
		l, ok := lines[typ]
		if !ok {
			t.Errorf("the audit sink has no %s: %v", typ, lines)
			continue
		}
		attrs, _ := l["attributes"].(map[string]any)
		if l["subject"] != subject || l["clientId"] != "praxa-cli" || attrs["uid"] != uid {
			t.Errorf("%s: subject %v, client %v, uid %v; want %s, praxa-cli, %s", typ, l["subject"], l["clientId"], attrs["uid"], subject, uid)
		}
	}
	for _, typ := range []string{"lexicon.defined", "memory.imported"} {
		if l := lines[typ]; l != nil && l["tenant"] != "acme" {
			t.Errorf("%s in tenant %v", typ, l["tenant"])
		}
	}
}

// TestOperatorToken: with --token (or PRAXA_OPERATOR_TOKEN) an operator command
// acts as the token's principal, verified as the gateway verifies a bearer
// token: its subject and client on the audit event, no uid. A token the
// gateway would refuse, one without the command's scope, or one of
// another tenant than --tenant names stops the command before it writes.
func TestOperatorToken(t *testing.T) {
	_, dataDir, serveLog := startDevInProcess(t)
	devTok := regexp.MustCompile(`export PRAXA_TOKEN=(\S+)`).FindStringSubmatch(serveLog.String())[1]
	mint := func(args ...string) string {
		code, out, errOut := runCommand(t, append([]string{"token", "--data-dir", dataDir}, args...)...)
		if code != 0 {
			t.Fatalf("praxa token %v: %d %s", args, code, errOut)
		}
		return strings.TrimSpace(out)
	}
	define := func(term string, extra ...string) (int, string, string) {
		return runCommand(t, append([]string{"lexicon", "define", term, "A term.", "--data-dir", dataDir, "--dev"}, extra...)...)
	}

	code, stdout, stderr := define("with-token", "--token", devTok)
	if code != 0 {
		t.Fatalf("lexicon define --token: %d %s", code, stderr)
	}
	if ev := lexiconEvent(t, dataDir, stdout); ev.Subject != devSubject || ev.Tenant != devTenant || ev.Attributes["uid"] != nil || ev.ClientID == "praxa-cli" {
		t.Errorf("the event of a define with a token: %+v", ev)
	}
	// PRAXA_OPERATOR_TOKEN stands for --token; PRAXA_TOKEN, the agent's,
	// is never read.
	var out, errb bytes.Buffer
	env := &environment{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return map[string]string{"PRAXA_OPERATOR_TOKEN": devTok}[k] }}
	if code := run(context.Background(), env, []string{"lexicon", "define", "from-env", "A term.", "--data-dir", dataDir, "--dev"}); code != 0 {
		t.Fatalf("lexicon define with PRAXA_OPERATOR_TOKEN: %d %s", code, errb.String())
	}
	if ev := lexiconEvent(t, dataDir, out.String()); ev.Subject != devSubject {
		t.Errorf("the event of a define with PRAXA_OPERATOR_TOKEN: %+v", ev)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not a token", []string{"--token", "not.a.token"}, "the access token (--token or PRAXA_OPERATOR_TOKEN) is refused"},
		{"no scope", []string{"--token", mint("--scope", "missions:read")}, "does not grant lexicon:write"},
		{"other tenant", []string{"--token", devTok, "--tenant", "acme"}, "is of tenant dev, and --tenant names acme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := define("refused-"+strings.ReplaceAll(tc.name, " ", "-"), tc.args...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%d %s, want %q", code, stderr, tc.want)
			}
		})
	}
	// Nothing refused was written.
	code, stdout, _ = runCommand(t, "lexicon", "list", "--format", "json", "--data-dir", dataDir, "--dev")
	if code != 0 || strings.Contains(stdout, "refused-") {
		t.Errorf("a refused define wrote its term: %s", stdout)
	}
}

// TestOperatorApprovalIdentity: an approval asked for with a token cannot
// be granted on the command line with the same token (self-approval stays
// refused there too); another person's token grants it, and the approval
// records that person.
func TestOperatorApprovalIdentity(t *testing.T) {
	f := newApprovalsFixture(t)
	requester, dataDir, cfgPath, deploys := f.tok, f.dataDir, f.cfgPath, f.deploys
	_, id := f.askApproval(t)
	base := []string{"approvals", "approve", id, "--data-dir", dataDir, "--config", cfgPath, "--dev"}
	code, _, stderr := runCommand(t, append(base, "--token", requester)...)
	if code == 0 || !strings.Contains(stderr, "cannot also grant it") || deploys.Load() != 0 {
		t.Fatalf("approving one's own request on the command line: %d %s (upstream called %d times)", code, stderr, deploys.Load())
	}
	code, other, errOut := runCommand(t, "token", "--data-dir", dataDir, "--subject", "rita", "--scope", "approvals:write")
	if code != 0 {
		t.Fatal(errOut)
	}
	other = strings.TrimSpace(other)
	code, stdout, stderr := runCommand(t, append(base, "--token", other)...)
	if code != 0 || !strings.Contains(stdout, id+" approved") || deploys.Load() != 1 {
		t.Fatalf("approving with another person's token: %d %s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCommand(t, "approvals", "list", "--status", "all", "--format", "json", "--token", other, "--data-dir", dataDir, "--config", cfgPath, "--dev")
	var list struct {
		Approvals []struct{ ID, Status, RequestedBy, ResolvedBy string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &list) != nil || len(list.Approvals) != 1 ||
		list.Approvals[0].RequestedBy != devSubject || list.Approvals[0].ResolvedBy != "rita" {
		t.Errorf("approvals list: %d %s", code, stdout)
	}
}
