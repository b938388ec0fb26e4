package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/praxa/praxa/conformance"
)

func init() {
	register(command{name: "conformance", summary: "check a running gateway against the contract (black box, over HTTP and MCP)", run: runConformance})
}

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// parseInterspersed parses flags that may come before and after positional
// arguments ("praxa conformance URL --json") and returns the positionals.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func runConformance(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "conformance", "URL")
	var groups, cases listFlag
	fs.Var(&groups, "group", "run only this group (repeatable, or a comma list): "+groupNames())
	fs.Var(&cases, "case", "run only this case (repeatable, or a comma list), e.g. AUTH-001")
	asJSON := fs.Bool("json", false, "print the machine report (JSON) on stdout; progress goes to stderr")
	baselineFile := fs.String("baseline", "", "known failures `FILE`, one per line: CASE-ID then the reason; they do not fail the run")
	devDataDir := fs.String("dev-data-dir", "", "sign tokens with the dev issuer of this data directory (a target run with praxa serve --dev)")
	issuerAddr := fs.String("issuer-addr", "127.0.0.1:8089", "where the suite's own token issuer listens (when not --dev-data-dir)")
	issuerKeyDir := fs.String("issuer-key-dir", "", "keep the own issuer's signing key in this directory across runs")
	audience := fs.String("audience", "", "the target's resource identifier (default: read from its protected resource metadata)")
	tenantClaim := fs.String("tenant-claim", conformance.DefaultTenantClaim, "the claim that carries the tenant")
	record := fs.Bool("record", false, "store the report in the target as coverage evidence (POST /v8/coverage/runs, scope coverage:write)")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on the whole run")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		fmt.Fprintln(env.stderr, "praxa conformance: name the target's base URL, e.g. praxa conformance http://127.0.0.1:8080")
		return errUsage
	}
	baseURL := strings.TrimRight(positional[0], "/")
	var baseline conformance.Baseline
	if *baselineFile != "" {
		f, err := os.Open(*baselineFile)
		if err != nil {
			return err
		}
		baseline, err = conformance.ParseBaseline(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *baselineFile, err)
		}
	}
	selGroups := make([]conformance.Group, len(groups))
	for i, g := range groups {
		selGroups[i] = conformance.Group(g)
	}
	selected, err := conformance.Select(selGroups, cases)
	if err != nil {
		fmt.Fprintf(env.stderr, "praxa conformance: %v\n", err)
		return errUsage
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	target := conformance.Target{BaseURL: baseURL}
	var instructions string
	if *devDataDir != "" {
		info, is, err := loadDevIssuer(*devDataDir)
		if err != nil {
			return err
		}
		aud := info.Audience
		if *audience != "" {
			aud = *audience
		}
		target.Tokens = &conformance.IssuerTokens{Issuer: is, IssuerURL: info.Issuer, Audience: aud, TenantClaim: *tenantClaim}
	} else {
		own, err := conformance.StartIssuer(*issuerAddr, *issuerKeyDir)
		if errors.Is(err, syscall.EADDRINUSE) {
			err = listenError(*issuerAddr, listenSetting{name: "--issuer-addr"}, err)
		}
		if err != nil {
			return err
		}
		defer own.Close()
		aud := *audience
		if aud == "" {
			if aud, err = conformance.DiscoverResource(ctx, baseURL, nil); err != nil {
				return err
			}
		}
		tokens := own.Tokens(aud)
		tokens.TenantClaim = *tenantClaim
		target.Tokens = tokens
		instructions = tokens.TrustInstructions()
		fmt.Fprintln(env.stderr, instructions)
	}

	progress := env.stdout
	if *asJSON {
		progress = env.stderr
	}
	p := newProgress(progress, baseline)
	rep, err := conformance.Run(ctx, target, &conformance.Options{Groups: selGroups, Cases: cases,
		Started: p.started, Finished: p.finished})
	p.done()
	if errors.Is(err, conformance.ErrUntrusted) && instructions != "" {
		return fmt.Errorf("%w\n(the target must trust the suite's issuer: see above; a target run with praxa serve --dev already trusts its own dev issuer: add --dev-data-dir DIR, its data directory, and the suite signs with that issuer instead)", err)
	}
	if err != nil {
		return err
	}
	if len(rep.Results) != len(selected) {
		return fmt.Errorf("%d of %d cases ran", len(rep.Results), len(selected))
	}
	outcome := rep.Compare(baseline)
	printSummary(progress, rep, outcome)
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	if *record {
		rec, err := rep.Record(ctx, target)
		if err != nil {
			return err
		}
		fmt.Fprintf(progress, "recorded as coverage run %s at %s\n", rec.RunID, rec.RecordedAt)
	}
	if n := len(outcome.Failed); n > 0 {
		return fmt.Errorf("%d case(s) failed outside the baseline", n)
	}
	return nil
}

func groupNames() string {
	var names []string
	for _, g := range conformance.Groups() {
		names = append(names, string(g))
	}
	return strings.Join(names, ", ")
}

// progress prints one line per case and, on a terminal, a progress bar
// below them.
type progress struct {
	w        io.Writer
	terminal bool
	baseline conformance.Baseline
}

func newProgress(w io.Writer, baseline conformance.Baseline) *progress {
	p := &progress{w: w, baseline: baseline}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

const barWidth = 30

func (p *progress) started(c conformance.Case, i, total int) {
	if !p.terminal {
		return
	}
	filled := barWidth * i / total
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d %s", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), i, total, c.ID)
}

func (p *progress) finished(r conformance.Result, _, _ int) {
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	verdict := strings.ToUpper(string(r.Verdict))
	if _, known := p.baseline[r.ID]; known && r.Verdict == conformance.Fail {
		verdict = "KNOWN"
	}
	fmt.Fprintf(p.w, "%-5s %-28s %s (%s)\n", verdict, r.ID, r.Title, r.Duration.Round(time.Millisecond))
	if r.Reason != "" {
		fmt.Fprintf(p.w, "      %s\n", strings.ReplaceAll(r.Reason, "\n", "\n      "))
	}
}

func (p *progress) done() {
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func printSummary(w io.Writer, rep *conformance.Report, o conformance.Outcome) {
	byGroup, total := rep.Summary()
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tPASS\tFAIL\tSKIP")
	for _, g := range byGroup {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", g.Group, g.Pass, g.Fail, g.Skip)
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\n", total.Pass, total.Fail, total.Skip)
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range o.Known {
		fmt.Fprintf(w, "known failure %s (baseline)\n", r.ID)
	}
	for _, id := range o.Fixed {
		fmt.Fprintf(w, "%s passes now: remove it from the baseline\n", id)
	}
	if len(o.Failed) == 0 {
		fmt.Fprintf(w, "%s: no failure outside the baseline (%d cases)\n", rep.Target, total.Total())
		return
	}
	fmt.Fprintf(w, "%s: %d failure(s) outside the baseline:", rep.Target, len(o.Failed))
	for _, r := range o.Failed {
		fmt.Fprintf(w, " %s", r.ID)
	}
	fmt.Fprintln(w)
}
