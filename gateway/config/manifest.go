package config

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A declarative manifest is a JSON file the configuration names under
// manifests:
//
//	{"version": 1, "capabilities": [{"name": "notes.search", ...}]}
//
// Each capability is declared as an inline proxy.expose entry is (name,
// title, description, tags, aliases, domain, exposeDirectly, inputSchema,
// outputSchema, guards, executor, produces, reliability, audit) and joins the
// proxy surface, proxy_default and the discovery index after the
// configuration's own capabilities. Validation is strict (seeds/002's
// declarative manifests): the file is JSON; unknown members are refused
// at every level; an input or output schema is an object-rooted JSON
// Schema 2020-12 schema with local references only, and one naming
// another dialect, or using $id,
// $vocabulary, $recursiveRef or $recursiveAnchor, is refused (CheckToolSchema
// and CheckManifestSchema); executors name connections and workflows of the
// configuration. A manifest that fails makes the whole configuration
// invalid: its problems name the manifest, its line and the field.

// ManifestVersion is the only manifest version understood.
const ManifestVersion = 1

// manifestMembers are the members of a manifest's root.
var manifestMembers = []string{"version", "capabilities"}

// CheckManifestSchema is CheckToolSchema without the draft-07
// allowance imported upstream tools get: a manifest's schema names no
// dialect or JSON Schema 2020-12.
func CheckManifestSchema(schema any) (map[string]any, error) {
	if m, ok := schema.(map[string]any); ok {
		if d, has := m["$schema"]; has && strings.TrimSuffix(fmt.Sprint(d), "#") != dialect2020 {
			return nil, fmt.Errorf("the schema declares the dialect %v; only JSON Schema 2020-12 is accepted", d)
		}
	}
	return CheckToolSchema(schema)
}

// loadManifests reads, checks and adds the capabilities of every manifest
// the configuration (named name, parsed into doc) lists. Paths are
// relative to the configuration file's directory.
func (c *Config) loadManifests(name string, doc *document) []Problem {
	base := filepath.Dir(name)
	taken := map[string]string{} // id -> where it is declared
	for _, x := range c.exposedDeclared() {
		taken[x.ID] = x.Source
	}
	for id := range c.Workflows {
		taken[id] = "workflows." + id
	}
	for _, n := range c.ConnectionNames() {
		taken[n] = "connections." + n
	}
	var problems []Problem
	var caps []ExposedCapability
	for i, p := range c.Manifests {
		ptr := "/manifests/" + strconv.Itoa(i)
		at := func(format string, args ...any) {
			pos := doc.at(ptr)
			problems = append(problems, Problem{Line: pos.Line, Column: pos.Column, Field: fieldPath(doc.value, ptr), Message: fmt.Sprintf(format, args...)})
		}
		path := p
		if !filepath.IsAbs(path) {
			path = filepath.Join(base, path)
		}
		data, err := readManifest(path)
		if err != nil {
			at("%v", err)
			continue
		}
		got, ps := parseManifest(path, data, doc, taken)
		problems = append(problems, ps...)
		caps = append(caps, got...)
	}
	if len(problems) > 0 {
		return problems
	}
	c.manifested = caps
	return nil
}

// readManifest reads a manifest file, bounded like a configuration file.
func readManifest(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the manifest cannot be read: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("the manifest cannot be read: %v", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("the manifest %s is larger than %d bytes", path, MaxFileSize)
	}
	return data, nil
}

// parseManifest checks one manifest. cfg is the configuration's document
// (its connections and workflows are what executors may name); taken maps
// the ids already declared to where, and gains the manifest's.
func parseManifest(file string, data []byte, cfg *document, taken map[string]string) ([]ExposedCapability, []Problem) {
	root, _ := cfg.value.(map[string]any)
	fail := func(ps []Problem) ([]ExposedCapability, []Problem) {
		for i := range ps {
			ps[i].File = file
		}
		return nil, ps
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return fail([]Problem{{Message: fmt.Sprintf("a manifest is a JSON file: %v", err)}})
	}
	// JSON is YAML 1.2: the YAML reader gives every value its position
	// and refuses duplicate keys.
	mdoc, problems := parseYAML(data)
	if len(problems) > 0 {
		return fail(problems)
	}
	m, ok := mdoc.value.(map[string]any)
	if !ok {
		return fail([]Problem{{Line: 1, Column: 1, Message: "a manifest is a JSON object: {\"version\": 1, \"capabilities\": [...]}"}})
	}
	mc := &checker{doc: mdoc, reported: map[string]bool{}}
	for _, k := range mc.keys("", m) {
		if !slices.Contains(manifestMembers, k) {
			mc.reportKey("/"+escapePointer(k), "is not a known field of a manifest; known fields: %s", strings.Join(manifestMembers, ", "))
		}
	}
	switch v, has := m["version"]; {
	case !has:
		mc.reportKey("", "needs version: %d", ManifestVersion)
	case fmt.Sprint(v) != strconv.Itoa(ManifestVersion):
		mc.report("/version", "must be %d, the only manifest version this gateway understands", ManifestVersion)
	}
	items, isList := m["capabilities"].([]any)
	switch _, has := m["capabilities"]; {
	case !has:
		mc.reportKey("", "needs capabilities: a list of capabilities")
	case !isList:
		mc.report("/capabilities", "must be a list of capabilities")
	}
	for i, it := range items {
		ptr := "/capabilities/" + strconv.Itoa(i)
		e, ok := it.(map[string]any)
		if !ok {
			continue // the configuration schema reports it
		}
		for _, k := range []string{"capability", "as"} {
			if _, has := e[k]; has {
				mc.reportKey(ptr+"/"+k, "is not accepted in a manifest: a manifest declares its capabilities inline, with name")
			}
		}
		if _, has := e["name"]; !has {
			mc.reportKey(ptr, "needs a name: the id of the capability")
		}
		for _, m := range []string{"inputSchema", "outputSchema"} {
			if s, has := e[m]; has {
				if _, err := CheckManifestSchema(s); err != nil {
					mc.report(ptr+"/"+m, "%v", err)
				}
			}
		}
	}
	if len(mc.out) > 0 {
		return fail(mc.out)
	}

	// The capabilities read as proxy.expose entries of the configuration,
	// so that the configuration's own schema and checks apply to them with
	// its connections and workflows in view.
	synth := map[string]any{"proxy": map[string]any{"expose": items}}
	for _, k := range []string{"connections", "workflows"} {
		if v, ok := root[k]; ok {
			synth[k] = v
		}
	}
	if server, ok := root["server"].(map[string]any); ok && server["leaseTTL"] != nil {
		// The lease a reliability's worst case must fit in.
		synth["server"] = map[string]any{"leaseTTL": server["leaseTTL"]}
	}
	positions := map[string]position{}
	for ptr, pos := range cfg.positions {
		if strings.HasPrefix(ptr, "/connections") || strings.HasPrefix(ptr, "/workflows") {
			positions[ptr] = pos // lines of the configuration file
		}
	}
	for ptr, pos := range mdoc.positions {
		if rest, ok := strings.CutPrefix(ptr, "/capabilities"); ok {
			positions["/proxy/expose"+rest] = pos
		}
	}
	sdoc := &document{value: synth, positions: positions}
	s, err := compiledSchema()
	if err != nil {
		return fail([]Problem{{Message: err.Error()}})
	}
	problems, reported, _, err := schemaProblems(s, sdoc)
	if err != nil {
		return fail([]Problem{{Message: err.Error()}})
	}
	problems = append(problems, semanticProblems(sdoc, reported)...)
	for i := range problems {
		problems[i].Field = strings.Replace(problems[i].Field, "proxy.expose", "capabilities", 1)
	}
	if len(problems) > 0 {
		return fail(problems)
	}
	b, err := json.Marshal(items)
	if err != nil {
		return fail([]Problem{{Message: err.Error()}})
	}
	var exps []Exposure
	if err := json.Unmarshal(b, &exps); err != nil {
		return fail([]Problem{{Message: "decoding the validated manifest: " + err.Error()}})
	}
	var caps []ExposedCapability
	for i, e := range exps {
		src := file + ":capabilities[" + strconv.Itoa(i) + "]"
		if prev, dup := taken[e.Name]; dup {
			pos := mdoc.at("/capabilities/" + strconv.Itoa(i) + "/name")
			problems = append(problems, Problem{Line: pos.Line, Column: pos.Column, Field: "capabilities[" + strconv.Itoa(i) + "].name",
				Message: fmt.Sprintf("is already the id of %s: workflows, capabilities and connections are found by id, so each id names one of them", prev)})
			continue
		}
		if e.Name == ProxyDefaultWorkflow {
			continue // semanticProblems reported it
		}
		taken[e.Name] = src
		if e.InputSchema != nil {
			e.InputSchema, _ = CheckManifestSchema(e.InputSchema) // detached; checked above
		}
		if e.OutputSchema != nil {
			e.OutputSchema, _ = CheckManifestSchema(e.OutputSchema)
		}
		caps = append(caps, e.inline(src))
	}
	if len(problems) > 0 {
		return fail(problems)
	}
	return caps, nil
}
