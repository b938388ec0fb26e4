package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// maxLeeway bounds auth.leeway; the message of its check says 5m.
const maxLeeway = 5 * time.Minute

// durationFields are the pointers of every duration in the file.
var durationFields = []string{
	"/server/limits/requestTimeout",
	"/server/idempotency/retention",
	"/server/idempotency/tombstoneRetention",
	"/proxy/runRetention",
	"/auth/leeway",
	"/auth/jwksRefreshInterval",
}

// semanticProblems applies the rules the schema cannot express. It looks at
// the validated value rather than at Config so that it can run beside the
// schema and report everything at once; a value of the wrong type, or one the
// schema already reported, is left alone.
func semanticProblems(doc *document, reported map[string]bool) []Problem {
	c := &checker{doc: doc, reported: reported}
	c.version()
	c.audit()
	c.server()
	c.auth()
	c.durations()
	c.workflows()
	c.capabilities()
	c.connections()
	c.lexicon()
	c.contextSections()
	c.policy()
	return c.out
}

// checker collects the problems of the semantic checks.
type checker struct {
	doc      *document
	reported map[string]bool
	out      []Problem
}

// report records a problem at the value of ptr.
func (c *checker) report(ptr, format string, args ...any) {
	pos := c.doc.at(ptr)
	c.out = append(c.out, Problem{Line: pos.Line, Column: pos.Column, Field: fieldPath(c.doc.value, ptr), Message: fmt.Sprintf(format, args...)})
}

// reportKey records a problem at the key of ptr, which suits a problem with
// a whole mapping or with the key itself.
func (c *checker) reportKey(ptr, format string, args ...any) {
	pos := c.doc.at(ptr)
	line, col := pos.Line, pos.Column
	if pos.KeyLine > 0 {
		line, col = pos.KeyLine, pos.KeyColumn
	}
	c.out = append(c.out, Problem{Line: line, Column: col, Field: fieldPath(c.doc.value, ptr), Message: fmt.Sprintf(format, args...)})
}

// str returns the string at ptr, unless there is none or the schema already
// reported it.
func (c *checker) str(ptr string) (string, bool) {
	if c.reported[ptr] {
		return "", false
	}
	v, ok := lookup(c.doc.value, ptr)
	s, isString := v.(string)
	return s, ok && isString
}

// obj returns the mapping at ptr, unless there is none or the schema already
// reported it.
func (c *checker) obj(ptr string) (map[string]any, bool) {
	if c.reported[ptr] {
		return nil, false
	}
	v, _ := lookup(c.doc.value, ptr)
	m, ok := v.(map[string]any)
	return m, ok
}

// list returns the sequence at ptr, unless there is none or the schema
// already reported it.
func (c *checker) list(ptr string) ([]any, bool) {
	if c.reported[ptr] {
		return nil, false
	}
	v, _ := lookup(c.doc.value, ptr)
	l, ok := v.([]any)
	return l, ok
}

// each calls f with the pointer and the value of every string item of
// the sequence at ptr.
func (c *checker) each(ptr string, f func(p, item string)) { c.eachMember(ptr, "", f) }

// eachMember calls f with the pointer and the value of the string member
// of every item of the sequence at ptr (items without it are skipped); ""
// names the item itself, as each.
func (c *checker) eachMember(ptr, member string, f func(p, s string)) {
	items, _ := c.list(ptr)
	for i := range items {
		p := ptr + "/" + strconv.Itoa(i)
		if member != "" {
			p += "/" + member
		}
		if s, ok := c.str(p); ok {
			f(p, s)
		}
	}
}

// keys returns the keys of m, the mapping at ptr, in the order they appear
// in the file.
func (c *checker) keys(ptr string, m map[string]any) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		pa, pb := c.doc.at(ptr+"/"+escapePointer(a)), c.doc.at(ptr+"/"+escapePointer(b))
		return cmp.Or(cmp.Compare(pa.KeyLine, pb.KeyLine), cmp.Compare(pa.KeyColumn, pb.KeyColumn), strings.Compare(a, b))
	})
	return keys
}

// version checks that the file's format version has a major this gateway
// reads.
func (c *checker) version() {
	v, ok := c.str("/version")
	if !ok {
		return
	}
	if major, ok := versionMajor(v); ok && !slices.Contains(SupportedVersions, major) {
		supported := make([]string, len(SupportedVersions))
		for i, m := range SupportedVersions {
			supported[i] = strconv.Itoa(m) + ".x"
		}
		c.report("/version", "declares the configuration format %s, which this gateway does not read: it reads %s; write the file for one of them (version: \"1.0.0\") or run a gateway that reads %d.x",
			v, strings.Join(supported, ", "), major)
	}
}

// audit checks audit.sink: stdout is not a sink, since praxa mcp speaks
// its protocol there.
func (c *checker) audit() {
	if s, ok := c.str("/audit/sink"); ok && s == "stdout" {
		c.report("/audit/sink", "cannot be stdout: praxa mcp speaks the MCP protocol there; write stderr, store, or the path of a file (./stdout for a file of that name)")
	}
}

func (c *checker) server() {
	if s, ok := c.str("/server/publicURL"); ok {
		if msg := checkURL(s, urlRules{http: true, noPath: true, noQuery: true}); msg != "" {
			c.report("/server/publicURL", "%s", msg)
		}
	}
	c.each("/server/allowedOrigins", func(p, s string) {
		if msg := checkURL(s, urlRules{http: true, noPath: true, noQuery: true}); msg != "" {
			c.report(p, "%s", strings.Replace(msg, "must", "an origin must", 1))
		}
	})
}

func (c *checker) auth() {
	if s, ok := c.str("/auth/resource"); ok {
		if msg := checkURL(s, urlRules{}); msg != "" {
			c.report("/auth/resource", "%s", msg)
		}
	}
	v, _ := lookup(c.doc.value, "/auth/issuers")
	issuers, _ := v.([]any)
	seen := map[string]int{}
	for i := range issuers {
		base := "/auth/issuers/" + strconv.Itoa(i)
		if s, ok := c.str(base + "/issuer"); ok {
			if msg := checkURL(s, urlRules{http: true, noQuery: true}); msg != "" {
				c.report(base+"/issuer", "%s", msg)
			} else if first, dup := seen[s]; dup {
				c.report(base+"/issuer", "duplicates auth.issuers[%d] (line %d)", first, c.doc.at(fmt.Sprintf("/auth/issuers/%d/issuer", first)).Line)
			} else {
				seen[s] = i
			}
		}
		if s, ok := c.str(base + "/jwksURL"); ok {
			if msg := checkURL(s, urlRules{http: true}); msg != "" {
				c.report(base+"/jwksURL", "%s", msg)
			}
		}
	}
}

func (c *checker) durations() {
	for _, ptr := range durationFields {
		s, ok := c.str(ptr)
		if !ok {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			// The schema admits only well-formed durations: this one is
			// too long for time.Duration.
			c.report(ptr, "is out of range for a duration (at most 2562047h)")
			continue
		}
		if ptr == "/auth/leeway" && d > maxLeeway {
			c.report(ptr, "must be at most 5m")
		}
	}
	c.tombstoneRetention()
}

// tombstoneRetention checks that server.idempotency.tombstoneRetention,
// when set, is not shorter than the retention: a key's tombstone follows
// its record. (Unset, it is the longer of its default and the retention.)
func (c *checker) tombstoneRetention() {
	const ptr = "/server/idempotency/tombstoneRetention"
	s, set := c.str(ptr)
	if !set {
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return
	}
	retention, spelled := DefaultIdempotencyRetention, "24h"
	if r, ok := c.str("/server/idempotency/retention"); ok {
		if retention, err = time.ParseDuration(r); err != nil {
			return
		}
		spelled = r
	}
	if d < retention {
		c.report(ptr, "must be at least server.idempotency.retention (%s): a key is kept from acting again for this long from its first use, and replays before that; set it to %s or more", spelled, spelled)
	}
}

// urlRules says what a URL-valued field admits beyond being an absolute URI
// without fragment.
type urlRules struct {
	http    bool // the scheme is http or https, and there is a host
	noPath  bool // nothing after the authority, not even "/"
	noQuery bool
}

// checkURL returns what is wrong with s under r, or "".
func checkURL(s string, r urlRules) string {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return "must be an absolute URI"
	}
	if strings.Contains(s, "#") {
		return "must not have a fragment (#…)"
	}
	if !r.http {
		return ""
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http or https URL"
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "must be an http or https URL with a host"
	case u.User != nil:
		return "must not carry user information (user@)"
	case r.noQuery && (u.RawQuery != "" || u.ForceQuery):
		return "must not have a query (?…)"
	case r.noPath && (u.Path != "" || u.RawPath != ""):
		return "must not have a path, not even a trailing slash: write scheme://host[:port]"
	}
	return ""
}

// executorValueMembers are the executor members whose string values may be
// paths.
var executorValueMembers = []string{"input", "map", "args", "query", "headers", "body", "paths", "optionArguments"}

// The roots a path may start from: set runs after the executor and may read
// its output, an executor may not.
var (
	setRoots      = []string{"arguments", "context", "input", "output"}
	executorRoots = []string{"arguments", "context", "input"}
)

// executorKindAt returns the kind of the executor at ptr when ptr is an
// executor of a kind this gateway runs.
func executorKindAt(doc *document, ptr string) (Kind, bool) {
	if typeAt(ptr) != reflect.TypeFor[Executor]() {
		return "", false
	}
	v, _ := lookup(doc.value, ptr+"/kind")
	kind, _ := v.(string)
	return Kind(kind), Kind(kind).Known()
}

// unknownExecutorMember words an unknown member name of an executor of the
// given kind.
func unknownExecutorMember(kind Kind, name string) string {
	owners := kindNames(func(k *kindInfo) bool { return slices.Contains(k.members, name) })
	return unknownKindMember(kind.article()+" "+string(kind)+" executor", "executors", name, kind.Members(), owners)
}

// unknownKindMember words an unknown member name of an object of one kind
// (an executor, a connection, a guard, an audit sink): what names it ("an
// mcp executor"), plural names its family ("executors"), members are
// what the kind takes and owners the other kinds that take name.
func unknownKindMember(what, plural, name string, members, owners []string) string {
	switch {
	case len(owners) > 0 && len(members) == 1:
		return fmt.Sprintf("is not a known field of %s (%s belongs to %s %s), which has no field but kind", what, name, joinAnd(owners), plural)
	case len(owners) > 0:
		return fmt.Sprintf("is not a known field of %s (%s belongs to %s %s); known fields: %s", what, name, joinAnd(owners), plural, strings.Join(members, ", "))
	case len(members) == 1:
		return fmt.Sprintf("is not a known field of %s, which has no field but kind", what)
	}
	if s, ok := suggest(name, members); ok {
		return fmt.Sprintf("is not a known field of %s; did you mean %q?", what, s)
	}
	return fmt.Sprintf("is not a known field of %s; known fields: %s", what, strings.Join(members, ", "))
}

// joinAnd joins words as a sentence lists them: a, b and c.
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// nameHint completes "names no declared X": a suggestion when name is close
// to a known one, else the known names (the first twenty).
func nameHint(name string, known []string, what string) string {
	if s, ok := suggest(name, known); ok {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	if len(known) == 0 {
		return ""
	}
	if len(known) > 20 {
		return "; declared " + what + ": " + strings.Join(known[:20], ", ") + ", …"
	}
	return "; declared " + what + ": " + strings.Join(known, ", ")
}

// checkPath returns what is wrong with s as a path into roots, or "" when
// s is a good path or not a path at all (it does not start with $.).
func checkPath(s string, roots []string) string {
	rest, ok := strings.CutPrefix(s, "$.")
	if !ok {
		return ""
	}
	root, member, _ := strings.Cut(rest, ".")
	if i := strings.IndexByte(rest, '['); i >= 0 && (i < len(root) || member == "") {
		root, member = rest[:i], rest[i:]
	}
	if !slices.Contains(roots, root) {
		var starts []string
		for _, r := range roots {
			starts = append(starts, "$."+r+".")
		}
		msg := "is a path (it starts with $.), but not into " + joinOr(starts)
		if root == "output" {
			msg += ": an executor runs before there is an output to read"
		}
		return msg
	}
	if member == "" {
		return fmt.Sprintf("is a path into $.%s, but names no member: write $.%s.NAME", root, root)
	}
	if simplePath(member) {
		return ""
	}
	if slices.Contains(strings.Split(member, "."), "") && !strings.ContainsAny(member, "[]") {
		return fmt.Sprintf("is a path into $.%s, but names no member: write $.%s.NAME", root, root)
	}
	if err := CheckJSONPath(s); err != nil {
		return "is not a valid JSONPath query (RFC 9535): " + err.Error()
	}
	return ""
}

// joinOr joins words as a choice: a, b or c.
func joinOr(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// workflowEdge is a workflow executor: the workflow from runs the workflow
// to, as the definitionId at ptr says.
type workflowEdge struct {
	from, to, ptr string
}

// workflows checks the workflows section: key names, states, transitions,
// executors, input schemas and the nesting of workflows.
func (c *checker) workflows() {
	wfs, ok := c.obj("/workflows")
	if !ok {
		return
	}
	ids := c.keys("/workflows", wfs)
	var edges []workflowEdge
	for _, id := range ids {
		base := "/workflows/" + escapePointer(id)
		if !idRE.MatchString(id) {
			c.reportKey(base, "is not a valid workflow id: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit")
		}
		if _, ok := c.obj(base); ok {
			edges = append(edges, c.workflow(id, base, ids)...)
		}
	}
	c.cycles(edges)
}

// workflow checks one workflow and returns the workflows it runs.
func (c *checker) workflow(id, base string, ids []string) []workflowEdge {
	var edges []workflowEdge
	executor := func(ptr string) {
		if e, ok := c.executor(ptr, ids); ok {
			edges = append(edges, workflowEdge{from: id, to: e, ptr: ptr + "/definitionId"})
		}
	}

	statesPtr := base + "/states"
	states, haveStates := c.obj(statesPtr)
	names := c.keys(statesPtr, states)
	terminal := map[string]bool{}
	terminalKnown := haveStates
	for _, name := range names {
		sp := statesPtr + "/" + escapePointer(name)
		if !idRE.MatchString(name) {
			c.reportKey(sp, "is not a valid state name: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit")
		}
		st, _ := states[name].(map[string]any)
		if c.reported[sp] || c.reported[sp+"/terminal"] {
			terminalKnown = false
		}
		terminal[name] = st["terminal"] == true
		if _, ok := st["onEnter"]; ok {
			executor(sp + "/onEnter")
		}
	}
	if terminalKnown && len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return terminal[n] }) {
		c.reportKey(statesPtr, "has no terminal state: mark the states where the workflow ends with terminal: true")
	}
	// state checks that a state name is declared; it is silent when the
	// states themselves could not be read.
	state := func(ptr string) (string, bool) {
		s, ok := c.str(ptr)
		if !ok || !haveStates {
			return "", false
		}
		if _, declared := states[s]; !declared {
			c.report(ptr, "names no declared state%s", nameHint(s, names, "states"))
			return "", false
		}
		return s, true
	}
	state(base + "/initial")
	c.inputSchema(base + "/inputSchema")

	transitions, _ := c.list(base + "/transitions")
	seen := map[string]int{}
	for i := range transitions {
		tp := base + "/transitions/" + strconv.Itoa(i)
		t, ok := c.obj(tp)
		if !ok {
			continue
		}
		if name, ok := c.str(tp + "/name"); ok {
			if first, dup := seen[name]; dup {
				fp := base + "/transitions/" + strconv.Itoa(first) + "/name"
				c.report(tp+"/name", "duplicates %s (line %d): transition names are unique within a workflow; to leave several states by one transition, list them under from",
					fieldPath(c.doc.value, fp), c.doc.at(fp).Line)
			} else {
				seen[name] = i
			}
		}
		from := []string{tp + "/from"}
		if list, ok := t["from"].([]any); ok {
			from = from[:0]
			for j := range list {
				from = append(from, tp+"/from/"+strconv.Itoa(j))
			}
		}
		for _, fp := range from {
			if s, ok := state(fp); ok && terminal[s] {
				c.report(fp, "is a terminal state: no transition may leave it")
			}
		}
		state(tp + "/to")
		if actor, ok := c.str(tp + "/actor"); ok && actor == ActorDeterministic {
			if kind, ok := c.str(tp + "/executor/kind"); ok && Kind(kind).NeedsApproval() {
				c.report(tp+"/actor", "is deterministic, but the executor is %s (line %d): the runtime fires a deterministic transition by itself, with no one to approve it; make the actor human or agent",
					kind, c.doc.at(tp+"/executor/kind").Line)
			}
		}
		if _, ok := t["executor"]; ok {
			executor(tp + "/executor")
		}
		c.inputSchema(tp + "/inputSchema")
		c.guards(tp + "/guards")
		if actor, ok := c.str(tp + "/actor"); ok && actor == ActorDeterministic {
			gs, _ := c.list(tp + "/guards")
			for j := range gs {
				gp := tp + "/guards/" + strconv.Itoa(j)
				if kind, _ := c.str(gp + "/kind"); kind == GuardArgument {
					c.report(gp+"/kind", "is argument, but the transition is deterministic: the runtime fires it with no arguments, so the guard would never pass; guard on evidence or a schedule, or make the actor agent")
				}
			}
		}
		if _, ok := c.obj(tp + "/set"); ok {
			c.paths(tp+"/set", setRoots)
		}
	}
	return edges
}

// executor checks the executor at ptr: the paths in its values and, for a
// workflow executor, that it names a declared workflow, which it returns.
func (c *checker) executor(ptr string, ids []string) (string, bool) {
	e, ok := c.obj(ptr)
	if !ok {
		return "", false
	}
	for _, m := range executorValueMembers {
		if _, ok := e[m]; ok {
			c.paths(ptr+"/"+m, executorRoots)
		}
	}
	s, _ := c.str(ptr + "/kind")
	kind := Kind(s)
	c.executorConnection(ptr, kind)
	c.executorTimeout(ptr, kind)
	if kind.Runs() == RunBranches {
		c.parallelBranches(ptr, ids)
	}
	if k := kind.info(); k.check != nil {
		k.check(c, ptr, k)
	}
	if kind.Runs() != RunWorkflow {
		return "", false
	}
	def, ok := c.str(ptr + "/definitionId")
	if !ok {
		return "", false
	}
	if !slices.Contains(ids, def) {
		c.report(ptr+"/definitionId", "names no declared workflow%s", nameHint(def, ids, "workflows"))
		return "", false
	}
	return def, true
}

// paths checks every string under ptr, at any depth, as a path into roots:
// the engine resolves values member by member.
func (c *checker) paths(ptr string, roots []string) {
	if c.reported[ptr] {
		return
	}
	v, _ := lookup(c.doc.value, ptr)
	switch v := v.(type) {
	case string:
		if msg := checkPath(v, roots); msg != "" {
			c.report(ptr, "%s", msg)
		}
	case []any:
		for i := range v {
			c.paths(ptr+"/"+strconv.Itoa(i), roots)
		}
	case map[string]any:
		for k := range v {
			c.paths(ptr+"/"+escapePointer(k), roots)
		}
	}
}

// cycles reports every workflow executor through which a workflow ends up
// running itself.
func (c *checker) cycles(edges []workflowEdge) {
	next := map[string][]string{}
	for _, e := range edges {
		if !slices.Contains(next[e.from], e.to) {
			next[e.from] = append(next[e.from], e.to)
		}
	}
	for _, e := range edges {
		path := shortestPath(next, e.to, e.from)
		if path == nil {
			continue
		}
		chain := strings.Join(append([]string{e.from}, path...), " → ")
		if e.from == e.to {
			c.report(e.ptr, "names the workflow it belongs to (%s): a workflow cannot run itself", chain)
			continue
		}
		c.report(e.ptr, "runs %s, which leads back to %s (%s): workflows cannot nest into a cycle", e.to, e.from, chain)
	}
}

// shortestPath returns the nodes of a shortest path from src to dst in the
// graph next, both ends included, or nil when dst cannot be reached.
func shortestPath(next map[string][]string, src, dst string) []string {
	prev := map[string]string{src: ""}
	queue := []string{src}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == dst {
			var path []string
			for ; n != src; n = prev[n] {
				path = append(path, n)
			}
			path = append(path, src)
			slices.Reverse(path)
			return path
		}
		for _, m := range next[n] {
			if _, seen := prev[m]; !seen {
				prev[m] = n
				queue = append(queue, m)
			}
		}
	}
	return nil
}

// inputSchema checks the input schema at ptr: an object schema that
// compiles as the contract compiles its own, with local references only.
func (c *checker) inputSchema(ptr string) {
	c.objectSchema(ptr, "inputSchema", "an input schema", "an input schema describes an object whose members are the arguments")
}

// outputSchema checks a capability's output schema at ptr as inputSchema
// checks an input schema: a capability's output is an object.
func (c *checker) outputSchema(ptr string) {
	c.objectSchema(ptr, "outputSchema", "an output schema", "an output schema describes the capability's output, an object")
}

// objectSchema checks the schema at ptr, the member name, described as
// what: an object schema (why says why) that compiles as the contract
// compiles its own, with local references only.
func (c *checker) objectSchema(ptr, name, what, why string) {
	m, ok := c.obj(ptr)
	if !ok {
		return
	}
	switch t, present := m["type"]; {
	case !present:
		c.reportKey(ptr, "must describe an object: add type: object at its root")
	case t != "object" && !c.reported[ptr+"/type"]:
		c.report(ptr+"/type", "must be object: %s", why)
	}
	c.schemaCompiles(ptr, m, name, what)
}

// schemaCompiles checks that the schema m at ptr compiles as the contract
// compiles its own, with local references only; name is its member name
// and what words it in a message.
func (c *checker) schemaCompiles(ptr string, m map[string]any, name, what string) {
	b, err := json.Marshal(m)
	if err != nil {
		c.reportKey(ptr, "cannot be encoded as JSON: %v", err)
		return
	}
	_, err = contracts.CompileSchema(name, b)
	if err == nil {
		return
	}
	var lue *jsonschema.LoadURLError
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	switch {
	case errors.Is(err, contracts.ErrRemoteReference) && errors.As(err, &lue):
		c.reportKey(ptr, "refers to %s, outside itself: %s may use local references only (#/$defs/NAME)", lue.URL, what)
	case errors.As(err, &sve) && errors.As(sve.Err, &ve):
		c.metaschemaProblems(ptr, ve)
	default:
		msg := strings.TrimPrefix(err.Error(), "contracts: schema "+name+": ")
		msg = strings.ReplaceAll(msg, "urn:praxa:schema:"+name, "")
		c.reportKey(ptr, "is not a valid JSON Schema: %s", msg)
	}
}

// metaschemaProblems reports the violations of the JSON Schema metaschema
// by the input schema at ptr, each at its own line. Where a keyword admits
// one of several values, the alternatives' type complaints are left out.
func (c *checker) metaschemaProblems(ptr string, ve *jsonschema.ValidationError) {
	type leaf struct {
		loc  string
		kind jsonschema.ErrorKind
	}
	var leaves []leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			var b strings.Builder
			for _, tok := range e.InstanceLocation {
				b.WriteString("/" + escapePointer(tok))
			}
			leaves = append(leaves, leaf{b.String(), e.ErrorKind})
			return
		}
		for _, cause := range e.Causes {
			walk(cause)
		}
	}
	walk(ve)
	hasEnum := map[string]bool{}
	for _, l := range leaves {
		if _, ok := l.kind.(*kind.Enum); ok {
			hasEnum[l.loc] = true
		}
	}
	for _, l := range leaves {
		if _, ok := l.kind.(*kind.Type); ok && hasEnum[l.loc] {
			continue
		}
		msg := (&jsonschema.ValidationError{ErrorKind: l.kind}).BasicOutput().Error.String()
		c.report(ptr+l.loc, "is not valid in a JSON Schema: %s", msg)
	}
}

// policy checks the policy section.
func (c *checker) policy() {
	c.eachMember("/policy/denyDestructive", "toolSet", func(ptr, s string) {
		if _, known := contracts.LookupToolSet(s); known {
			return
		}
		var names []string
		for _, ts := range contracts.ToolSets() {
			names = append(names, ts.Name)
		}
		msg := "is not a known tool set"
		if hint, ok := suggest(s, names); ok {
			msg += fmt.Sprintf("; did you mean %q?", hint)
		} else {
			msg += "; known tool sets: " + strings.Join(names, ", ")
		}
		c.report(ptr, "%s", msg)
	})
}
