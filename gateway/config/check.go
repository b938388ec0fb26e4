package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxLeeway bounds auth.leeway; the message of its check says 5m.
const maxLeeway = 5 * time.Minute

// durationFields are the pointers of every duration in the file.
var durationFields = []string{
	"/server/limits/requestTimeout",
	"/server/idempotency/retention",
	"/auth/leeway",
	"/auth/jwksRefreshInterval",
}

// semanticProblems applies the rules the schema cannot express. It looks at
// the validated value rather than at Config so that it can run beside the
// schema and report everything at once; a value of the wrong type, or one the
// schema already reported, is left alone.
func semanticProblems(doc *document, reported map[string]bool) []Problem {
	var out []Problem
	report := func(ptr, msg string) {
		pos := doc.at(ptr)
		out = append(out, Problem{Line: pos.Line, Column: pos.Column, Field: fieldPath(doc.value, ptr), Message: msg})
	}
	str := func(ptr string) (string, bool) {
		if reported[ptr] {
			return "", false
		}
		v, ok := lookup(doc.value, ptr)
		s, isString := v.(string)
		return s, ok && isString
	}
	each := func(ptr string, f func(i int, item string)) {
		v, _ := lookup(doc.value, ptr)
		items, _ := v.([]any)
		for i := range items {
			if s, ok := str(ptr + "/" + strconv.Itoa(i)); ok {
				f(i, s)
			}
		}
	}

	if s, ok := str("/server/publicURL"); ok {
		if msg := checkURL(s, urlRules{http: true, noPath: true, noQuery: true}); msg != "" {
			report("/server/publicURL", msg)
		}
	}
	each("/server/allowedOrigins", func(i int, s string) {
		if msg := checkURL(s, urlRules{http: true, noPath: true, noQuery: true}); msg != "" {
			report("/server/allowedOrigins/"+strconv.Itoa(i), strings.Replace(msg, "must", "an origin must", 1))
		}
	})
	if s, ok := str("/auth/resource"); ok {
		if msg := checkURL(s, urlRules{}); msg != "" {
			report("/auth/resource", msg)
		}
	}

	v, _ := lookup(doc.value, "/auth/issuers")
	issuers, _ := v.([]any)
	seen := map[string]int{}
	for i := range issuers {
		base := "/auth/issuers/" + strconv.Itoa(i)
		if s, ok := str(base + "/issuer"); ok {
			if msg := checkURL(s, urlRules{http: true, noQuery: true}); msg != "" {
				report(base+"/issuer", msg)
			} else if first, dup := seen[s]; dup {
				report(base+"/issuer", fmt.Sprintf("duplicates auth.issuers[%d] (line %d)", first, doc.at(fmt.Sprintf("/auth/issuers/%d/issuer", first)).Line))
			} else {
				seen[s] = i
			}
		}
		if s, ok := str(base + "/jwksURL"); ok {
			if msg := checkURL(s, urlRules{http: true}); msg != "" {
				report(base+"/jwksURL", msg)
			}
		}
	}

	for _, ptr := range durationFields {
		s, ok := str(ptr)
		if !ok {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			// The schema admits only well-formed durations: this one is
			// too long for time.Duration.
			report(ptr, "is out of range for a duration (at most 2562047h)")
			continue
		}
		if ptr == "/auth/leeway" && d > maxLeeway {
			report(ptr, "must be at most 5m")
		}
	}
	return out
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
