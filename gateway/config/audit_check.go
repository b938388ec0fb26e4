package config

import (
	"net/url"
	"slices"
	"strings"

	"github.com/praxa/praxa/gateway/redact"
)

// recordPathPattern is the pattern of a record path (schema.json's
// capabilityAudit.record); a violation of it is reported in words.
const recordPathPattern = `^\$\.(arguments|output)(\.[A-Za-z0-9_-]{1,128})*$`

// auditSinkMembers are the members each kind of a capability's audit sink
// takes (schema.json's auditHookSink says the same).
var auditSinkMembers = map[string][]string{
	AuditSinkStderr: {"kind"},
	AuditHookFile:   {"kind", "path"},
	AuditHookHTTP:   {"kind", "url", "headers", "timeoutMs", "retries", "backoffMs", "queue"},
}

// auditSinkKindAt returns the kind of the audit sink at ptr when ptr is a
// sink of a capability's audit block of a known kind.
func auditSinkKindAt(doc *document, ptr string) (string, bool) {
	return memberKindAt[AuditHookSink](doc, ptr, auditSinkMembers)
}

// unknownAuditSinkMember words an unknown member name of an audit sink of
// the given kind.
func unknownAuditSinkMember(kind, name string) string {
	var owners []string
	for _, k := range []string{AuditSinkStderr, AuditHookFile, AuditHookHTTP} {
		if slices.Contains(auditSinkMembers[k], name) {
			owners = append(owners, k)
		}
	}
	return unknownKindMember("a "+kind+" audit sink", "audit sinks", name, auditSinkMembers[kind], owners)
}

// capabilityAudit checks what the schema cannot say of the audit block at
// ptr (a capability's or an exposure's): a record path that names a
// member redacted by its name would record nothing, and an http sink's
// URL is an absolute http or https URL with a host.
func (c *checker) capabilityAudit(ptr string) {
	c.each(ptr+"/record", func(rp, path string) {
		for _, seg := range strings.Split(path, ".")[2:] {
			if redact.Sensitive(seg) {
				c.report(rp, "names %s, a member whose name marks it secret: the audit event would only ever record %s; remove the path (secrets are never recorded)", seg, redact.Redacted)
				break
			}
		}
	})
	c.eachMember(ptr+"/sinks", "url", func(up, raw string) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.report(up, "must be an absolute http or https URL, such as https://siem.example.com/ingest")
			return
		}
		if u.User != nil {
			c.report(up, "holds credentials (user:password@): send them in headers instead, from the environment (Authorization: \"Bearer ${NAME}\")")
		}
	})
}
