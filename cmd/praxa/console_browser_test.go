package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/issuer"
)

// chromiumPath is Debian's chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// consoleHarness is praxa serve --dev with its console, an agent that
// asks for moves over REST, and a headless Chromium.
type consoleHarness struct {
	t       *testing.T
	app     *app
	dev     *issuer.Issuer
	info    devIssuerInfo
	browser context.Context
	shots   string
}

func newConsoleHarness(t *testing.T) *consoleHarness {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("the console's browser test needs Debian's chromium at %s (apt-get install -y chromium; .ci/run installs it): %v", chromiumPath, err)
	}
	a, dataDir, _ := startDevInProcess(t)
	info, dev, err := loadDevIssuer(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	dev.SetIssuer(info.Issuer)

	shots := os.Getenv("PRAXA_SCREENSHOTS_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return &consoleHarness{t: t, app: a, dev: dev, info: info, browser: browser, shots: shots}
}

// token mints an access token of tenant dev for subject with every scope,
// as an agent's would be.
func (h *consoleHarness) token(subject string) string {
	h.t.Helper()
	tok, err := h.dev.Mint(h.info.Issuer, h.info.Audience, subject, devTenant, allScopes(), time.Hour,
		contextClaims(h.info.CompartmentsClaim, h.info.PurposesClaim, devCompartments, devPurposes))
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// command sends praxec.command over REST as subject.
func (h *consoleHarness) command(subject string, body map[string]any) map[string]any {
	h.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, h.app.url+"/v8/praxec/command", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+h.token(subject))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	if res.StatusCode != http.StatusOK {
		h.t.Fatalf("praxec.command %v as %s: %d %v", body, subject, res.StatusCode, m)
	}
	return m
}

// askForRelease has subject start a release_approval mission and fire
// the move that waits for a person; it returns the workflow and approval
// ids.
func (h *consoleHarness) askForRelease(subject, version string) (string, string) {
	h.t.Helper()
	wf := h.command(subject, map[string]any{"definitionId": "release_approval"})["workflow"].(map[string]any)
	wf = h.command(subject, map[string]any{"workflowId": wf["id"], "expectedVersion": wf["version"], "transition": "request_release",
		"arguments": map[string]any{"version": version}})["workflow"].(map[string]any)
	asked := h.command(subject, map[string]any{"workflowId": wf["id"], "expectedVersion": wf["version"], "transition": "approve_release"})
	approval, _ := asked["approval"].(map[string]any)
	id, _ := approval["id"].(string)
	if id == "" {
		h.t.Fatalf("approve_release opened no approval: %v", asked)
	}
	return wf["id"].(string), id
}

// tab opens a tab with cookies of its own (a person's browser).
func (h *consoleHarness) tab() context.Context {
	h.t.Helper()
	ctx, cancel := chromedp.NewContext(h.browser, chromedp.WithNewBrowserContext())
	h.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		h.t.Fatal(err)
	}
	return ctx
}

// do runs browser steps, bounded so that a stuck page fails the test.
func (h *consoleHarness) do(tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	h.ok(tab, chromedp.Do(ctx, steps...))
}

// ok fails the test on err with the address and the text of the page the
// browser is at.
func (h *consoleHarness) ok(tab context.Context, err error) {
	h.t.Helper()
	if err != nil {
		loc, _ := chromedp.Run(tab, chromedp.Location())
		body, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS("body")))
		h.t.Fatalf("browser at %s: %v\n%s", loc, err, body)
	}
}

// follow runs click, a click on a link or on a form's button, waits until
// the page it navigates to has loaded, checks that the browser is at an
// address containing at, and runs then on that page. A click returns
// before the navigation it starts commits: a query run after it alone can
// match the page being left (the queue has an approve button and note
// field per request, the mission and audit pages have ol.events as the
// trace page does), so the wait is for the navigation itself.
func (h *consoleHarness) follow(tab context.Context, at string, click chromedp.Action[chromedp.Void], then ...chromedp.Action[chromedp.Void]) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	_, err := chromedp.RunResponse(ctx, click)
	h.ok(tab, err)
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.Contains(loc, at) {
		h.t.Fatalf("the click led to %s (%v), want an address with %s", loc, err, at)
	}
	h.ok(tab, chromedp.Do(ctx, then...))
}

// text is the visible text of the page's main element.
func (h *consoleHarness) text(tab context.Context) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// screenshot writes the page at desktop and phone width.
func (h *consoleHarness) screenshot(tab context.Context, name string) {
	h.t.Helper()
	for _, v := range []struct {
		suffix        string
		width, height int64
	}{{"desktop", 1280, 900}, {"phone", 375, 812}} {
		ctx, cancel := context.WithTimeout(tab, 20*time.Second)
		png, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
			if _, err := chromedp.EmulateViewport(v.width, v.height)(ctx, t); err != nil {
				return nil, err
			}
			return chromedp.FullScreenshot(100)(ctx, t)
		})
		cancel()
		if err != nil {
			h.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(h.shots, name+"-"+v.suffix+".png"), png, 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	h.do(tab, chromedp.EmulateViewport(1280, 900))
}

// signIn opens path, follows the sign-in link to the dev issuer's page and
// signs in as subject; the console returns to path.
func (h *consoleHarness) signIn(tab context.Context, path, subject string, shots bool) {
	h.t.Helper()
	h.do(tab, chromedp.Navigate(h.app.url+path), chromedp.WaitVisible(chromedp.CSS("a.button")))
	if shots {
		h.screenshot(tab, "signin")
	}
	h.do(tab, chromedp.Click(chromedp.CSS("a.button")), chromedp.WaitVisible(chromedp.CSS(`button[value="`+subject+`"]`)))
	if shots {
		h.screenshot(tab, "dev-issuer-login")
	}
	h.do(tab, chromedp.Click(chromedp.CSS(`button[value="`+subject+`"]`)), chromedp.WaitVisible(chromedp.CSS("form.who")))
	if loc, _ := chromedp.Run(tab, chromedp.Location()); !strings.HasSuffix(loc, path) {
		h.t.Fatalf("after signing in the browser is at %s, want %s", loc, path)
	}
}

// TestConsoleInBrowser drives the operator console in a real headless
// Chromium against praxa serve --dev, signing in through the dev issuer's
// authorization endpoint over HTTP: an approver approves an agent's
// request (the mission moves on, the audit names the person), a viewer
// sees no approve button and a forged POST with a valid CSRF token is
// refused, and a requester cannot approve their own request. It writes a
// screenshot of each page at desktop and phone width to
// $PRAXA_SCREENSHOTS_DIR (a temporary directory without it).
func TestConsoleInBrowser(t *testing.T) {
	h := newConsoleHarness(t)
	ctx := context.Background()
	t.Logf("screenshots in %s", h.shots)

	t.Run("approver", func(t *testing.T) {
		h.t = t
		wfID, id := h.askForRelease("agent-7", "1.4.0")
		tab := h.tab()
		h.signIn(tab, "/console/approvals", "alice", true)
		// The page's script is deferred: it runs (localTimes, the refresh
		// started) before the load event, not before the page is visible.
		h.do(tab, chromedp.Poll[chromedp.Void](`document.readyState === "complete"`, chromedp.WithPollingInterval(10*time.Millisecond)))
		page := h.text(tab)
		for _, want := range []string{"approve_release", "agent-7", wfID, "Approve"} {
			if !strings.Contains(page, want) {
				t.Errorf("the queue does not show %q:\n%s", want, page)
			}
		}
		h.screenshot(tab, "queue")
		// The script showed the times in the viewer's zone, and the queue
		// refreshes in place: a new request appears without a reload.
		local, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => { const t = document.querySelector("#queue time");
			return t !== null && !t.textContent.endsWith(" UTC") && t.title === t.getAttribute("datetime"); })()`))
		if err != nil || !local {
			t.Errorf("the queue's times are not in the viewer's zone (%v)", err)
		}
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
			t.Fatal(err)
		}
		_, second := h.askForRelease("agent-7", "1.4.1")
		h.do(tab, chromedp.WaitVisible(chromedp.CSS(`#queue a[href="/console/approvals/`+second+`"]`)))
		if same, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !same {
			t.Errorf("the queue reloaded the page to show a new request (%v)", err)
		}
		// A refresh that finds the list unchanged leaves it in place: a
		// click or an open Arguments box is not lost to it. refreshes
		// counts the refreshes whose answer was read and handled (the
		// count moves in a task after the page's own handler).
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => {
			window.kept = document.getElementById("queue").firstElementChild; window.refreshes = 0;
			const text = Response.prototype.text;
			Response.prototype.text = function () { return text.call(this).then(s => { setTimeout(() => window.refreshes++, 0); return s; }); };
			return true; })()`)); err != nil {
			t.Fatal(err)
		}
		h.do(tab, chromedp.Poll[chromedp.Void](`window.refreshes >= 1`, chromedp.WithPollingInterval(50*time.Millisecond)))
		if kept, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("queue").firstElementChild === window.kept`)); err != nil || !kept {
			t.Errorf("a refresh replaced the queue's unchanged list (%v)", err)
		}
		h.follow(tab, "/console/approvals/"+id, chromedp.Click(chromedp.CSS(`a[href="/console/approvals/`+id+`"]`)), chromedp.WaitVisible(chromedp.CSS("button.approve")))
		if page := h.text(tab); !strings.Contains(page, "1.4.0") && !strings.Contains(page, "pending") {
			t.Errorf("the approval page does not show the request:\n%s", page)
		}
		h.screenshot(tab, "approval")
		h.do(tab, chromedp.SendKeys(chromedp.CSS("#note-"+id), "checked the changelog"))
		h.follow(tab, "/console/approvals/"+id, chromedp.Click(chromedp.CSS("button.approve")), chromedp.WaitVisible(chromedp.CSS("p.flash")))
		if page := h.text(tab); !strings.Contains(page, "You approved approval "+id) || !strings.Contains(page, "state released") {
			t.Errorf("after approving:\n%s", page)
		}
		h.screenshot(tab, "approval-approved")

		// The mission reached its next state, and the audit names alice.
		reader := &auth.Principal{Subject: "test", Tenant: devTenant, Scopes: auth.NewScopeSet(contracts.ScopeMissionsRead, contracts.ScopeTracesRead)}
		all, err := h.app.gw.Service.ListMissions(ctx, reader, store.MissionFilter{DefinitionID: "release_approval"}, 100)
		var missions []gateway.MissionSummary
		for _, m := range all {
			if m.ID == wfID {
				missions = append(missions, m)
			}
		}
		if err != nil || len(missions) != 1 || missions[0].State != "released" {
			t.Fatalf("the mission after the approval: %+v %v", missions, err)
		}
		history, err := h.app.gw.Service.MissionHistory(ctx, reader, wfID)
		if err != nil {
			t.Fatal(err)
		}
		granted := false
		for _, ev := range history {
			if ev.Type == "human.approval.granted" && ev.Subject == "alice" {
				granted = true
			}
		}
		if !granted {
			t.Errorf("no human.approval.granted event names alice: %+v", history)
		}

		// The other pages, for their screenshots and what they show.
		h.do(tab, chromedp.Navigate(h.app.url+"/console/missions"), chromedp.WaitVisible(chromedp.CSS("table")))
		h.screenshot(tab, "missions")
		h.follow(tab, "/console/missions/"+missions[0].RunID, chromedp.Click(chromedp.CSS(`a[href="/console/missions/`+missions[0].RunID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS("ol.events")))
		if page := h.text(tab); !strings.Contains(page, "released") || !strings.Contains(page, "human.approval.granted") || !strings.Contains(page, "by alice") {
			t.Errorf("the mission page:\n%s", page)
		}
		h.screenshot(tab, "mission")
		h.follow(tab, "/console/traces/", chromedp.Click(chromedp.CSS(`ol.events a[href^="/console/traces/"]`)), chromedp.WaitVisible(chromedp.CSS("ol.events")))
		h.screenshot(tab, "trace")
		h.do(tab, chromedp.Navigate(h.app.url+"/console/capabilities"), chromedp.WaitVisible(chromedp.CSS("#quarantine-title")))
		h.screenshot(tab, "capabilities")

		// The audit trail, reached from the navigation: the approval
		// among the newest events; the filter form narrows it to alice's
		// decisions, and the trace link of one opens its trace.
		h.follow(tab, "/console/audit", chromedp.Click(chromedp.CSS(`nav a[href="/console/audit"]`)), chromedp.WaitVisible(chromedp.CSS("ol.events")))
		if page := h.text(tab); !strings.Contains(page, "Audit trail") || !strings.Contains(page, "human.approval.granted") || !strings.Contains(page, "by agent-7") {
			t.Errorf("the audit page:\n%s", page)
		}
		h.do(tab, chromedp.SendKeys(chromedp.CSS("#f-subject"), "alice"), chromedp.SetValue(chromedp.CSS("#f-outcome"), "allowed"))
		// The next page renders the filter it applied: the attribute (the
		// field typed in sets the property only).
		h.follow(tab, "/console/audit?", chromedp.Click(chromedp.CSS("form.filter button")), chromedp.WaitVisible(chromedp.CSS(`#f-subject[value="alice"]`)))
		if loc, _ := chromedp.Run(tab, chromedp.Location()); !strings.Contains(loc, "subject=alice") || !strings.Contains(loc, "outcome=allowed") {
			t.Errorf("the filter went to %s", loc)
		}
		page = h.text(tab)
		if !strings.Contains(page, "matching the filter") || !strings.Contains(page, "human.approval.granted") || strings.Contains(page, "by agent-7") {
			t.Errorf("the audit page filtered by alice:\n%s", page)
		}
		h.screenshot(tab, "audit")
		h.follow(tab, "/console/traces/", chromedp.Click(chromedp.CSS(`ol.events a[href^="/console/traces/"]`)), chromedp.WaitVisible(chromedp.CSS("ol.events")))
		if loc, _ := chromedp.Run(tab, chromedp.Location()); !strings.Contains(loc, "/console/traces/") {
			t.Errorf("the trace link went to %s", loc)
		}
	})

	t.Run("viewer", func(t *testing.T) {
		h.t = t
		_, id := h.askForRelease("agent-7", "1.5.0")
		tab := h.tab()
		h.signIn(tab, "/console/approvals/"+id, "victor", false)
		absent, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.querySelector("button.approve") === null && document.querySelector("form.decide") === null`))
		if err != nil || !absent {
			t.Errorf("the viewer's approval page has an approve button (%v)", err)
		}
		if page := h.text(tab); !strings.Contains(page, "needs the approvals:write scope") {
			t.Errorf("the viewer's approval page does not say why:\n%s", page)
		}
		h.screenshot(tab, "approval-viewer")
		// A forged form, with the session's own CSRF token, is refused by
		// the service: the viewer lacks approvals:write.
		forged := `(async () => {
			const csrf = document.querySelector('form.who input[name="csrf"]').value;
			const r = await fetch("/console/approvals/` + id + `", {method: "POST", credentials: "same-origin",
				headers: {"Content-Type": "application/x-www-form-urlencoded"},
				body: new URLSearchParams({csrf: csrf, decision: "approve"})});
			return r.status + " " + (await r.text());
		})()`
		got, err := chromedp.Run(tab, chromedp.Evaluate[string](forged, chromedp.EvalAwaitPromise))
		if err != nil || !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "Your sign-in does not allow this") {
			t.Errorf("the forged approval: %v %.300s", err, got)
		}
		// Without the token the console refuses before the service.
		got, err = chromedp.Run(tab, chromedp.Evaluate[string](strings.Replace(forged, "csrf: csrf", `csrf: "forged"`, 1), chromedp.EvalAwaitPromise))
		if err != nil || !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "(CSRF)") {
			t.Errorf("the approval without the CSRF token: %v %.300s", err, got)
		}
		approver := &auth.Principal{Subject: "test", Tenant: devTenant, Scopes: auth.NewScopeSet(contracts.ScopeMissionsRead)}
		if a, err := h.app.gw.Service.ViewApproval(ctx, approver, id); err != nil || a.Status != "pending" {
			t.Errorf("after the viewer's forged approval: %+v %v", a, err)
		}
	})

	t.Run("requester", func(t *testing.T) {
		h.t = t
		_, id := h.askForRelease("rita", "2.0.0")
		tab := h.tab()
		h.signIn(tab, "/console/approvals/"+id, "rita", false)
		h.do(tab, chromedp.Click(chromedp.CSS("button.approve")), chromedp.WaitVisible(chromedp.CSS("section.problem")))
		if page := h.text(tab); !strings.Contains(page, "You asked for this approval, so you cannot also grant it") ||
			!strings.Contains(page, "self-approval-forbidden") {
			t.Errorf("the requester's own approval:\n%s", page)
		}
		h.screenshot(tab, "approval-self")
		reader := &auth.Principal{Subject: "test", Tenant: devTenant, Scopes: auth.NewScopeSet(contracts.ScopeMissionsRead)}
		if a, err := h.app.gw.Service.ViewApproval(ctx, reader, id); err != nil || a.Status != "pending" {
			t.Errorf("after the requester's approval: %+v %v", a, err)
		}
	})
}
