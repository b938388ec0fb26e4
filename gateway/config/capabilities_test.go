package config

import (
	"reflect"
	"slices"
	"testing"
)

// TestExposed resolves the capabilities of valid-full.yaml: an inline
// exposure, a renamed reference to a capability that wraps another (its
// guards stack innermost first, its executor and metadata are inherited),
// and no building block under its own id.
func TestExposed(t *testing.T) {
	cfg, err := Load("testdata/valid-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Exposed()
	var ids []string
	for _, x := range got {
		ids = append(ids, x.ID)
	}
	if want := []string{"github.list_issues", "github.create_pr", "ci.run_tests"}; !slices.Equal(ids, want) {
		t.Fatalf("exposed %v, want %v", ids, want)
	}
	li := got[0]
	if li.Declared != "" || li.Source != "proxy.expose[0]" || li.Title != "List GitHub issues" || li.Domain != "git" ||
		!slices.Equal(li.Aliases, []string{"issues", "bugs"}) || li.Executor == nil || li.Executor.Tool != "list_issues" || li.InputSchema == nil {
		t.Errorf("github.list_issues: %+v", li)
	}
	pr := got[1]
	if pr.Declared != "safe.create_pr" || pr.Source != "proxy.expose[1]" || pr.Title != "Create a PR behind green tests" || !pr.ExposeDirectly {
		t.Errorf("github.create_pr: %+v", pr)
	}
	if pr.Executor == nil || pr.Executor.Kind != ExecutorMCP || pr.Executor.Tool != "create_pull_request" {
		t.Errorf("github.create_pr runs %+v, want raw.create_pr's executor", pr.Executor)
	}
	var guards [][]string
	for _, g := range pr.Guards {
		guards = append(guards, g.Requires)
	}
	if want := [][]string{{"checked"}, {"tests_passed"}, {"checked"}}; !reflect.DeepEqual(guards, want) {
		t.Errorf("guards %v, want %v (wrapped, wrapper, exposure)", guards, want)
	}
	if !slices.Equal(pr.Tags, []string{"github", "write"}) || !slices.Equal(pr.Aliases, []string{"pull request", "pr", "pull-request"}) {
		t.Errorf("tags %v aliases %v", pr.Tags, pr.Aliases)
	}
	if !slices.Equal(pr.Produces, []string{"pr_opened", "pr_checked"}) || pr.Reliability.TimeoutMs != 60000 {
		t.Errorf("produces %v reliability %+v", pr.Produces, pr.Reliability)
	}
	if !slices.Equal(cfg.ConnectionNames(), []string{"crm", "github", "github_api", "shell"}) {
		t.Errorf("connection names %v", cfg.ConnectionNames())
	}
}

// TestExposedUnreferenced: a capability that nothing wraps or references is
// offered under its own id; inline exposures keep their order before them.
func TestExposedUnreferenced(t *testing.T) {
	cfg, err := Parse("c.yaml", []byte(`
capabilities:
  zeta: {title: Z}
  alpha: {title: A}
  inner: {title: I}
  outer: {wraps: inner}
proxy:
  expose:
    - name: first
    - capability: alpha
`))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range cfg.Exposed() {
		ids = append(ids, x.ID+"<"+x.Source)
	}
	want := []string{"first<proxy.expose[0]", "alpha<proxy.expose[1]", "outer<capabilities.outer", "zeta<capabilities.zeta"}
	if !slices.Equal(ids, want) {
		t.Errorf("exposed %v, want %v", ids, want)
	}
	if got := cfg.Exposed()[2]; got.Title != "I" {
		t.Errorf("outer inherits the title of inner: %+v", got)
	}
}

// TestExposedOutputSchema: the outermost declared output schema stands,
// as the input schema's does: the exposure's over the wrapper's over the
// wrapped capability's; an inline exposure has its own.
func TestExposedOutputSchema(t *testing.T) {
	cfg, err := Parse("c.yaml", []byte(`
capabilities:
  inner: {outputSchema: {type: object, title: inner}}
  outer: {wraps: inner}
  strict: {wraps: inner, outputSchema: {type: object, title: strict}}
proxy:
  expose:
    - {name: inline, outputSchema: {type: object, title: inline}}
    - {capability: strict, as: stricter, outputSchema: {type: object, title: stricter}}
    - {name: none}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, x := range cfg.Exposed() {
		got[x.ID] = x.OutputSchema["title"]
	}
	want := map[string]any{"inline": "inline", "stricter": "stricter", "outer": "inner", "none": nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("output schemas by capability %v, want %v", got, want)
	}
}

func TestTermKey(t *testing.T) {
	for in, want := range map[string]string{"Evidence  Pack": "evidence pack", " PR ": "pr", "évidence": "évidence"} {
		if got := TermKey(in); got != want {
			t.Errorf("TermKey(%q) = %q, want %q", in, got, want)
		}
	}
	for s, want := range map[string]bool{"evidence-pack": true, "evidence pack": true, "Café 2": true, "-x": false, "": false, "a\tb": false} {
		if ValidTerm(s) != want {
			t.Errorf("ValidTerm(%q) = %v", s, !want)
		}
	}
}
