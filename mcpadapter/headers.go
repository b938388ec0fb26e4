package mcpadapter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/strictjson"
)

// This file checks, at MCP 2026-07-28 and later, the HTTP headers that
// mirror a request's body (Streamable HTTP, "Request Metadata"; SEP-2243)
// where go-sdk v1.8.0 does not, before the SDK sees the request. The SDK
// checks that Mcp-Method and Mcp-Name are present and equal to the body's
// method and name, and Mcp-Param-* against the x-mcp-header annotations it
// manages to read. It misses:
//
//   - an Mcp-Name in the Base64 sentinel form (=?base64?…?=), which the
//     spec says a server MUST decode before comparing: the SDK compares it
//     raw and refuses a conforming request (go-sdk #1234). The edge decodes
//     it and hands the SDK the decoded value;
//   - a header repeated, or whose value holds characters outside visible
//     ASCII, space and tab (a client MUST Base64-encode those): the SDK
//     reads the first value only and compares it raw. The edge refuses both;
//   - every Mcp-Param-* binding of a tool whose input schema has a property
//     of several types (["string","null"]) anywhere: the SDK's decoder then
//     fails and it checks none of them. The edge reads the bindings itself
//     (paramBindings), once per tool at registration, and checks them;
//   - an x-mcp-header annotation the spec forbids (not a string, not a
//     token, repeated, on a non-primitive or unreachable property): the
//     SDK's AddTool panics on some and accepts others. prepareDirect skips
//     such a tool with a log line, as the spec tells clients to.
//
// Each refusal answers 400 with the JSON-RPC error HeaderMismatch (-32020),
// the request's id, and data {"header": NAME}; nothing runs.

// revisionHeaders is the first MCP revision whose Streamable HTTP requests
// mirror their body into Mcp-Method, Mcp-Name and Mcp-Param-* headers.
const revisionHeaders = "2026-07-28"

// supportedVersions are the MCP revisions the SDK serves (its
// SupportedProtocolVersions copies them on every call).
var supportedVersions = mcp.SupportedProtocolVersions()

// The headers the edge checks.
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
)

// The Base64 sentinel around an encoded header value.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// maxSafeInteger bounds the integers an x-mcp-header parameter may carry
// (JavaScript's safe range, 2^53-1).
const maxSafeInteger = 1<<53 - 1

// paramBinding is one input property mirrored into a header: the property
// names from the input schema's root to it, and the header's name
// (Mcp-Param- and the x-mcp-header value).
type paramBinding struct {
	path   []string
	header string
}

// paramBindings reads the x-mcp-header annotations of an input schema. An
// annotation must be a non-empty HTTP token, unique among the schema's
// annotations whatever the case, on a property whose type is "string",
// "integer" or "boolean", reached from the root through properties
// keywords alone (not through items, a composition, a conditional, $ref,
// $defs and the like); anything else is an error, which makes the tool
// invalid. A schema without annotations has no bindings.
func paramBindings(schema json.RawMessage) ([]paramBinding, error) {
	if !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	w := bindingWalk{seen: map[string]string{}}
	if err := w.schema(root, nil, "", true); err != nil {
		return nil, err
	}
	return w.out, nil
}

// bindingWalk collects the bindings of one schema.
type bindingWalk struct {
	out  []paramBinding
	seen map[string]string // lower-case annotation → where it was seen
}

// Subschema keywords of JSON Schema 2020-12 (and draft 7's items array,
// additionalItems and definitions): a property below one of them is not
// statically reachable.
var (
	schemaValued = []string{"items", "additionalItems", "additionalProperties", "not", "if", "then", "else",
		"contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"}
	schemaArrays = []string{"prefixItems", "allOf", "anyOf", "oneOf"}
	schemaMaps   = []string{"patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// schema walks node, a (sub)schema at pointer where; path is the property
// chain that reaches it when static says it is reached through properties
// keywords alone.
func (w *bindingWalk) schema(node any, path []string, where string, static bool) error {
	obj, ok := node.(map[string]any)
	if !ok {
		return nil // a boolean schema
	}
	if v, ok := obj["x-mcp-header"]; ok {
		if err := w.annotation(obj, v, path, where, static); err != nil {
			return err
		}
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if err := w.schema(props[name], append(slices.Clip(path), name), where+"/properties/"+name, static); err != nil {
				return err
			}
		}
	}
	for _, k := range schemaValued {
		sub, ok := obj[k]
		if !ok {
			continue
		}
		if arr, ok := sub.([]any); ok { // draft 7 items: [schema, ...]
			for i, s := range arr {
				if err := w.schema(s, nil, fmt.Sprintf("%s/%s/%d", where, k, i), false); err != nil {
					return err
				}
			}
			continue
		}
		if err := w.schema(sub, nil, where+"/"+k, false); err != nil {
			return err
		}
	}
	for _, k := range schemaArrays {
		arr, _ := obj[k].([]any)
		for i, s := range arr {
			if err := w.schema(s, nil, fmt.Sprintf("%s/%s/%d", where, k, i), false); err != nil {
				return err
			}
		}
	}
	for _, k := range schemaMaps {
		m, _ := obj[k].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if err := w.schema(m[name], nil, where+"/"+k+"/"+name, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// annotation checks one x-mcp-header annotation and records its binding.
func (w *bindingWalk) annotation(obj map[string]any, v any, path []string, where string, static bool) error {
	at := where
	if at == "" {
		at = "/"
	}
	if !static || len(path) == 0 {
		return fmt.Errorf("x-mcp-header at %s: only a property reached from the root through properties alone may carry one", at)
	}
	name, ok := v.(string)
	if !ok || name == "" {
		return fmt.Errorf("x-mcp-header at %s: not a non-empty string", at)
	}
	if !isToken(name) {
		return fmt.Errorf("x-mcp-header at %s: %q is not an HTTP token", at, name)
	}
	switch typ, _ := obj["type"].(string); typ {
	case "string", "integer", "boolean":
	default:
		return fmt.Errorf("x-mcp-header at %s: the property's type must be string, integer or boolean, not %v", at, obj["type"])
	}
	lower := strings.ToLower(name)
	if prev, dup := w.seen[lower]; dup {
		return fmt.Errorf("x-mcp-header at %s: %q repeats the one at %s", at, name, prev)
	}
	w.seen[lower] = at
	w.out = append(w.out, paramBinding{path: slices.Clone(path), header: headerParamPrefix + name})
	return nil
}

// isToken reports whether s is an HTTP token (RFC 9110: 1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// plainHeaderValue reports whether v may stand in a mirrored header as it
// is: visible ASCII, space and horizontal tab only (RFC 9110 field values
// without obs-text).
func plainHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}

// decodeHeaderValue decodes a mirrored header value: the Base64 sentinel
// form =?base64?…?= (standard alphabet, padded) into the UTF-8 text it
// carries, any other value as it is. ok is false for a value with
// characters outside plainHeaderValue, and for a sentinel whose content is
// not Base64 or not UTF-8.
func decodeHeaderValue(v string) (s string, ok bool) {
	if !plainHeaderValue(v) {
		return "", false
	}
	inner, found := strings.CutPrefix(v, base64Prefix)
	if !found {
		return v, true
	}
	inner, found = strings.CutSuffix(inner, base64Suffix)
	if !found {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// argumentAt reads the value at path in a call's arguments (text
// ParseEnvelope checked), names matched exactly; found is false when a
// member on the way is absent or not an object.
func argumentAt(args json.RawMessage, path []string) (_ json.RawMessage, found bool) {
	cur := args
	for _, name := range path {
		found = false
		for n, raw := range strictjson.Members(cur) {
			if string(n) == name {
				cur, found = raw, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return cur, true
}

// headerMatches reports whether a decoded header value stands for the
// JSON value raw: a string equal to it; true or false; an integer of the
// safe range compared numerically (42, 42.0 and 4.2e1 are one value). Any
// other body value (an object, an array, a fraction, a number beyond the
// safe range) matches no header.
func headerMatches(header string, raw json.RawMessage) bool {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return false
	}
	switch b := v.(type) {
	case string:
		return header == b
	case bool:
		return header == strconv.FormatBool(b)
	case json.Number:
		want, ok := safeInteger(b.String())
		if !ok {
			return false
		}
		got, ok := safeInteger(header)
		return ok && got == want
	}
	return false
}

// safeInteger parses s as a number whose value is an integer of the safe
// range.
func safeInteger(s string) (int64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// headerMismatch is a refusal of the edge's header checks: the header at
// fault and why.
type headerMismatch struct {
	header string
	reason string
}

func (m *headerMismatch) rpcError() *contracts.RPCError {
	data, _ := json.Marshal(map[string]string{"header": m.header})
	return &contracts.RPCError{Code: mcp.CodeHeaderMismatch, Message: "Header mismatch: " + m.header + " " + m.reason, Data: data}
}

// checkStandardHeaders checks the mirrored headers a request carries
// before any body is read: MCP-Protocol-Version, Mcp-Method and Mcp-Name
// at most once each, with plain values; an Mcp-Name in the Base64 sentinel
// form decodes. name is Mcp-Name's decoded value ("" when absent).
func checkStandardHeaders(h http.Header) (name string, mm *headerMismatch) {
	for _, k := range []string{headerProtocolVersion, headerMethod, headerName} {
		vs := h.Values(k)
		if len(vs) > 1 {
			return "", &headerMismatch{header: k, reason: "is repeated"}
		}
		if len(vs) == 1 && !plainHeaderValue(vs[0]) {
			return "", &headerMismatch{header: k, reason: "holds characters outside visible ASCII, space and tab (Base64-encode the value: =?base64?…?=)"}
		}
	}
	name, ok := decodeHeaderValue(h.Get(headerName))
	if !ok {
		return "", &headerMismatch{header: headerName, reason: "is not valid Base64 of UTF-8 text"}
	}
	return name, nil
}

// checkParamHeaders checks a tools/call of a tool with bindings against
// its message as the edge read it: each bound argument present and not
// null has exactly one header of its binding, whose decoded value matches
// it; an absent or null argument has none. A message that is not a
// tools/call of that tool is left to the SDK, which refuses it.
func checkParamHeaders(h http.Header, env *Envelope, name string, bindings []paramBinding) *headerMismatch {
	if env.Method != "tools/call" {
		return nil
	}
	var called string
	var args json.RawMessage
	for n, raw := range strictjson.Members(env.Params) {
		switch string(n) {
		case "name":
			called, _ = strictjson.String(raw)
		case "arguments":
			args = raw
		}
	}
	if called != name {
		return nil
	}
	for _, b := range bindings {
		vs := h.Values(b.header)
		raw, present := argumentAt(args, b.path)
		if present && string(bytes.TrimSpace(raw)) == "null" {
			present = false
		}
		arg := strings.Join(b.path, ".")
		switch {
		case len(vs) > 1:
			return &headerMismatch{header: b.header, reason: "is repeated"}
		case !present && len(vs) == 1:
			return &headerMismatch{header: b.header, reason: fmt.Sprintf("is sent for the absent or null argument %q", arg)}
		case !present:
			continue
		case len(vs) == 0:
			return &headerMismatch{header: b.header, reason: fmt.Sprintf("is missing for the argument %q", arg)}
		}
		v, ok := decodeHeaderValue(vs[0])
		if !ok {
			return &headerMismatch{header: b.header, reason: "holds characters outside visible ASCII, space and tab, or invalid Base64"}
		}
		if !headerMatches(v, raw) {
			return &headerMismatch{header: b.header, reason: fmt.Sprintf("does not match the argument %q", arg)}
		}
	}
	return nil
}
