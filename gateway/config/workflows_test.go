package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPatternsMatchSchema holds the loader's patterns to the schema's.
func TestPatternsMatchSchema(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	defs := root["$defs"].(map[string]any)
	if got := defs["identifier"].(map[string]any)["pattern"]; got != identifierPattern {
		t.Errorf("identifier pattern %v, want %s", got, identifierPattern)
	}
	if got := defs["evidenceName"].(map[string]any)["pattern"]; got != evidenceNamePattern {
		t.Errorf("evidenceName pattern %v, want %s", got, evidenceNamePattern)
	}
	from := defs["transition"].(map[string]any)["properties"].(map[string]any)["from"].(map[string]any)
	if from["pattern"] != identifierPattern {
		t.Errorf("transition.from pattern %v, want %s", from["pattern"], identifierPattern)
	}
	if got := defs["term"].(map[string]any)["pattern"]; got != termPattern {
		t.Errorf("term pattern %v, want %s", got, termPattern)
	}
	// Every propertyNames of the schema is the identifier (the lexicon's
	// is the term), which the semantic checks test keys against.
	var found []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if k == "propertyNames" {
					found = append(found, path)
					want := "#/$defs/identifier"
					if path == "/$defs/lexicon" {
						want = "#/$defs/term"
					}
					if child.(map[string]any)["$ref"] != want {
						t.Errorf("%s: propertyNames %v, want %s", path, child, want)
					}
				}
				walk(path+"/"+k, child)
			}
		case []any:
			for _, child := range v {
				walk(path+"[]", child)
			}
		}
	}
	walk("", root)
	slices.Sort(found)
	if want := []string{"/$defs/capabilities", "/$defs/connections", "/$defs/executor/properties/branches", "/$defs/lexicon", "/$defs/workflow/properties/states", "/$defs/workflows"}; !slices.Equal(found, want) {
		t.Errorf("propertyNames at %v, want %v (the key checks in check.go follow them)", found, want)
	}
}

// TestPropertyNameViolation: a bad key is reported once, at the key, even
// though the validator cannot locate it.
func TestPropertyNameViolation(t *testing.T) {
	data := "workflows:\n  ok:\n    version: 1\n    title: T\n    initial: a\n    states: {a: {}, b: {terminal: true}}\n    transitions: [{name: t, from: a, to: b}]\n  \"no good\": {}\n"
	le := mustNotParse(t, "p.yaml", data)
	var keyProblems int
	for _, p := range le.Problems {
		if p.Line == 0 || p.Field == "" {
			t.Errorf("unlocated problem %+v", p)
		}
		if strings.Contains(p.Message, "not a valid workflow id") {
			keyProblems++
			if p.Line != 8 || p.Column != 3 {
				t.Errorf("key problem at %d:%d, want 8:3", p.Line, p.Column)
			}
		}
	}
	if keyProblems != 1 {
		t.Errorf("%d key problems, want 1:\n%v", keyProblems, le)
	}
}

// examplePath is the example configuration shipped with the repository.
var examplePath = filepath.Join("..", "..", "examples", "praxec.yaml")

// TestExampleConfig loads examples/praxec.yaml, whose workflows other tests
// drive by name.
func TestExampleConfig(t *testing.T) {
	cfg, err := Load(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range cfg.Workflows {
			if !yield(id) {
				return
			}
		}
	})
	if want := []string{"deploy_pipeline", "guarded_merge", "release_approval", "validation"}; !slices.Equal(ids, want) {
		t.Fatalf("workflows %v, want %v", ids, want)
	}

	d := cfg.Workflows["deploy_pipeline"]
	if d.Version != 1 || d.Title != "Deploy Pipeline" || d.Description != "Lint, test, build, and deploy a service." ||
		!slices.Equal(d.Tags, []string{"deploy", "pipeline"}) || d.Initial != "lint" {
		t.Errorf("deploy_pipeline header: %+v", d)
	}
	var names []string
	for _, tr := range d.Transitions {
		names = append(names, tr.Name)
	}
	if want := []string{"run_lint", "run_tests", "build", "deploy", "abort"}; !slices.Equal(names, want) {
		t.Errorf("deploy_pipeline transitions %v, want %v", names, want)
	}
	if abort := d.Transitions[4]; !slices.Equal(abort.From, StringList{"lint", "test", "build", "ready_to_deploy"}) || abort.To != "aborted" {
		t.Errorf("abort: %+v", abort)
	}
	if build := d.Transitions[2]; build.Executor == nil || build.Executor.Kind != ExecutorWorkflow || build.Executor.DefinitionID != "validation" ||
		build.Set["validated"] != "$.output.validated" {
		t.Errorf("build: %+v", build)
	}
	if deploy := d.Transitions[3]; deploy.Prefill["confirm"] != true || len(deploy.Guards) != 1 || !slices.Equal(deploy.Guards[0].Requires, []string{"tests_passed"}) {
		t.Errorf("deploy: %+v", deploy)
	}
	if !d.States["deployed"].Terminal || !d.States["aborted"].Terminal || d.States["ready_to_deploy"].Terminal {
		t.Errorf("deploy_pipeline states: %+v", d.States)
	}
	if v := cfg.Workflows["validation"]; v.Transitions[0].Actor != ActorDeterministic || v.Transitions[0].Set["artifact"] != "$.input.artifact" {
		t.Errorf("validation: %+v", v)
	}
	if r := cfg.Workflows["release_approval"]; r.Transitions[1].Executor == nil || r.Transitions[1].Executor.Kind != ExecutorHuman ||
		r.Transitions[1].Executor.Queue != "releases" {
		t.Errorf("release_approval: %+v", r)
	}
	if g := cfg.Workflows["guarded_merge"]; !slices.Equal(g.Transitions[1].From, StringList{"open", "tested"}) || g.Transitions[1].Guards[0].Requires[0] != "tests_passed" {
		t.Errorf("guarded_merge: %+v", g)
	}
}

// TestExampleCommentedSections: the auth and policy sections the example
// shows in comments are valid once uncommented.
func TestExampleCommentedSections(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile(`^# ([a-z]+:)$`)
	var out []string
	uncommenting := false
	sections := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		switch {
		case section.MatchString(line):
			uncommenting = true
			sections++
			line = section.ReplaceAllString(line, "$1")
		case uncommenting && strings.HasPrefix(line, "#   "):
			line = strings.TrimPrefix(line, "#")
		default:
			uncommenting = false
		}
		out = append(out, line)
	}
	if sections != 2 {
		t.Fatalf("found %d commented sections, want 2 (auth and policy)", sections)
	}
	cfg, err := Parse("uncommented.yaml", []byte(strings.Join(out, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Auth.Issuers) == 0 || len(cfg.Policy.DenyDestructive) == 0 {
		t.Errorf("the uncommented sections were not read: %+v %+v", cfg.Auth, cfg.Policy)
	}
}
