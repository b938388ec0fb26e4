package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/restclient"
)

// SuiteName and Version identify the suite in reports.
const (
	SuiteName = "praxa-conformance"
	Version   = "0.1.0"
)

// Target is the gateway under test.
type Target struct {
	// BaseURL is the gateway's base URL: scheme, host and port; the
	// contract's paths start with /v8.
	BaseURL string
	// Tokens supplies access tokens the target accepts.
	Tokens Tokens
	// HTTPClient sends every request (default: a client with a 30s
	// timeout). A 429 answer is retried after its Retry-After, so a
	// rate-limited target slows the run down rather than failing it.
	HTTPClient *http.Client
}

// Options select and observe a run. The zero value runs every case.
type Options struct {
	// Groups and Cases select cases (see Select).
	Groups []Group
	Cases  []string
	// Started, when set, is called before each case.
	Started func(c Case, index, total int)
	// Finished, when set, is called with each result.
	Finished func(r Result, index, total int)
	// CaseTimeout bounds one case (default 2 minutes).
	CaseTimeout time.Duration
}

// Result is the outcome of one case. Its JSON form is a result of the
// coverage report (the input schema of the recordCoverageRun endpoint in contracts).
type Result struct {
	ID         string        `json:"id"`
	Title      string        `json:"title,omitempty"`
	Group      Group         `json:"group"`
	Proves     string        `json:"proves,omitempty"`
	Operations []string      `json:"operations,omitempty"`
	Verdict    Verdict       `json:"result"`
	Reason     string        `json:"reason,omitempty"`
	At         time.Time     `json:"at"`
	Duration   time.Duration `json:"-"`
	DurationMs int64         `json:"durationMs"`
}

// Report is the outcome of a run. Its JSON form is the body of
// POST /v8/coverage/runs (the input schema of the recordCoverageRun endpoint in contracts).
type Report struct {
	Suite        string    `json:"suite"`
	SuiteVersion string    `json:"suiteVersion"`
	Target       string    `json:"target"`
	StartedAt    time.Time `json:"startedAt"`
	FinishedAt   time.Time `json:"finishedAt"`
	Results      []Result  `json:"results"`
}

// ErrUntrusted is returned, wrapped, by Run when the target refuses the
// suite's valid tokens: it does not trust their issuer or audience.
var ErrUntrusted = errors.New("conformance: the target does not accept the suite's tokens")

// Run runs the selected cases against target, one after the other, and
// reports every verdict. The error is non-nil only when the run could not
// start: a bad selection, an unreachable target, or tokens it refuses.
func Run(ctx context.Context, target Target, opts *Options) (*Report, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CaseTimeout <= 0 {
		o.CaseTimeout = 2 * time.Minute
	}
	cases, err := Select(o.Groups, o.Cases)
	if err != nil {
		return nil, err
	}
	r, err := newRun(ctx, target)
	if err != nil {
		return nil, err
	}
	rep := &Report{Suite: SuiteName, SuiteVersion: Version, Target: r.base, StartedAt: time.Now().UTC()}
	for i, c := range cases {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if o.Started != nil {
			o.Started(c, i, len(cases))
		}
		res := r.runCase(ctx, c, o.CaseTimeout)
		rep.Results = append(rep.Results, res)
		if o.Finished != nil {
			o.Finished(res, i, len(cases))
		}
	}
	rep.FinishedAt = time.Now().UTC()
	return rep, nil
}

// run is the state one Run shares between its cases.
type run struct {
	base   string
	http   *http.Client
	tokens Tokens

	mu        sync.Mutex
	tokenMemo map[string]string

	deployOnce sync.Once
	deployErr  string // why deploy_pipeline is unusable; "" when usable
}

func newRun(ctx context.Context, target Target) (*run, error) {
	u, err := url.Parse(strings.TrimRight(target.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("conformance: %q is not an http(s) base URL", target.BaseURL)
	}
	if target.Tokens == nil {
		return nil, errors.New("conformance: the target needs a token source")
	}
	hc := target.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	hc = withRetryAfter(hc)
	r := &run{base: u.String(), http: hc, tokens: target.Tokens, tokenMemo: map[string]string{}}
	// A gateway of the contract publishes its protected resource metadata.
	if _, err := fetchResourceMetadata(ctx, hc, r.base); err != nil {
		return nil, err
	}
	// A valid token must be accepted, or every verdict below would be
	// meaningless.
	tok, err := r.token(ctx, TenantA, AllScopes())
	if err != nil {
		return nil, fmt.Errorf("conformance: token of tenant A: %w", err)
	}
	c, err := restclient.New(r.base, &restclient.Options{HTTPClient: hc, Token: restclient.StaticToken(tok)})
	if err != nil {
		return nil, err
	}
	// A target that has just been told to trust a fresh key may refuse it
	// until its next, rate-limited, key refresh: wait for that, briefly.
	deadline := time.Now().Add(keyRefreshWait)
	for {
		resp, err := c.CallTool(ctx, contracts.ToolPraxecQuery, []byte(`{}`))
		if err != nil {
			return nil, fmt.Errorf("conformance: the target does not answer: %w", err)
		}
		if resp.Status != http.StatusUnauthorized {
			return r, nil
		}
		challenge := resp.Header.Get("WWW-Authenticate")
		if !strings.Contains(strings.ToLower(challenge), "key") || time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: praxec.query with a valid token of tenant A answered 401 (%s)", ErrUntrusted, challenge)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// keyRefreshWait bounds how long Run waits for a target to learn the
// suite's signing key (a verifier refetches keys for an unknown kid at
// most every 30 seconds by default).
const keyRefreshWait = 35 * time.Second

// DiscoverResource reads the target's resource identifier (the audience its
// tokens must name) from its protected resource metadata (RFC 9728).
func DiscoverResource(ctx context.Context, baseURL string, client *http.Client) (string, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	meta, err := fetchResourceMetadata(ctx, client, strings.TrimRight(baseURL, "/"))
	if err != nil {
		return "", err
	}
	return meta.Resource, nil
}

// token returns a memoized token of tenant with scopes.
func (r *run) token(ctx context.Context, tenant Tenant, scopes []string) (string, error) {
	key := string(tenant) + "|" + strings.Join(scopes, " ")
	r.mu.Lock()
	tok, ok := r.tokenMemo[key]
	r.mu.Unlock()
	if ok {
		return tok, nil
	}
	tok, err := r.tokens.Token(ctx, tenant, scopes)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.tokenMemo[key] = tok
	r.mu.Unlock()
	return tok, nil
}

// maxReason bounds a reason in the report.
const maxReason = 1000

func (r *run) runCase(ctx context.Context, c Case, timeout time.Duration) (res Result) {
	res = Result{ID: c.ID, Title: c.Title, Group: c.Group, Proves: c.Proves, Operations: c.Operations, At: time.Now().UTC()}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := &T{ctx: cctx, r: r, c: &c}
	start := time.Now()
	defer func() {
		rec := recover()
		for i := len(t.cleanups) - 1; i >= 0; i-- {
			t.cleanups[i]()
		}
		res.Duration = time.Since(start)
		res.DurationMs = res.Duration.Milliseconds()
		switch v := rec.(type) {
		case nil:
			res.Verdict = Pass
		case outcome:
			res.Verdict, res.Reason = v.verdict, v.reason
		default:
			res.Verdict, res.Reason = Fail, fmt.Sprintf("the case panicked: %v\n%s", v, debug.Stack())
		}
		if res.Verdict == Fail && cctx.Err() != nil && ctx.Err() == nil {
			res.Reason = fmt.Sprintf("timed out after %s: %s", timeout, res.Reason)
		}
		res.Reason = truncate(res.Reason, maxReason)
	}()
	c.Run(t)
	return res
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// Counts tallies verdicts.
type Counts struct {
	Pass, Fail, Skip int
}

// Total is the number of results counted.
func (c Counts) Total() int { return c.Pass + c.Fail + c.Skip }

func (c *Counts) add(v Verdict) {
	switch v {
	case Pass:
		c.Pass++
	case Fail:
		c.Fail++
	default:
		c.Skip++
	}
}

// GroupCounts is the tally of one group.
type GroupCounts struct {
	Group Group
	Counts
}

// Summary tallies the report by group, in report order; groups that ran no
// case are left out.
func (rep *Report) Summary() (byGroup []GroupCounts, total Counts) {
	m := map[Group]*Counts{}
	for _, res := range rep.Results {
		if m[res.Group] == nil {
			m[res.Group] = &Counts{}
		}
		m[res.Group].add(res.Verdict)
		total.add(res.Verdict)
	}
	for _, g := range Groups() {
		if c := m[g]; c != nil {
			byGroup = append(byGroup, GroupCounts{Group: g, Counts: *c})
		}
	}
	return byGroup, total
}
