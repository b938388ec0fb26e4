package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// schemaDef returns the definition name of schema.json's $defs.
func schemaDef(t *testing.T, name string) map[string]any {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	return root["$defs"].(map[string]any)[name].(map[string]any)
}

// kindRules reads the kind enum and the if/then rules of the schema
// definition def: the enum in order, and for each kind the members its
// rule admits (sorted) and those it requires. Every rule must be closed.
func kindRules(t *testing.T, def map[string]any) (enum []Kind, members, required map[Kind][]string) {
	t.Helper()
	for _, v := range def["properties"].(map[string]any)["kind"].(map[string]any)["enum"].([]any) {
		enum = append(enum, Kind(v.(string)))
	}
	members, required = map[Kind][]string{}, map[Kind][]string{}
	for _, r := range def["allOf"].([]any) {
		r := r.(map[string]any)
		kind := Kind(r["if"].(map[string]any)["properties"].(map[string]any)["kind"].(map[string]any)["const"].(string))
		then := r["then"].(map[string]any)
		if then["additionalProperties"] != false {
			t.Errorf("the rule of kind %s is not closed", kind)
		}
		for name := range then["properties"].(map[string]any) {
			members[kind] = append(members[kind], name)
		}
		slices.Sort(members[kind])
		req, _ := then["required"].([]any)
		for _, name := range req {
			required[kind] = append(required[kind], name.(string))
		}
	}
	return enum, members, required
}

// structMembers returns the JSON names of the fields of T, sorted.
func structMembers[T any]() []string {
	var out []string
	for f := range reflect.TypeFor[T]().Fields() {
		out = append(out, jsonName(f))
	}
	slices.Sort(out)
	return out
}

// holdKinds holds the kinds of one schema definition (executor or
// connection) to the table: the enum lists want in order, the if/then
// rules admit what members says of each kind, require nothing they do
// not admit, and between them admit exactly the members of the Go type
// (fields).
func holdKinds(t *testing.T, what string, def map[string]any, want []Kind, members func(Kind) []string, fields []string) {
	t.Helper()
	enum, rules, required := kindRules(t, def)
	if !slices.Equal(enum, want) {
		t.Errorf("%s: the schema's kinds are %v, the table's %v", what, enum, want)
	}
	if len(rules) != len(want) {
		t.Errorf("%s: the schema has rules for %d kinds, the table %d", what, len(rules), len(want))
	}
	var union []string
	for _, k := range want {
		m := slices.Sorted(slices.Values(members(k)))
		if !slices.Equal(rules[k], m) {
			t.Errorf("%s %s: the schema admits %v, the table %v", what, k, rules[k], m)
		}
		for _, name := range required[k] {
			if !slices.Contains(m, name) {
				t.Errorf("%s %s: the schema requires %s, which the table does not admit", what, k, name)
			}
		}
		union = append(union, m...)
	}
	slices.Sort(union)
	if union = slices.Compact(union); !slices.Equal(union, fields) {
		t.Errorf("%s: the kinds admit %v, the Go type has %v", what, union, fields)
	}
}

// TestKindsMatchSchema holds the table of kinds to schema.json: the kind
// enums of executors and connections, their if/then member lists and the
// Executor and Connection types.
func TestKindsMatchSchema(t *testing.T) {
	holdKinds(t, "executor", schemaDef(t, "executor"), Kinds(), Kind.Members, structMembers[Executor]())
	holdKinds(t, "connection", schemaDef(t, "connection"), ConnectionKinds(), Kind.ConnectionMembers, structMembers[Connection]())
	for _, k := range Kinds() {
		if c := k.Connection(); c != "" && !slices.Contains(ConnectionKinds(), c) {
			t.Errorf("%s executors name connections of kind %s, which no connection has", k, c)
		}
		if k.NeedsConnection() && k.Runs() != RunRunner {
			t.Errorf("%s executors call a connection, but not through a runner", k)
		}
		if k.Branchable() && (k.NeedsApproval() || k.Runs() != RunNothing && k.Runs() != RunRunner) {
			t.Errorf("%s may be a branch, but a branch is one call", k)
		}
	}
}

// describedKinds returns the kinds a description names as the ones it
// speaks of: each "; "-separated part that opens with "k1, k2: " names
// k1 and k2.
func describedKinds(desc string) []Kind {
	opener := regexp.MustCompile(`^([a-z]+(?:, [a-z]+)*): `)
	var out []Kind
	for part := range strings.SplitSeq(desc, "; ") {
		if m := opener.FindStringSubmatch(part); m != nil {
			for name := range strings.SplitSeq(m[1], ", ") {
				out = append(out, Kind(name))
			}
		}
	}
	slices.Sort(out)
	return out
}

// kindsWhere returns the kinds for which keep is true, sorted.
func kindsWhere(keep func(Kind) bool) []Kind {
	var out []Kind
	for _, k := range Kinds() {
		if keep(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestKindsMatchSchemaDescriptions holds the table to what schema.json's
// descriptions say of the kinds: the executor's list of each kind's
// members, each member's description opening with the kinds that admit
// it, and the kinds a branch may have; the connection's list of kinds.
func TestKindsMatchSchemaDescriptions(t *testing.T) {
	exec := schemaDef(t, "executor")
	var want []string
	for _, k := range Kinds() {
		others := slices.DeleteFunc(slices.Clone(k.Members()), func(m string) bool { return m == "kind" })
		list := strings.Join(others, ", ")
		if list == "" {
			list = "none"
		}
		want = append(want, string(k)+" ("+list+")")
	}
	if desc := exec["description"].(string); !strings.Contains(desc, "kind decides which other members apply: "+strings.Join(want, ", ")+".") {
		t.Errorf("the executor's description lists the kinds' members otherwise than\n%s\n%s", strings.Join(want, ", "), desc)
	}
	for name, p := range exec["properties"].(map[string]any) {
		if name == "kind" {
			continue
		}
		desc, _ := p.(map[string]any)["description"].(string)
		admit := kindsWhere(func(k Kind) bool { return slices.Contains(k.Members(), name) })
		if got := describedKinds(desc); !slices.Equal(got, admit) {
			t.Errorf("executor member %s: its description speaks of the kinds %v, the table admits it for %v", name, got, admit)
		}
	}
	branches := exec["properties"].(map[string]any)["branches"].(map[string]any)["description"].(string)
	_, list, _ := strings.Cut(branches, "each is an executor of kind ")
	list, _, _ = strings.Cut(list, ".")
	var named []Kind
	for _, name := range regexp.MustCompile(`[a-z]+`).FindAllString(strings.ReplaceAll(list, " or ", ", "), -1) {
		named = append(named, Kind(name))
	}
	slices.Sort(named)
	if branchable := kindsWhere(Kind.Branchable); !slices.Equal(named, branchable) {
		t.Errorf("the description of branches names the kinds %v, the table's branchable kinds are %v", named, branchable)
	}

	conn := schemaDef(t, "connection")["description"].(string)
	_, list, _ = strings.Cut(conn, "kind decides which other members apply: ")
	var kinds []Kind
	depth := 0
	for _, w := range regexp.MustCompile(`[()]|[a-z]+`).FindAllString(list, -1) {
		switch w {
		case "(":
			depth++
		case ")":
			depth--
		default:
			if depth == 0 {
				kinds = append(kinds, Kind(w))
			}
		}
	}
	if !slices.Equal(kinds, ConnectionKinds()) {
		t.Errorf("the connection's description speaks of the kinds %v, the table's are %v", kinds, ConnectionKinds())
	}
}

// TestKindsMatchDoc holds the table to docs/connections.md: the kinds an
// inline executor of proxy.expose may have, and the connection kinds
// "Declare backends" describes, in the table's order.
func TestKindsMatchDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "connections.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	quoted := regexp.MustCompile("`([a-z]+)`")
	m := regexp.MustCompile("an inline `executor`\\s*\\(([^)]*)\\)").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/connections.md lists no kinds of an inline executor")
	}
	var listed []Kind
	for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
		listed = append(listed, Kind(q[1]))
	}
	slices.Sort(listed)
	if all := slices.Sorted(slices.Values(Kinds())); !slices.Equal(listed, all) {
		t.Errorf("docs/connections.md lists the executor kinds %v, the table has %v", listed, all)
	}

	_, backends, ok := strings.Cut(doc, "- **Declare backends**")
	if !ok {
		t.Fatal("docs/connections.md has no Declare backends item")
	}
	backends, _, _ = strings.Cut(backends, "\n- **")
	var described []Kind
	for _, q := range regexp.MustCompile("`([a-z]+)`:").FindAllStringSubmatch(backends, -1) {
		described = append(described, Kind(q[1]))
	}
	if !slices.Equal(described, ConnectionKinds()) {
		t.Errorf("docs/connections.md's Declare backends describes the connection kinds %v, the table has %v", described, ConnectionKinds())
	}
}
