package knowledge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/strictjson"
)

// This file imports the context the operator supplies: memory records and
// goals of one tenant (JSON Lines, praxa memory import and praxa goals
// import) and model capability certificates (praxa certificates import).
//
// An import is all or nothing: every line is decoded strictly (duplicate
// members, unknown members and invalid UTF-8 are refused) and validated
// against the record format; any problem is reported as FILE:LINE: FIELD:
// MESSAGE and nothing is written. A valid file is written in one
// transaction. Imports are idempotent by record id: a record whose id the
// tenant already holds is replaced when anything in it differs (updated),
// and left alone when nothing does (unchanged); a record is never
// duplicated. A record's createdAt is the one the file gives, else the
// stored one, else the time of the import. Records the file does not name
// are kept: an import adds and updates, it never deletes.

// Line formats (JSON Schema 2020-12).
const (
	memoryLineSchema = `{
  "type": "object", "additionalProperties": false,
  "required": ["id", "compartment", "purposes", "content"],
  "properties": {
    ` + contextProperties + `
    "content": {"type": "string", "minLength": 1, "maxLength": 16000},
    "tags": {"$ref": "#/$defs/tags"},
    "createdAt": {"type": "string", "format": "date-time", "maxLength": 64}
  },
  "$defs": ` + contextDefs + `
}`
	goalLineSchema = `{
  "type": "object", "additionalProperties": false,
  "required": ["id", "compartment", "purposes", "title"],
  "properties": {
    ` + contextProperties + `
    "title": {"type": "string", "minLength": 1, "maxLength": 200},
    "description": {"type": "string", "minLength": 1, "maxLength": 4000},
    "status": {"enum": GOAL_STATUSES},
    "tags": {"$ref": "#/$defs/tags"},
    "createdAt": {"type": "string", "format": "date-time", "maxLength": 64}
  },
  "$defs": ` + contextDefs + `
}`
	// contextProperties are the members every line places its record by.
	contextProperties = `"id": {"$ref": "#/$defs/identifier"},
    "compartment": {"$ref": "#/$defs/identifier"},
    "purposes": {"type": "array", "minItems": 1, "maxItems": 16, "uniqueItems": true, "items": {"$ref": "#/$defs/identifier"}},`
	contextDefs = `{
    "identifier": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"},
    "tags": {"type": "array", "maxItems": 16, "uniqueItems": true, "items": {"type": "string", "minLength": 1, "maxLength": 64}}
  }`
)

var lineSchemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	out := map[string]*jsonschema.Schema{}
	// A goal's statuses are the contract's.
	statuses, err := json.Marshal(contracts.GoalStatuses())
	if err != nil {
		return nil, err
	}
	goal := strings.Replace(goalLineSchema, "GOAL_STATUSES", string(statuses), 1)
	for kind, src := range map[string]string{store.KindMemory: memoryLineSchema, store.KindGoal: goal} {
		s, err := contracts.CompileSchema(kind+"-line", []byte(src))
		if err != nil {
			return nil, err
		}
		out[kind] = s
	}
	return out, nil
})

// Import bounds.
const (
	// MaxImportLine bounds one line of an import file.
	MaxImportLine = 1 << 20
	// MaxImportRecords bounds the records of one import.
	MaxImportRecords = 100000
	// maxImportProblems bounds the problems one failed import reports.
	maxImportProblems = 100
)

// ImportItem says what an import did with one record.
type ImportItem struct {
	Line int    `json:"line"`
	ID   string `json:"id"`
	// Outcome is added, updated or unchanged.
	Outcome string `json:"outcome"`
	// Verification is a certificate's verification result at import time.
	Verification string `json:"verification,omitempty"`
}

// ImportReport is the outcome of an import.
type ImportReport struct {
	File      string       `json:"file"`
	Tenant    string       `json:"tenant,omitempty"`
	Added     int          `json:"added"`
	Updated   int          `json:"updated"`
	Unchanged int          `json:"unchanged"`
	Items     []ImportItem `json:"items"`
	// TraceID names the audit event of the import.
	TraceID string `json:"traceId"`
}

func (r *ImportReport) count(outcome string) {
	switch outcome {
	case "added":
		r.Added++
	case "updated":
		r.Updated++
	default:
		r.Unchanged++
	}
}

// eventAttributes are the attributes of the audit event of the import of
// the file name that r reports: the file's base name and the counts.
func (r *ImportReport) eventAttributes(name string) map[string]any {
	return map[string]any{"file": path.Base(name), "added": r.Added, "updated": r.Updated, "unchanged": r.Unchanged}
}

// importer collects the problems of one file.
type importer struct {
	file     string
	problems []config.Problem
}

func (im *importer) report(line int, field, format string, args ...any) {
	im.problems = append(im.problems, config.Problem{Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (im *importer) full() bool { return len(im.problems) >= maxImportProblems }

func (im *importer) err() error {
	if len(im.problems) == 0 {
		return nil
	}
	return &config.LoadError{File: im.file, Problems: im.problems}
}

// fieldName renders a JSON Pointer as a reader names the field:
// /purposes/0 is purposes[0].
func fieldName(ptr string) string {
	var b strings.Builder
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// reportError reports a decoding or validation error of one value.
func (im *importer) reportError(line int, prefix string, err error) {
	ce := contracts.AsError(err)
	if len(ce.Fields) == 0 {
		// strictjson speaks of request bodies.
		im.report(line, prefix, "%s", strings.Replace(ce.Message, "the body", "the value", 1))
		return
	}
	for _, f := range ce.Fields {
		name := fieldName(f.Pointer)
		if prefix != "" {
			name = strings.TrimSuffix(prefix+"."+name, ".")
		}
		im.report(line, name, "%s", f.Detail)
	}
}

// jsonLines calls fn with every non-blank line of r and its number.
func (im *importer) jsonLines(r io.Reader, fn func(line int, data []byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxImportLine)
	n := 0
	for sc.Scan() {
		n++
		data := bytes.TrimSpace(sc.Bytes())
		if len(data) == 0 {
			continue
		}
		fn(n, data)
		if im.full() {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			im.report(n+1, "", "the line is longer than %d bytes", MaxImportLine)
			return nil
		}
		return fmt.Errorf("reading %s: %w", im.file, err)
	}
	return nil
}

// contextLine is one decoded line of a memory or goals file.
type contextLine struct {
	line      int
	record    store.ContextRecord
	createdAt time.Time // zero when the line gives none
}

func checkTenant(tenant string) error {
	if tenant == "" || len(tenant) > 256 || strings.TrimSpace(tenant) != tenant {
		return contracts.Errorf(contracts.CodeInvalidParams, "the tenant must be 1 to 256 characters without surrounding spaces")
	}
	return nil
}

// ImportMemory imports the memory records of a JSON Lines file into
// tenant's memory. name is how problems name the file. Each line is one
// record: {"id", "compartment", "purposes": [...], "content", "tags"?: [...],
// "createdAt"?: RFC 3339}; the tenant comes from the caller, never from the
// file. by is who imports, as the audit event records it (nil: the
// subject operator).
func (k *Knowledge) ImportMemory(ctx context.Context, by *auth.Principal, tenant, name string, r io.Reader) (ImportReport, error) {
	return k.importContext(ctx, by, store.KindMemory, tenant, name, r)
}

// ImportGoals imports the goals of a JSON Lines file into tenant's context.
// Each line is one goal: {"id", "compartment", "purposes": [...], "title",
// "description"?, "status"?: active (default), paused, achieved or
// abandoned, "tags"?: [...], "createdAt"?: RFC 3339}.
func (k *Knowledge) ImportGoals(ctx context.Context, by *auth.Principal, tenant, name string, r io.Reader) (ImportReport, error) {
	return k.importContext(ctx, by, store.KindGoal, tenant, name, r)
}

func (k *Knowledge) importContext(ctx context.Context, by *auth.Principal, kind, tenant, name string, r io.Reader) (ImportReport, error) {
	if err := checkTenant(tenant); err != nil {
		return ImportReport{}, err
	}
	schemas, err := lineSchemas()
	if err != nil {
		return ImportReport{}, err
	}
	im := &importer{file: name}
	var lines []contextLine
	seen := map[string]int{}
	err = im.jsonLines(r, func(n int, data []byte) {
		obj, err := strictjson.DecodeObject(data, 8)
		if err != nil {
			im.reportError(n, "", err)
			return
		}
		if _, ok := obj["tenant"]; ok {
			im.report(n, "tenant", "is not a field of the file: the tenant is given on the command line (--tenant)")
			return
		}
		if err := contracts.Validate(schemas[kind], obj, "the line does not match the "+kind+" format"); err != nil {
			im.reportError(n, "", err)
			return
		}
		l, err := contextRecordOf(kind, tenant, obj)
		if err != nil {
			im.reportError(n, "", err)
			return
		}
		if first, dup := seen[l.record.ID]; dup {
			im.report(n, "id", "repeats the id %s of line %d", l.record.ID, first)
			return
		}
		if len(lines) == MaxImportRecords {
			im.report(n, "", "the file holds more than %d records; split it", MaxImportRecords)
			return
		}
		seen[l.record.ID] = n
		l.line = n
		lines = append(lines, l)
	})
	if err != nil {
		return ImportReport{}, err
	}
	if err := im.err(); err != nil {
		return ImportReport{}, err
	}
	rep := ImportReport{File: name, Tenant: tenant, Items: []ImportItem{}, TraceID: ids.New("import")}
	now := k.now()
	err = k.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		rep.Added, rep.Updated, rep.Unchanged, rep.Items = 0, 0, 0, rep.Items[:0]
		// Every line is read first, then the tenant's quota checked
		// for the records the file adds, then the records written:
		// past the quota nothing is (quotas.go).
		writes := make([]store.ContextRecord, 0, len(lines))
		for _, l := range lines {
			rec := l.record
			old, err := tx.GetContextRecord(ctx, kind, tenant, rec.ID)
			exists := err == nil
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			switch {
			case !l.createdAt.IsZero():
				rec.CreatedAt = l.createdAt
			case exists:
				rec.CreatedAt = old.CreatedAt
			default:
				rec.CreatedAt = now
			}
			outcome := "added"
			if exists {
				outcome = "updated"
				if sameContextRecord(old, rec) {
					outcome = "unchanged"
				}
			}
			rep.Items = append(rep.Items, ImportItem{Line: l.line, ID: rec.ID, Outcome: outcome})
			rep.count(outcome)
			if outcome == "unchanged" {
				continue
			}
			rec.UpdatedAt = now
			writes = append(writes, rec)
		}
		if err := k.checkImportQuota(ctx, tx, kind, tenant, rep.Added, writes); err != nil {
			return err
		}
		for _, rec := range writes {
			if err := tx.PutContextRecord(ctx, rec); err != nil {
				return err
			}
		}
		return tx.AppendEvents(ctx, []store.Event{op.EventSpec{Actor: op.Operator(by, "", ""), Tenant: tenant,
			Type: kind + ".imported", Outcome: "allowed", TraceID: rep.TraceID, At: now, Attributes: rep.eventAttributes(name)}.Build()})
	})
	if err != nil {
		return ImportReport{}, op.AsError(err)
	}
	return rep, nil
}

// contextRecordOf builds the stored record of a validated line.
func contextRecordOf(kind, tenant string, obj map[string]any) (contextLine, error) {
	var l contextLine
	rec := store.ContextRecord{Kind: kind, Tenant: tenant, ID: op.StringArg(obj, "id"), Compartment: op.StringArg(obj, "compartment"),
		Purposes: op.StringsArg(obj, "purposes"), Tags: op.StringsArg(obj, "tags")}
	var doc any
	if kind == store.KindMemory {
		doc = memoryDoc{Content: op.StringArg(obj, "content")}
	} else {
		status := op.StringArg(obj, "status")
		if status == "" {
			status = "active"
		}
		doc = goalDoc{Title: op.StringArg(obj, "title"), Description: op.StringArg(obj, "description"), Status: status}
	}
	var err error
	if rec.Doc, err = json.Marshal(doc); err != nil {
		return l, err
	}
	if at, ok := obj["createdAt"].(string); ok {
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return l, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "bad createdAt",
				Fields: []contracts.FieldError{{Pointer: "/createdAt", Detail: "must be an RFC 3339 time"}}}
		}
		l.createdAt = t.UTC()
	}
	l.record = rec
	return l, nil
}

// sameContextRecord reports whether a re-import changes nothing.
func sameContextRecord(old, rec store.ContextRecord) bool {
	return old.Compartment == rec.Compartment && slices.Equal(old.Purposes, rec.Purposes) &&
		slices.Equal(old.Tags, rec.Tags) && bytes.Equal(old.Doc, rec.Doc) && old.CreatedAt.Equal(rec.CreatedAt)
}

// ImportCertificates imports model capability certificates, gateway-wide.
// A name ending in .jsonl holds one certificate per line; any other holds
// one certificate object or an array of them. Certificates are checked
// against the format, not against the issuers: one with a bad signature or
// an unknown issuer is stored and listed as such (the report gives each
// one's verification now). Idempotent by id, as the other imports. by is
// who imports, as the audit event records it (nil: the subject operator).
func (k *Knowledge) ImportCertificates(ctx context.Context, by *auth.Principal, name string, r io.Reader) (ImportReport, error) {
	im := &importer{file: name}
	var list []struct {
		line int
		cert certs.Certificate
	}
	seen := map[string]int{}
	add := func(line int, prefix string, data []byte) {
		c, err := certs.Parse(data)
		if err != nil {
			im.reportError(line, prefix, err)
			return
		}
		if first, dup := seen[c.ID]; dup {
			im.report(line, strings.TrimPrefix(prefix+".id", "."), "repeats the id %s of line %d", c.ID, first)
			return
		}
		seen[c.ID] = line
		list = append(list, struct {
			line int
			cert certs.Certificate
		}{line, c})
	}
	if strings.HasSuffix(name, ".jsonl") {
		if err := im.jsonLines(r, func(n int, data []byte) { add(n, "", data) }); err != nil {
			return ImportReport{}, err
		}
	} else {
		data, err := io.ReadAll(io.LimitReader(r, MaxImportLine*16+1))
		if err != nil {
			return ImportReport{}, fmt.Errorf("reading %s: %w", name, err)
		}
		if len(data) > MaxImportLine*16 {
			im.report(0, "", "the file is larger than %d bytes: use JSON Lines (.jsonl)", MaxImportLine*16)
		} else if err := jsonArrayOrObject(data, add); err != nil {
			im.report(lineAt(data, 0), "", "%s", contracts.AsError(err).Message)
		}
	}
	if err := im.err(); err != nil {
		return ImportReport{}, err
	}
	rep := ImportReport{File: name, Items: []ImportItem{}, TraceID: ids.New("import")}
	now := k.now()
	err := k.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		rep.Added, rep.Updated, rep.Unchanged, rep.Items = 0, 0, 0, rep.Items[:0]
		for _, x := range list {
			doc := certs.Marshal(x.cert)
			old, err := tx.GetCertificate(ctx, x.cert.ID)
			exists := err == nil
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			outcome := "added"
			rec := store.Certificate{ID: x.cert.ID, Issuer: x.cert.Issuer, Subject: x.cert.Subject, Doc: doc, CreatedAt: now, UpdatedAt: now}
			if exists {
				outcome, rec.CreatedAt = "updated", old.CreatedAt
				if bytes.Equal(old.Doc, doc) {
					outcome = "unchanged"
				}
			}
			result, _ := certs.Verify(x.cert, k.cur.Load().issuers, now)
			rep.Items = append(rep.Items, ImportItem{Line: x.line, ID: x.cert.ID, Outcome: outcome, Verification: result})
			rep.count(outcome)
			if outcome == "unchanged" {
				continue
			}
			if err := tx.PutCertificate(ctx, rec); err != nil {
				return err
			}
		}
		return tx.AppendEvents(ctx, []store.Event{op.EventSpec{Actor: op.Operator(by, "", ""),
			Type: "certificates.imported", Outcome: "allowed", TraceID: rep.TraceID, At: now, Attributes: rep.eventAttributes(name)}.Build()})
	})
	if err != nil {
		return ImportReport{}, op.AsError(err)
	}
	return rep, nil
}

// lineAt returns the 1-based line of offset in data, past any white space
// there.
func lineAt(data []byte, offset int) int {
	for offset < len(data) && (data[offset] == ' ' || data[offset] == '\t' || data[offset] == '\n' || data[offset] == '\r' || data[offset] == ',') {
		offset++
	}
	return 1 + bytes.Count(data[:min(offset, len(data))], []byte("\n"))
}

// jsonArrayOrObject calls add with the single object data holds, or with
// each element of the array it holds, and the line each starts on.
func jsonArrayOrObject(data []byte, add func(line int, prefix string, raw []byte)) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		add(lineAt(data, 0), "", data)
		return nil
	}
	// Check the whole document strictly first (duplicates, depth, UTF-8),
	// then walk its elements for their lines.
	if _, err := strictjson.Decode(data, 9); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // [
		return err
	}
	for i := 0; dec.More(); i++ {
		start := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		add(lineAt(data, start), "["+strconv.Itoa(i)+"]", raw)
	}
	return nil
}

// checkImportQuota checks an import against the tenant quotas, when the
// Knowledge has them (Options.Quota).
func (k *Knowledge) checkImportQuota(ctx context.Context, tx store.Tx, kind, tenant string, added int, writes []store.ContextRecord) error {
	if k.quota == nil {
		return nil
	}
	return k.quota.CheckImportQuota(ctx, tx, kind, tenant, added, writes)
}
