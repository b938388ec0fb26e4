package discovery

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// testIndex is a small catalogue whose scores the table below computes by
// hand from the weights.
func testIndex(t testing.TB) *Index {
	t.Helper()
	x, err := New([]Item{
		{ID: "deploy_pipeline", Kind: KindWorkflow, Title: "Deploy Pipeline", Description: "Lint, test, build, and deploy a service.", Tags: []string{"deploy", "pipeline"}},
		{ID: "release_approval", Kind: KindWorkflow, Title: "Release with approval", Description: "Prepare a release and hold it until a person approves it.", Tags: []string{"release", "approval"}},
		{ID: "github.list_issues", Kind: KindCapability, Title: "List GitHub issues", Description: "List issues from a GitHub repository.",
			Tags: []string{"github", "issues", "read"}, Aliases: []string{"bugs", "tickets"}},
		{ID: "github.create_pr", Kind: KindCapability, Title: "Create a pull request", Tags: []string{"github", "write"}, Aliases: []string{"pr", "pull-request"}},
		{ID: "run_tests", Kind: KindCapability, Description: "Run the test suite before a deploy."},
		{ID: "github", Kind: KindConnection},
		{ID: "alpha", Kind: KindCapability, Tags: []string{"same"}},
		{ID: "beta", Kind: KindCapability, Tags: []string{"same"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

type hit struct {
	id    string
	score float64
}

func hits(hs []Hit) []hit {
	out := []hit{}
	for _, h := range hs {
		out = append(out, hit{h.Item.ID, h.Score})
	}
	return out
}

func TestSearch(t *testing.T) {
	x := testIndex(t)
	for _, tc := range []struct {
		name string
		q    Query
		want []hit
	}{
		// id 6 + title 4 + tag 3 + description 1 = 14, the seed's score;
		// run_tests mentions deploy in its description only.
		{"seed example", Query{Text: "deploy", Kinds: []Kind{KindWorkflow}}, []hit{{"deploy_pipeline", 14}}},
		{"all kinds", Query{Text: "deploy"}, []hit{{"deploy_pipeline", 14}, {"run_tests", 1}}},
		{"case and punctuation", Query{Text: "DEPLOY!!"}, []hit{{"deploy_pipeline", 14}, {"run_tests", 1}}},
		// The whole query is an id: 10, plus its tokens.
		{"exact id", Query{Text: "github.list_issues"}, []hit{
			{"github.list_issues", 10 + (6 + 4 + 3 + 1) + (6 + 4 + 1) + (6 + 4 + 3 + 1)}, // github, list, issues
			{"github", 6 + 4},
			{"github.create_pr", 6 + 3}}},
		{"exact id any case", Query{Text: "  GitHub  "}, []hit{{"github", 10 + 6 + 4}, {"github.list_issues", 6 + 4 + 3 + 1}, {"github.create_pr", 6 + 3}}},
		// Aliases weigh 4 per token.
		{"alias", Query{Text: "bugs"}, []hit{{"github.list_issues", 4}}},
		{"alias tokens", Query{Text: "pull request"}, []hit{{"github.create_pr", (4 + 4) + (4 + 4)}}},
		{"tag", Query{Text: "read"}, []hit{{"github.list_issues", 3}}},
		{"repeated token counts once", Query{Text: "bugs bugs BUGS"}, []hit{{"github.list_issues", 4}}},
		{"stop words and one letter find nothing", Query{Text: "the a of to"}, []hit{}},
		{"no match", Query{Text: "kubernetes"}, []hit{}},
		// Equal scores come back in id order.
		{"ties by id", Query{Text: "same"}, []hit{{"alpha", 3}, {"beta", 3}}},
		{"kind filter", Query{Text: "github", Kinds: []Kind{KindConnection}}, []hit{{"github", 20}}},
		{"limit", Query{Text: "github", Limit: 2}, []hit{{"github", 20}, {"github.list_issues", 14}}},
		{"blank lists in id order", Query{Text: " ", Limit: 3}, []hit{{"alpha", 0}, {"beta", 0}, {"deploy_pipeline", 0}}},
		{"blank of one kind", Query{Kinds: []Kind{KindWorkflow}}, []hit{{"deploy_pipeline", 0}, {"release_approval", 0}}},
		{"blank of two kinds", Query{Kinds: []Kind{KindWorkflow, KindConnection}}, []hit{{"deploy_pipeline", 0}, {"github", 0}, {"release_approval", 0}}},
		{"a kind with no items", Query{Text: "github", Kinds: []Kind{KindSkill}}, []hit{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hits(x.Search(tc.q)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Search(%+v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestSearchLimits(t *testing.T) {
	var items []Item
	for i := range 150 {
		items = append(items, Item{ID: fmt.Sprintf("cap_%03d", i), Kind: KindCapability, Tags: []string{"bulk"}})
	}
	x, err := New(items)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ limit, want int }{{0, DefaultLimit}, {-1, DefaultLimit}, {5, 5}, {100, 100}, {1000, MaxLimit}} {
		for _, text := range []string{"bulk", ""} {
			got := x.Search(Query{Text: text, Limit: tc.limit})
			if len(got) != tc.want {
				t.Errorf("limit %d, query %q: %d results, want %d", tc.limit, text, len(got), tc.want)
			}
			// All scores tie: the first ids come back, in order.
			for i, h := range got {
				if want := fmt.Sprintf("cap_%03d", i); h.Item.ID != want {
					t.Fatalf("limit %d, query %q: result %d is %s, want %s", tc.limit, text, i, h.Item.ID, want)
				}
			}
		}
	}
}

// TestSearchStable: the same query answers the same order every time,
// whatever the order items were given in.
func TestSearchStable(t *testing.T) {
	x := testIndex(t)
	first := hits(x.Search(Query{Text: "github issues pull same", Limit: 100}))
	for range 50 {
		if got := hits(x.Search(Query{Text: "github issues pull same", Limit: 100})); !reflect.DeepEqual(got, first) {
			t.Fatalf("order changed: %v then %v", first, got)
		}
	}
	items := slices.Clone(x.items)
	slices.Reverse(items)
	y, err := New(items)
	if err != nil {
		t.Fatal(err)
	}
	if got := hits(y.Search(Query{Text: "github issues pull same", Limit: 100})); !reflect.DeepEqual(got, first) {
		t.Fatalf("order depends on the input order: %v, want %v", got, first)
	}
	if !slices.IsSortedFunc(first, func(a, b hit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	}) {
		t.Errorf("not ordered by score then id: %v", first)
	}
}

func TestNewRefuses(t *testing.T) {
	for name, items := range map[string][]Item{
		"duplicate id": {{ID: "a", Kind: KindWorkflow}, {ID: "a", Kind: KindCapability}},
		"no id":        {{Kind: KindWorkflow}},
		"unknown kind": {{ID: "a", Kind: "lexicon"}},
	} {
		if _, err := New(items); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestLookup(t *testing.T) {
	x := testIndex(t)
	it, ok := x.Lookup("github.list_issues")
	if !ok || it.Kind != KindCapability || it.Title != "List GitHub issues" {
		t.Errorf("Lookup = %+v, %v", it, ok)
	}
	if _, ok := x.Lookup("GitHub.List_Issues"); ok {
		t.Error("Lookup is exact: another case must not match")
	}
	if it, _ := x.Lookup("run_tests"); it.Title != "run_tests" || it.Tags == nil {
		t.Errorf("an item without title or tags: %+v", it)
	}
}

// TestBuildExample indexes examples/praxec.yaml: its workflows, its exposed
// capabilities (not the wrapped building block, nor the wrapper under its
// own id) and nothing else.
func TestBuildExample(t *testing.T) {
	cfg, err := config.Parse(examples.PraxecYAMLName, examples.PraxecYAML)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := workflow.Compile(cfg.Workflows)
	if err != nil {
		t.Fatal(err)
	}
	x, err := Build(reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range x.Search(Query{Limit: MaxLimit}) {
		ids = append(ids, string(h.Item.Kind)+":"+h.Item.ID)
	}
	want := []string{"workflow:deploy_pipeline", "capability:github.create_pr", "capability:github.list_issues", "workflow:guarded_merge",
		"workflow:release_approval", "capability:run_tests", "workflow:validation"}
	if !slices.Equal(ids, want) {
		t.Errorf("indexed %v, want %v", ids, want)
	}
	pr, _ := x.Lookup("github.create_pr")
	if pr.Title != "Create a pull request" || pr.Capability == nil || pr.Capability.Declared != "safe.create_pr" ||
		len(pr.Capability.Guards) != 1 || string(pr.InputSchema) == "" {
		t.Errorf("github.create_pr: %+v %+v", pr, pr.Capability)
	}
	// An id token and an alias; the tag pull-request has the tokens pull
	// and request.
	if got := hits(x.Search(Query{Text: "pr"})); !reflect.DeepEqual(got, []hit{{"github.create_pr", 6 + 4}}) {
		t.Errorf("pr: %v", got)
	}
	cfg.SetConnectionNames([]string{"github"})
	y, err := Build(reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := y.Lookup("github"); !ok || c.Kind != KindConnection {
		t.Errorf("connection: %+v, %v", c, ok)
	}
	if _, err := Build(nil, nil); err != nil {
		t.Errorf("an empty catalogue: %v", err)
	}
}

func TestTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"github.list_issues":                       {"github", "list", "issues"},
		"Lint, test, build, and deploy a service.": {"lint", "test", "build", "deploy", "service"},
		"The THE the x":                            nil,
		"café-crème 2 v2":                          {"café", "crème", "v2"},
	} {
		if got := Tokens(in); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkSearch10k searches a catalogue of 10,000 capabilities, as an
// agent would: words that match many entries, a rare word, an exact id and
// a filtered listing.
func BenchmarkSearch10k(b *testing.B) {
	x, err := New(catalogue10k())
	if err != nil {
		b.Fatal(err)
	}
	queries := []struct {
		name string
		q    Query
	}{
		{"two_frequent_words", Query{Text: "list issues"}},
		{"four_words_limit_20", Query{Text: "create release in git", Limit: 20}},
		{"exact_id", Query{Text: "git.list_issues_00000"}},
		{"three_words_limit_100", Query{Text: "invoices archive billing", Limit: 100}},
		{"no_match", Query{Text: "nothing-matches-this"}},
		{"listing_50", Query{Kinds: []Kind{KindCapability}, Limit: 50}},
	}
	for _, q := range queries {
		if q.name != "no_match" && len(x.Search(q.q)) == 0 {
			b.Fatalf("%+v found nothing", q.q)
		}
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x.Search(q.q)
			}
		})
	}
}

// catalogue10k generates 10,000 capabilities over 8 domains, 8 verbs and 10
// nouns, so common words match a thousand entries or more.
func catalogue10k() []Item {
	domains := []string{"git", "ticket", "deploy", "database", "storage", "chat", "billing", "search"}
	verbs := []string{"list", "create", "update", "delete", "get", "sync", "archive", "export"}
	nouns := []string{"issues", "pulls", "releases", "users", "records", "files", "messages", "invoices", "indexes", "jobs"}
	items := make([]Item, 10000)
	for i := range items {
		d, v, n := domains[i%len(domains)], verbs[(i/8)%len(verbs)], nouns[(i/64)%len(nouns)]
		items[i] = Item{
			ID:          fmt.Sprintf("%s.%s_%s_%05d", d, v, n, i),
			Kind:        KindCapability,
			Title:       fmt.Sprintf("%s %s in %s (%d)", strings.ToUpper(v[:1])+v[1:], n, d, i),
			Description: fmt.Sprintf("Call the %s backend to %s %s for a project; variant %d of the generated catalogue.", d, v, n, i),
			Tags:        []string{d, v, n},
			Aliases:     []string{fmt.Sprintf("%s-%s-%d", v, n, i%97)},
		}
	}
	return items
}

// BenchmarkBuild10k builds the index of 10,000 capabilities (once, at start).
func BenchmarkBuild10k(b *testing.B) {
	items := catalogue10k()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(items); err != nil {
			b.Fatal(err)
		}
	}
}
