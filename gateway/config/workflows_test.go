package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestWorkflowProblems holds every class of workflow and policy problem to
// its exact wording and position.
func TestWorkflowProblems(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{
			name: "UnknownMember",
			yaml: `workflows:
  w:
    version: 1
    title: W
    intial: a
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions: [{name: t, from: a, to: b}]
`,
			want: []string{`p.yaml:5:5: workflows.w.intial: is not a known field; did you mean "initial"?`},
		},
		{
			name: "MemberOfAnotherExecutorKind",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - name: t
        from: a
        to: b
        executor:
          kind: human
          queue: q
          tool: create_pull_request
`,
			want: []string{"p.yaml:14:11: workflows.w.transitions[0].executor.tool: is not a known field of a human executor (tool belongs to mcp executors); known fields: kind, queue, approver"},
		},
		{
			name: "UnknownApprover",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: t, from: a, to: b, executor: {kind: human, queue: q, approver: anyone}}
`,
			want: []string{"p.yaml:8:79: workflows.w.transitions[0].executor.approver: must be one of queue, host"},
		},
		{
			name: "UnknownExecutorKind",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: t, from: a, to: b, executor: {kind: shell, prompt: summarise}}
`,
			want: []string{"p.yaml:8:52: workflows.w.transitions[0].executor.kind: must be one of noop, human, workflow, mcp, cli, rest, parallel, llm, script"},
		},
		{
			name: "RequiredByExecutorKind",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: t, from: a, to: b, executor: {kind: mcp, connection: github}}
connections:
  github: {kind: mcp, command: github-mcp-server}
`,
			want: []string{"p.yaml:8:35: workflows.w.transitions[0].executor.tool: is required by an mcp executor"},
		},
		{
			name: "UndeclaredStates",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: start
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: t, from: [a, c], to: bb}
`,
			want: []string{
				"p.yaml:5:14: workflows.w.initial: names no declared state; declared states: a, b",
				"p.yaml:8:29: workflows.w.transitions[0].from[1]: names no declared state; declared states: a, b",
				"p.yaml:8:37: workflows.w.transitions[0].to: names no declared state; declared states: a, b",
			},
		},
		{
			name: "LeavesTerminalState",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: t, from: a, to: b}
      - {name: again, from: b, to: a}
`,
			want: []string{"p.yaml:9:29: workflows.w.transitions[1].from: is a terminal state: no transition may leave it"},
		},
		{
			name: "DuplicateTransitionName",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {}, c: {terminal: true}}
    transitions:
      - {name: t, from: a, to: c}
      - {name: t, from: b, to: c}
`,
			want: []string{"p.yaml:9:16: workflows.w.transitions[1].name: duplicates workflows.w.transitions[0].name (line 8): transition names are unique within a workflow; to leave several states by one transition, list them under from"},
		},
		{
			name: "NoTerminalState",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {}}
    transitions: [{name: t, from: a, to: b}]
`,
			want: []string{"p.yaml:6:5: workflows.w.states: has no terminal state: mark the states where the workflow ends with terminal: true"},
		},
		{
			name: "UndeclaredSubWorkflow",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: t, from: a, to: b, executor: {kind: workflow, definitionId: validation}}
`,
			want: []string{"p.yaml:8:76: workflows.w.transitions[0].executor.definitionId: names no declared workflow; declared workflows: w"},
		},
		{
			name: "NestingCycle",
			yaml: `workflows:
  a:
    version: 1
    title: A
    initial: s
    states: {s: {onEnter: {kind: workflow, definitionId: b}}, e: {terminal: true}}
    transitions: [{name: t, from: s, to: e}]
  b:
    version: 1
    title: B
    initial: s
    states: {s: {}, e: {terminal: true}}
    transitions: [{name: t, from: s, to: e, executor: {kind: workflow, definitionId: a}}]
`,
			want: []string{
				"p.yaml:6:58: workflows.a.states.s.onEnter.definitionId: runs b, which leads back to a (a → b → a): workflows cannot nest into a cycle",
				"p.yaml:13:86: workflows.b.transitions[0].executor.definitionId: runs a, which leads back to b (b → a → b): workflows cannot nest into a cycle",
			},
		},
		{
			name: "RunsItself",
			yaml: `workflows:
  a:
    version: 1
    title: A
    initial: s
    states: {s: {}, e: {terminal: true}}
    transitions: [{name: t, from: s, to: e, executor: {kind: workflow, definitionId: a}}]
`,
			want: []string{"p.yaml:7:86: workflows.a.transitions[0].executor.definitionId: names the workflow it belongs to (a → a): a workflow cannot run itself"},
		},
		{
			name: "DeterministicHuman",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - name: t
        from: a
        to: b
        actor: deterministic
        executor: {kind: human}
`,
			want: []string{"p.yaml:11:16: workflows.w.transitions[0].actor: is deterministic, but the executor is human (line 12): the runtime fires a deterministic transition by itself, with no one to approve it; make the actor human or agent"},
		},
		{
			name: "SetPath",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - name: t
        from: a
        to: b
        set:
          good: $.output.id
          bad: $.result.id
          empty: $.context
`,
			want: []string{
				"p.yaml:13:16: workflows.w.transitions[0].set.bad: is a path (it starts with $.), but not into $.arguments., $.context., $.input. or $.output.",
				"p.yaml:14:18: workflows.w.transitions[0].set.empty: is a path into $.context, but names no member: write $.context.NAME",
			},
		},
		{
			name: "ExecutorPath",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - name: t
        from: a
        to: b
        executor:
          kind: mcp
          connection: github
          tool: create_pull_request
          map: {title: $.arguments.title, head: $.output.branch}
connections:
  github: {kind: mcp, command: github-mcp-server}
`,
			want: []string{"p.yaml:15:49: workflows.w.transitions[0].executor.map.head: is a path (it starts with $.), but not into $.arguments., $.context. or $.input.: an executor runs before there is an output to read"},
		},
		{
			name: "InputSchemaRoot",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    inputSchema: {properties: {x: {type: string}}}
    transitions:
      - {name: t, from: a, to: b, inputSchema: {type: string}}
`,
			want: []string{
				"p.yaml:7:5: workflows.w.inputSchema: must describe an object: add type: object at its root",
				"p.yaml:9:55: workflows.w.transitions[0].inputSchema.type: must be object: an input schema describes an object whose members are the arguments",
			},
		},
		{
			name: "InputSchemaRemoteReference",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - name: t
        from: a
        to: b
        inputSchema:
          type: object
          properties:
            who: {$ref: "https://schemas.example.com/person.json"}
`,
			want: []string{"p.yaml:11:9: workflows.w.transitions[0].inputSchema: refers to https://schemas.example.com/person.json, outside itself: an input schema may use local references only (#/$defs/NAME)"},
		},
		{
			name: "InputSchemaInvalid",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - name: t
        from: a
        to: b
        inputSchema:
          type: object
          required: coverage
`,
			want: []string{"p.yaml:13:21: workflows.w.transitions[0].inputSchema.required: is not valid in a JSON Schema: got string, want array"},
		},
		{
			name: "WorkflowIDAndStateName",
			yaml: `workflows:
  "deploy pipeline":
    version: 1
    title: W
    initial: a
    states: {a: {}, "b/c": {terminal: true}}
    transitions: [{name: t, from: a, to: a}]
`,
			want: []string{
				`p.yaml:2:3: workflows["deploy pipeline"]: is not a valid workflow id: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit`,
				`p.yaml:6:21: workflows["deploy pipeline"].states["b/c"]: is not a valid state name: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit`,
			},
		},
		{
			name: "ScriptWithoutScriptsDir",
			yaml: `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: t, from: a, to: b, executor: {kind: script, script: quote}}
`,
			want: []string{"p.yaml:8:68: workflows.w.transitions[0].executor.script: names a script, but the file sets no scripts.dir: add scripts: {dir: DIR} naming the directory of the *.cel files"},
		},
		{
			name: "ScriptExecutorMembers",
			yaml: `scripts: {dir: scripts}
workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: t1, from: a, to: b, executor: {kind: script, script: quote, timeoutMs: 60000}}
      - {name: t2, from: a, to: b, executor: {kind: script, script: "not an id"}}
      - {name: t3, from: a, to: b, executor: {kind: script, script: quote, connection: api}}
`,
			want: []string{
				"p.yaml:9:87: workflows.w.transitions[0].executor.timeoutMs: is longer than a script may run (10000 ms at most): a script is a bounded computation",
				"p.yaml:10:69: workflows.w.transitions[1].executor.script: must be an identifier: 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit",
				"p.yaml:11:76: workflows.w.transitions[2].executor.connection: is not a known field of a script executor (connection belongs to mcp, cli, rest and llm executors); known fields: kind, script, timeoutMs",
			},
		},
		{
			name: "ScriptsSection",
			yaml: `scripts: {dir: "", path: x}
`,
			want: []string{
				"p.yaml:1:16: scripts.dir: must not be empty",
				`p.yaml:1:20: scripts.path: is not a known field; known fields: dir`,
			},
		},
		{
			name: "PolicyToolSet",
			yaml: `policy:
  denyDestructive:
    - toolSet: praxecc
    - {tenant: acme, toolset: praxec}
`,
			want: []string{
				`p.yaml:3:16: policy.denyDestructive[0].toolSet: is not a known tool set; did you mean "praxec"?`,
				`p.yaml:4:22: policy.denyDestructive[1].toolset: is not a known field; did you mean "toolSet"?`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.yaml))
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Parse = %v, want a *LoadError", err)
			}
			if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, tc.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
		})
	}
}

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
	_, err := Parse("p.yaml", []byte(data))
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Parse = %v, want a *LoadError", err)
	}
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
		t.Errorf("%d key problems, want 1:\n%v", keyProblems, err)
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
