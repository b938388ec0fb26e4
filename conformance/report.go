package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/restclient"
)

// Baseline lists known failures: case id -> why it fails. A failure in the
// baseline does not fail a run.
type Baseline map[string]string

// ParseBaseline reads a baseline: one case per line, its id, then
// whitespace, then the reason it is known to fail. Blank lines and lines
// starting with # are ignored. A line without a reason, a case named twice
// and an id that names no case of the suite are errors.
func ParseBaseline(r io.Reader) (Baseline, error) {
	b := Baseline{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			id, reason = line[:i], strings.TrimSpace(line[i:])
		}
		switch {
		case reason == "":
			return nil, fmt.Errorf("baseline line %d: %s has no reason: write the case id, then why it is known to fail", n, id)
		case b[id] != "":
			return nil, fmt.Errorf("baseline line %d: %s is listed twice", n, id)
		}
		if _, ok := LookupCase(id); !ok {
			return nil, fmt.Errorf("baseline line %d: %s is not a case of the suite", n, id)
		}
		b[id] = reason
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	return b, nil
}

// Outcome sorts a report's failures against a baseline.
type Outcome struct {
	// Failed are the failures outside the baseline: they fail the run.
	Failed []Result
	// Known are the failures the baseline expects.
	Known []Result
	// Fixed are baseline cases that ran and did not fail: the baseline
	// should drop them.
	Fixed []string
}

// Compare sorts the report's failures against b.
func (rep *Report) Compare(b Baseline) Outcome {
	var o Outcome
	for _, res := range rep.Results {
		_, known := b[res.ID]
		switch {
		case res.Verdict == Fail && known:
			o.Known = append(o.Known, res)
		case res.Verdict == Fail:
			o.Failed = append(o.Failed, res)
		case known && res.Verdict == Pass:
			o.Fixed = append(o.Fixed, res.ID)
		}
	}
	slices.Sort(o.Fixed)
	return o
}

// Recorded is the target's answer to recording a report.
type Recorded struct {
	RunID      string `json:"runId"`
	RecordedAt string `json:"recordedAt"`
	Passed     int    `json:"passed"`
	Failed     int    `json:"failed"`
	Skipped    int    `json:"skipped"`
}

// Record stores the report in the target as coverage evidence, through its
// operator endpoint POST /v8/coverage/runs, with a token of tenant A that
// has the scope coverage:write.
func (rep *Report) Record(ctx context.Context, target Target) (*Recorded, error) {
	if target.Tokens == nil {
		return nil, fmt.Errorf("conformance: record: the target needs a token source")
	}
	tok, err := target.Tokens.Token(ctx, TenantA, []string{string(contracts.ScopeCoverageWrite)})
	if err != nil {
		// Token sources that only hold full tokens can still record.
		if tok, err = target.Tokens.Token(ctx, TenantA, AllScopes()); err != nil {
			return nil, fmt.Errorf("conformance: record: a token with coverage:write: %w", err)
		}
	}
	hc := target.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	c, err := restclient.New(target.BaseURL, &restclient.Options{HTTPClient: hc, Token: restclient.StaticToken(tok)})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(ctx, http.MethodPost, contracts.CoverageRunsPath, nil, nil, body)
	if err != nil {
		return nil, fmt.Errorf("conformance: record: %w", err)
	}
	if resp.Status != http.StatusCreated && resp.Status != http.StatusOK {
		return nil, fmt.Errorf("conformance: record: POST %s answered %s", contracts.CoverageRunsPath, describe(resp))
	}
	var out Recorded
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("conformance: record: the answer does not decode: %w", err)
	}
	return &out, nil
}
