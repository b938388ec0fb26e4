package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/praxa/praxa/contracts"
)

// The media types /v8 answers in: JSON for results, RFC 9457 problem
// details for refusals.
var answerTypes = []string{"application/json", "application/problem+json"}

// acceptable refuses, with 406 not-acceptable, a request whose Accept
// header admits neither of answerTypes (RFC 9110 section 12.5.1); a
// request that admits either, or sends no Accept, goes on. It is mounted
// on /v8's routes only: /mcp, /metrics and the console negotiate by their
// own rules. The 406 is a problem document, which RFC 9110 lets a server
// send whatever the client accepts.
func acceptable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if vs := r.Header.Values("Accept"); len(vs) > 0 && !acceptsAny(vs, answerTypes) {
			writeProblem(w, 0, &contracts.Error{Code: contracts.CodeNotAcceptable,
				Message: "the Accept header admits neither application/json nor application/problem+json",
				Hint:    "Send Accept: application/json (refusals come as application/problem+json), */*, or no Accept."},
				requestID(r.Context()))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// mediaRange is one element of an Accept header.
type mediaRange struct {
	typ, sub string // lower case; "*" for a wildcard
	q        float64
}

// acceptsAny reports whether the Accept header values admit any of types
// (each "type/subtype", lower case). Each type's quality is the q of the
// most specific range that matches it (type/subtype, then type/*+suffix,
// then type/*, then */*; the highest q among equally specific ranges); it
// is admitted when that q is above 0, and not when no range matches.
// Parameters other than q are not compared. Elements that are not media
// ranges, or whose q is not a number from 0 to 1, are ignored; a header
// of none but those counts as absent.
func acceptsAny(values []string, types []string) bool {
	var ranges []mediaRange
	for _, v := range values {
		for elem := range strings.SplitSeq(v, ",") {
			if mr, ok := parseMediaRange(elem); ok {
				ranges = append(ranges, mr)
			}
		}
	}
	if len(ranges) == 0 {
		return true
	}
	for _, t := range types {
		typ, sub, _ := strings.Cut(t, "/")
		best, q := -1, 0.0
		for _, mr := range ranges {
			s := specificity(mr, typ, sub)
			if s > best || s == best && mr.q > q {
				best, q = s, mr.q
			}
		}
		if best >= 0 && q > 0 {
			return true
		}
	}
	return false
}

// specificity ranks how closely mr matches typ/sub: 3 exactly, 2 as
// typ/*+suffix (a structured syntax suffix, RFC 6839: application/*+json
// matches application/problem+json), 1 as typ/*, 0 as */*; -1 when it
// does not match.
func specificity(mr mediaRange, typ, sub string) int {
	switch {
	case mr.typ == "*" && mr.sub == "*":
		return 0
	case mr.typ != typ:
		return -1
	case mr.sub == sub:
		return 3
	case mr.sub == "*":
		return 1
	}
	if suffix, ok := strings.CutPrefix(mr.sub, "*+"); ok && strings.HasSuffix(sub, "+"+suffix) {
		return 2
	}
	return -1
}

// parseMediaRange parses one element of an Accept header:
// type "/" subtype *( OWS ";" OWS parameter ), q among the parameters.
func parseMediaRange(s string) (mediaRange, bool) {
	mr := mediaRange{q: 1}
	params := strings.Split(s, ";")
	typ, sub, ok := strings.Cut(strings.TrimSpace(params[0]), "/")
	typ, sub = strings.ToLower(typ), strings.ToLower(sub)
	if !ok || !isToken(typ) || !isToken(sub) || typ == "*" && sub != "*" {
		return mr, false
	}
	mr.typ, mr.sub = typ, sub
	for _, p := range params[1:] {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		q, ok := parseQ(strings.TrimSpace(value))
		if !ok {
			return mr, false
		}
		mr.q = q
		break // parameters after q are accept-ext (RFC 7231), not the range's
	}
	return mr, true
}

// parseQ parses an RFC 9110 qvalue: "0" or "1", then up to three decimal
// digits (zeros after "1").
func parseQ(v string) (float64, bool) {
	whole, frac, dot := strings.Cut(v, ".")
	if whole != "0" && whole != "1" || dot && len(frac) > 3 || strings.Trim(frac, "0123456789") != "" ||
		whole == "1" && strings.Trim(frac, "0") != "" {
		return 0, false
	}
	q, err := strconv.ParseFloat(whole+"."+frac+"0", 64)
	return q, err == nil
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
