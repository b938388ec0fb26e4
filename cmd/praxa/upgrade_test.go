package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/praxa/praxa/gateway/store/pgstore"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
)

// This file holds the rolling upgrade test (issue 30 part 2): the binary
// of an older revision of this repository and the checkout's binary, each
// a real praxa serve process, on one PostgreSQL schema, the older one
// serving while the newer one migrates it, then the newer one stopped and
// the older one started again (a rollback).

// upgradeFrom is the revision the rolling upgrade test builds as the older
// binary: main just before the PostgreSQL migrations 0018 (idempotency
// tombstones) and 0019 (the run of a start lease), the latest ones when
// the test was written (git log gateway/store/pgstore/migrations). Move it
// to the revision of the previous release when one is cut: the promise is
// that the previous version tolerates this version's migrations.
// PRAXA_UPGRADE_FROM names another revision for one run.
const upgradeFrom = "0369b8a1fe8a13663ba2a1691300350f96619230"

// upgradeFromEnv overrides upgradeFrom.
const upgradeFromEnv = "PRAXA_UPGRADE_FROM"

// upgradeConfig is the configuration both binaries serve: a public URL
// shared by the replicas (as behind a load balancer; it names the dev
// issuer and the tokens' audience, so a token works on either), a workflow
// whose move waits for a person's approval, and a capability whose call
// appends a line to the file %s (a start of proxy_default that calls
// outside under a start lease, its effects counted).
const upgradeConfig = `server:
  publicURL: http://praxa.upgrade.test
  limits:
    ratePerSecond: -1
connections:
  sh: {kind: cli, command: /bin/sh}
proxy:
  expose:
    - name: effect
      description: Append a line to the effects file.
      executor:
        kind: cli
        connection: sh
        args: ["-c", "echo effect >> %s"]
workflows:
  release:
    version: 1
    title: Release
    initial: draft
    states:
      draft: {title: Draft}
      released: {title: Released, terminal: true}
    transitions:
      - name: release
        title: Release it
        from: draft
        to: released
        executor: {kind: human, queue: releases}
`

// gitOutput runs git in dir and returns its trimmed standard output.
func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// buildAtRevision builds ./cmd/praxa of rev, a revision of the repository
// this test runs in, from `git archive` (no worktree, so a clean clone
// will do) and returns the binary. It builds as deploy/image/build.sh
// does (CGO_ENABLED=0, -trimpath): the build cache's entries then depend
// neither on the temporary directory nor on this test, so a second run
// compiles nothing, and in CI the dependencies come from the image's
// build. It skips the test without git or without rev in the history.
func buildAtRevision(t *testing.T, goTool, rev string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("no git to build the older revision %s: %v", rev, err)
	}
	root, err := gitOutput(".", "rev-parse", "--show-toplevel")
	if err != nil {
		t.Skipf("not in a git clone, so no older revision to build: %v", err)
	}
	if _, err := gitOutput(root, "cat-file", "-e", rev+"^{commit}"); err != nil {
		t.Skipf("revision %s is not in this clone's history (a shallow clone? git fetch --unshallow): %v", rev, err)
	}
	src := t.TempDir()
	archive := exec.Command("git", "archive", "--format=tar", rev)
	archive.Dir = root
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	var archiveErr, untarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	if err := untar.Start(); err != nil {
		t.Skipf("no tar to unpack revision %s: %v", rev, err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v: %s", rev, err, archiveErr.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("tar -x of git archive %s: %v: %s", rev, err, untarErr.String())
	}
	bin := filepath.Join(t.TempDir(), "praxa-"+rev[:min(len(rev), 12)])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-o", bin, "./cmd/praxa")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of revision %s: %v\n%s", rev, err, out)
	}
	return bin
}

// appliedMigrations lists schema_migrations of the schema dsn names.
func appliedMigrations(t *testing.T, dsn string) []string {
	t.Helper()
	rows, err := pgtest.Conn(t, dsn).Query(context.Background(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

// checkoutMigrations lists the PostgreSQL migrations of the checkout.
func checkoutMigrations(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("../../gateway/store/pgstore/migrations")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if v, ok := strings.CutSuffix(e.Name(), ".sql"); ok {
			out = append(out, v)
		}
	}
	return out
}

// upgradeNode is one binary serving on one address of the test.
type upgradeNode struct {
	name, bin, addr, dataDir string
	child                    *crashChild
}

// TestRollingUpgradePostgres: a rolling upgrade and its rollback on one
// PostgreSQL schema, with real processes. The older binary (upgradeFrom,
// built from git) serves and takes writes under Idempotency-Keys: an
// intent, a start that calls a command line capability (its effects
// counted), release missions whose move waits for a person's approval. The
// checkout's binary starts on the same schema and applies its migrations
// while the older one serves. Across the binaries: every key's replay
// answers the recorded status and body, whichever binary recorded it; an
// approval asked on one is approved on the other and the mission's new
// state read back across; the older binary keeps serving reads and
// writes on the migrated schema; a sweep of the newer code keeps the keys
// the older binary recorded after the migration. Then the rollback: the
// newer binary stops, the older one starts again on the migrated schema
// and serves what either recorded; and the roll forward again, where the
// newer binary replays what the older one recorded during the rollback.
// Each start called its capability once, whichever binary it was sent to
// again.
func TestRollingUpgradePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries and runs them: skipped with -short")
	}
	dsn := pgtest.Schema(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the binaries: %v", err)
	}
	rev := upgradeFrom
	if r := os.Getenv(upgradeFromEnv); r != "" {
		rev = r
	}
	began := time.Now()
	oldBin := buildAtRevision(t, goTool, rev)
	builtOld := time.Since(began)
	newBin := buildPraxa(t)
	t.Logf("built %s in %v and the checkout in %v", rev, builtOld.Round(time.Millisecond), (time.Since(began) - builtOld).Round(time.Millisecond))

	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	effects := filepath.Join(t.TempDir(), "effects")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(upgradeConfig, effects)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Each replica its own data directory, as each pod its own volume;
	// the dev issuer's key is the IdP both trust (copied below).
	oldPort, newPort := freePort(t), freePort(t)
	for newPort == oldPort {
		newPort = freePort(t)
	}
	oldNode := &upgradeNode{name: "old " + rev[:min(len(rev), 7)], bin: oldBin, addr: "127.0.0.1:" + oldPort, dataDir: t.TempDir()}
	newNode := &upgradeNode{name: "new", bin: newBin, addr: "127.0.0.1:" + newPort, dataDir: t.TempDir()}
	start := func(n *upgradeNode) {
		t.Helper()
		n.child = crashStart(t, n.bin, n.addr, n.dataDir, cfgPath, "--store", dsn)
		child := n.child
		t.Cleanup(func() {
			select {
			case <-child.done:
			default:
				child.stop(t)
			}
		})
	}
	stop := func(n *upgradeNode) {
		t.Helper()
		n.child.stop(t)
		if code := n.child.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("%s exited %d on SIGINT:\n%s", n.name, code, n.child.stderr())
		}
	}

	start(oldNode)
	before := appliedMigrations(t, dsn)
	pending := slices.DeleteFunc(checkoutMigrations(t), func(v string) bool { return slices.Contains(before, v) })
	t.Logf("%s applied %d migrations; the checkout adds %v", oldNode.name, len(before), pending)
	// The dev issuer's files (its key among them), private as serve keeps
	// them.
	devFiles, err := os.ReadDir(filepath.Join(oldNode.dataDir, "dev"))
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.MkdirAll(filepath.Join(newNode.dataDir, "dev"), 0o700), "the new replica's dev directory")
	for _, f := range devFiles {
		b, err := os.ReadFile(filepath.Join(oldNode.dataDir, "dev", f.Name()))
		must(t, err, "read the dev issuer's %s", f.Name())
		must(t, os.WriteFile(filepath.Join(newNode.dataDir, "dev", f.Name()), b, 0o600), "copy the dev issuer's %s", f.Name())
	}
	user := crashToken(t, oldBin, oldNode.dataDir)
	operator := mintToken(t, oldBin, oldNode.dataDir, "--subject", "upgrade-operator", "--ttl", "1h")
	client := crashClient()

	// do sends one request to n and fails the test on a transport error.
	do := func(n *upgradeNode, method, path, token, key string, body any) crashAnswerOf {
		t.Helper()
		a, err := crashDo(t, client, method, "http://"+n.addr, path, token, key, "", body)
		if err != nil {
			t.Fatalf("%s: %s %s: %v\n%s", n.name, method, path, err, n.child.stderr())
		}
		return a
	}
	// keyed is a request under an Idempotency-Key and its first answer.
	type keyed struct {
		by         string
		path, key  string
		body       any
		first      crashAnswerOf
		wantStatus int
	}
	var keys []*keyed
	write := func(n *upgradeNode, path string, body any, want int) *keyed {
		t.Helper()
		k := &keyed{by: n.name, path: path, key: fmt.Sprintf("upgrade-%d-%d", len(keys), time.Now().UnixNano()), body: body, wantStatus: want}
		k.first = do(n, http.MethodPost, path, user, k.key, body)
		if k.first.status != want || k.first.replayed {
			t.Fatalf("%s: POST %s: %d (replayed %v) %s, want %d", n.name, path, k.first.status, k.first.replayed, k.first.raw, want)
		}
		keys = append(keys, k)
		return k
	}
	// replay sends k again to n: the recorded answer, status and body.
	replay := func(n *upgradeNode, k *keyed) {
		t.Helper()
		got := do(n, http.MethodPost, k.path, user, k.key, k.body)
		if got.status != k.first.status || !got.replayed || !bytes.Equal(got.raw, k.first.raw) {
			t.Errorf("%s replays the key %s recorded by %s (POST %s): %d replayed=%v\n%s\nwant %d replayed\n%s",
				n.name, k.key, k.by, k.path, got.status, got.replayed, got.raw, k.first.status, k.first.raw)
		}
	}
	// askRelease starts a release mission on n and asks for its release:
	// the run id and the approval's id.
	askRelease := func(n *upgradeNode) (string, string) {
		t.Helper()
		m := write(n, "/v8/missions", map[string]any{"definitionId": "release", "goal": "release it"}, http.StatusCreated)
		runID, _ := m.first.body["runId"].(string)
		wf, _ := m.first.body["workflow"].(map[string]any)
		s := write(n, "/v8/missions/"+url.PathEscape(runID)+"/signals", map[string]any{"signal": "release", "expectedVersion": wf["version"]}, http.StatusOK)
		result, _ := s.first.body["result"].(map[string]any)
		approval, _ := s.first.body["approval"].(map[string]any)
		id, _ := approval["id"].(string)
		if runID == "" || result["status"] != "pending_approval" || id == "" {
			t.Fatalf("%s: the release does not wait for an approval: %s", n.name, s.first.raw)
		}
		return runID, id
	}
	approve := func(n *upgradeNode, id string) {
		t.Helper()
		if a := do(n, http.MethodPost, "/v8/approvals/"+url.PathEscape(id)+"/approve", operator, "", map[string]any{}); a.status != http.StatusOK {
			t.Errorf("%s: approve %s: %d %s", n.name, id, a.status, a.raw)
		}
	}
	wantState := func(n *upgradeNode, runID, state string) {
		t.Helper()
		a := do(n, http.MethodGet, "/v8/missions/"+url.PathEscape(runID), user, "", nil)
		wf, _ := a.body["workflow"].(map[string]any)
		if a.status != http.StatusOK || wf["state"] != state {
			t.Errorf("%s: GET mission %s: %d, state %v, want %s: %s", n.name, runID, a.status, wf["state"], state, a.raw)
		}
	}
	// approvals lists the ids of the approvals in status on n.
	approvals := func(n *upgradeNode, status string) []string {
		t.Helper()
		a := do(n, http.MethodGet, "/v8/approvals?status="+status, user, "", nil)
		if a.status != http.StatusOK {
			t.Fatalf("%s: GET approvals: %d %s", n.name, a.status, a.raw)
		}
		var ids []string
		list, _ := a.body["approvals"].([]any)
		for _, x := range list {
			if m, _ := x.(map[string]any); m != nil {
				id, _ := m["id"].(string)
				ids = append(ids, id)
			}
		}
		return ids
	}
	// effect starts a run of proxy_default on n whose start calls the
	// effect capability: one more line in the effects file.
	effect := func(n *upgradeNode) *keyed {
		t.Helper()
		before := crashEffects(t, effects)
		k := write(n, "/v8/missions", map[string]any{"definitionId": "proxy_default", "goal": "make the effect",
			"input": map[string]any{"capability": "effect"}}, http.StatusCreated)
		if got := crashEffects(t, effects); got != before+1 {
			t.Fatalf("%s: the start made %d effects, want 1: %s", n.name, got-before, k.first.raw)
		}
		return k
	}
	intent := func(n *upgradeNode, text string) *keyed {
		t.Helper()
		return write(n, "/v8/intents", map[string]any{"intent": text, "tags": []string{"upgrade"}}, http.StatusOK)
	}

	// 1. The older binary alone: a write under a key, a mission waiting
	// for an approval (two).
	intentOld := intent(oldNode, "recorded by the older binary before the upgrade")
	effect(oldNode)
	run1, approval1 := askRelease(oldNode)
	run2, approval2 := askRelease(oldNode)

	// 2. The newer binary starts on the same schema and migrates it while
	// the older one serves.
	start(newNode)
	after := appliedMigrations(t, dsn)
	if want := checkoutMigrations(t); !slices.Equal(after, want) {
		t.Fatalf("after the newer binary started, schema_migrations holds %v, want the checkout's %v", after, want)
	}

	// 3. Across: the older binary's keys replay on the newer one; its
	// approvals are listed there, and one approved there moves the
	// mission the older binary reads.
	for _, k := range keys {
		replay(newNode, k)
	}
	if ids := approvals(newNode, "pending"); !slices.Contains(ids, approval1) || !slices.Contains(ids, approval2) {
		t.Errorf("new lists the pending approvals %v, want %s and %s asked on old", ids, approval1, approval2)
	}
	approve(newNode, approval1)
	wantState(oldNode, run1, "released")
	if ids := approvals(oldNode, "approved"); !slices.Contains(ids, approval1) {
		t.Errorf("old lists the approved approvals %v, want %s approved on new", ids, approval1)
	}

	// 4. The older binary on the migrated schema: it reads, writes, asks
	// and approves, and what it records replays on the newer one and the
	// other way round.
	replay(oldNode, intentOld)
	intentOldAfter := intent(oldNode, "recorded by the older binary after the migration")
	replay(oldNode, intentOldAfter)
	replay(newNode, intentOldAfter)
	run3, approval3 := askRelease(oldNode)
	approve(oldNode, approval2)
	wantState(newNode, run2, "released")
	intentNew := intent(newNode, "recorded by the newer binary")
	replay(oldNode, intentNew)
	run4, approval4 := askRelease(newNode)
	effect(oldNode)
	effect(newNode)

	// The newer code's idempotency sweep (every 10 minutes in serve) keeps
	// the records the older binary wrote after the migration: they have
	// not expired.
	st, err := pgstore.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SweepIdempotency(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, k := range keys {
		replay(newNode, k)
	}

	// 5. Rollback: the newer binary stops; the older one, started again on
	// the migrated schema (whose schema_migrations names versions it does
	// not know), serves what either binary recorded.
	stop(newNode)
	stop(oldNode)
	start(oldNode)
	for _, k := range keys {
		replay(oldNode, k)
	}
	wantState(oldNode, run1, "released")
	approve(oldNode, approval3)
	wantState(oldNode, run3, "released")
	approve(oldNode, approval4)
	wantState(oldNode, run4, "released")
	intentRollback := intent(oldNode, "recorded by the older binary after the rollback")
	effect(oldNode)

	// 6. Forward again: the newer binary replays what the older one
	// recorded during the rollback.
	start(newNode)
	replay(newNode, intentRollback)
	for _, k := range keys {
		replay(newNode, k)
	}
	// Every start called once, however often its key was sent again.
	if n := crashEffects(t, effects); n != 4 {
		t.Errorf("the effect capability was called %d times, want 4 (one a start)", n)
	}
	if t.Failed() {
		t.Logf("old's log:\n%s\nnew's log:\n%s", oldNode.child.stderr(), newNode.child.stderr())
	}
	t.Logf("the rolling upgrade from %s took %v with the builds", rev, time.Since(began).Round(time.Millisecond))
}
