package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/strictjson"
)

// toolHandler serves one contract operation. The order of checks is the
// gateway's: transport guards (413, 415), authentication (401, 400) and
// rate limit (429) here, then the service: tool allowlist and scope (403),
// ownership of the path's object (404), idempotency key (400), body and
// schema (400), idempotency record.
func (s *server) toolHandler(tool contracts.Tool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rid := requestID(r.Context())
		if tool.Method == http.MethodPost {
			if r.ContentLength > s.limits.MaxBodyBytes {
				writeProblem(w, 0, contracts.Errorf(contracts.CodeContentTooLarge, "the body exceeds %d bytes", s.limits.MaxBodyBytes), rid)
				return
			}
			if !isJSON(r.Header.Get("Content-Type")) {
				writeProblem(w, 0, contracts.Errorf(contracts.CodeUnsupportedMediaType, "send the body as application/json"), rid)
				return
			}
		}
		p, ok := s.authenticate(w, r, tool.RequiredScope)
		if !ok {
			return
		}
		// The tool allowlist, the scope, ownership and the key are checked
		// by the service, in the gateway's order and before it reads the
		// body, so that its refusals of an authenticated principal are
		// audited like every other decision. A malformed Idempotency-Key
		// header reaches it as a key that was sent but is empty, which it
		// refuses as idempotency-key-invalid (safe reads ignore the header).
		key, sent, kerr := parseKeyHeader(r.Header)
		if kerr != nil {
			key = ""
		}
		call := gateway.Call{
			Tool: tool.Name, Surface: gateway.SurfaceREST, Key: key, KeySent: sent,
			RequestID: rid, TraceID: traceID(r.Context()),
			Args: func() (map[string]any, error) { return s.arguments(w, r, tool, key) },
		}
		if tool.PathArgument != "" {
			// A malformed escape is refused when the arguments are read.
			call.PathValue, _ = pathArgument(r, tool.PathArgument)
		}
		res := s.Service.Invoke(r.Context(), p, call)
		s.writeResult(w, r, res)
	}
}

func isJSON(ct string) bool {
	if ct == "application/json" {
		return true // the usual header, without parsing it
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return false
		}
	}
	return true
}

// authenticate verifies the request's bearer token. On failure it writes the
// answer and returns false. Unauthenticated refusals are logged and counted,
// never stored.
func (s *server) authenticate(w http.ResponseWriter, r *http.Request, scope contracts.Scope) (*auth.Principal, bool) {
	rid := requestID(r.Context())
	p, cred, err := s.Auth.Authenticate(r)
	if err == nil {
		if s.limiter != nil { // no rate limit: skip the namespace's hash
			// The principal's bucket first: one caller over its own limit
			// spends nothing of its tenant's.
			now := s.Now()
			who := "principal"
			ok, retry := s.limiter.Allow(r.Context(), ratelimit.PrincipalKey(p.Namespace()), s.principalRule, now)
			if ok && !s.tenantRule.Off() {
				who = "tenant"
				ok, retry = s.limiter.Allow(r.Context(), ratelimit.TenantKey(p.Tenant), s.tenantRule, now)
			}
			if !ok {
				s.Metrics.rateLimited.Inc()
				w.Header().Set("Retry-After", ratelimit.RetryAfter(retry))
				writeProblem(w, 0, contracts.Errorf(contracts.CodeRateLimited, "this %s sends too many requests", who), rid)
				return nil, false
			}
		}
		// The verified token travels in r's context (in place, so every
		// handler that authenticated reads it from r.Context()), for the
		// connections whose auth exchanges it for an upstream token: a
		// move run inside this request acts with this caller's token
		// (auth.Credential, which never formats the token).
		*r = *r.WithContext(auth.WithCredential(r.Context(), cred))
		return p, true
	}
	reason := auth.Reason(err)
	var scopes []string
	if scope != "" {
		scopes = []string{string(scope)}
	}
	switch {
	case errors.Is(err, auth.ErrNoToken):
		s.Metrics.AuthRefused("missing")
		w.Header().Set("WWW-Authenticate", challenge(s.metadataURL, "", "", scopes))
		writeProblem(w, 0, &contracts.Error{Code: contracts.CodeUnauthenticated,
			Message: "this call needs a bearer access token", Hint: "Send Authorization: Bearer <token>; the resource metadata names the issuers."}, rid)
	case errors.Is(err, auth.ErrInvalidRequest):
		s.Metrics.AuthRefused(reason)
		w.Header().Set("WWW-Authenticate", challenge(s.metadataURL, "invalid_request", reason, nil))
		writeProblem(w, 0, &contracts.Error{Code: contracts.CodeInvalidRequest,
			Message: "the credentials are sent incorrectly: " + reason, Hint: "Send the token once, in the Authorization header only."}, rid)
	case errors.Is(err, auth.ErrInvalidToken):
		s.Metrics.AuthRefused(reason)
		w.Header().Set("WWW-Authenticate", challenge(s.metadataURL, "invalid_token", reason, nil))
		writeProblem(w, 0, &contracts.Error{Code: contracts.CodeInvalidToken, Message: "the access token is not accepted: " + reason,
			Hint: invalidTokenHint(reason)}, rid)
	default:
		s.Logger.ErrorContext(r.Context(), "authentication failed", "err", err)
		writeProblem(w, 0, &contracts.Error{Code: contracts.CodeUnavailable, Message: "authentication is unavailable", Cause: err}, rid)
	}
	s.Logger.InfoContext(r.Context(), "authentication refused", "reason", reason)
	return nil, false
}

// writeResult writes a service answer: the stored or fresh body, or the
// problem, with the idempotency and authentication headers.
func (s *server) writeResult(w http.ResponseWriter, r *http.Request, res *gateway.Result) {
	h := w.Header()
	for k, v := range res.Header {
		h.Set(k, v)
	}
	if res.Replayed {
		h.Set("Idempotent-Replayed", "true")
		s.Metrics.idempotency.WithLabelValues("replayed").Inc()
	}
	if res.Err != nil {
		switch res.Err.Code {
		case contracts.CodeInsufficientScope:
			h.Set("WWW-Authenticate", s.scopeChallenge(gateway.RequiredScopes(res.Err)))
		case contracts.CodeIdempotencyKeyReused:
			s.Metrics.idempotency.WithLabelValues("reused").Inc()
		case contracts.CodeIdempotencyInProgress:
			s.Metrics.idempotency.WithLabelValues("in_progress").Inc()
		case contracts.CodeIdempotencyKeyExpired:
			s.Metrics.idempotency.WithLabelValues("expired").Inc()
		}
		rid, trace := requestID(r.Context()), ""
		if res.Replayed {
			// The original answer, byte for byte; X-Request-Id and
			// Traceparent name the retry.
			if res.RequestID != "" {
				rid = res.RequestID
			}
			trace = res.TraceID
		}
		writeProblemIn(w, res.Status, res.Err, rid, trace)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(res.Status)
	w.Write(res.Body)
	w.Write([]byte("\n"))
}

// parseKeyHeader reads Idempotency-Key: an RFC 8941 sf-string ("...") or,
// for clients that send it bare, the key itself. Several field lines, lists
// and parameters are refused.
func parseKeyHeader(h http.Header) (key string, sent bool, err *contracts.Error) {
	vals := h.Values("Idempotency-Key")
	if len(vals) == 0 {
		return "", false, nil
	}
	invalid := contracts.Errorf(contracts.CodeIdempotencyKeyInvalid, "send exactly one Idempotency-Key: one key, bare or as a quoted string")
	if len(vals) > 1 {
		return "", true, invalid
	}
	v := strings.TrimSpace(vals[0])
	if strings.HasPrefix(v, `"`) {
		if len(v) < 2 || !strings.HasSuffix(v, `"`) || strings.ContainsAny(v[1:len(v)-1], `"\`) {
			return "", true, invalid
		}
		v = v[1 : len(v)-1]
	} else if strings.ContainsAny(v, `,;" `) {
		return "", true, invalid
	}
	return v, true, nil
}

// arguments builds the tool's arguments from the request: the path
// argument, the query (GET) or the strict JSON body (POST), and the
// idempotency key for operations whose schema carries it.
func (s *server) arguments(w http.ResponseWriter, r *http.Request, tool contracts.Tool, key string) (map[string]any, error) {
	var args map[string]any
	if tool.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.limits.MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, contracts.Errorf(contracts.CodeContentTooLarge, "the body exceeds %d bytes", s.limits.MaxBodyBytes)
			}
			return nil, contracts.Errorf(contracts.CodeMalformedJSON, "the body could not be read")
		}
		args, err = strictjson.DecodeObjectWith(body, strictjson.Limits{MaxDepth: s.limits.MaxDepth, MaxElements: s.limits.MaxElements})
		if err != nil {
			return nil, err
		}
		// A versioned operation (praxec.command) takes its key as a member
		// too: a retry_with_key link copied verbatim works on every
		// surface (the service checks it agrees with the header).
		keyMember := "idempotencyKey"
		if tool.Idempotency == contracts.IdempotencyVersioned {
			keyMember = ""
		}
		for _, name := range []string{keyMember, tool.PathArgument} {
			if _, ok := args[name]; ok && name != "" {
				where := "the path"
				if name == "idempotencyKey" {
					where = "the Idempotency-Key header"
				}
				return nil, &contracts.Error{Code: contracts.CodeInvalidParams, Message: name + " travels in " + where + ", not in the body",
					Fields: []contracts.FieldError{{Pointer: "/" + name, Detail: "is not a body field; send it in " + where}}}
			}
		}
	} else {
		var err error
		if args, err = s.queryArguments(r, tool); err != nil {
			return nil, err
		}
	}
	if tool.PathArgument != "" {
		v, err := pathArgument(r, tool.PathArgument)
		if err != nil {
			return nil, err
		}
		args[tool.PathArgument] = v
	}
	if tool.Idempotency == contracts.IdempotencyRequired {
		args["idempotencyKey"] = key
	}
	return args, nil
}

// pathArgument returns the decoded value of the path parameter name. chi
// routes on the escaped path when the request's path holds escapes that
// differ from Go's canonical encoding (r.URL.RawPath set), and its
// parameters are then still escaped: "/v8/traces/%61bc" would read as
// "%61bc" instead of "abc". Decode them once, as RFC 3986 §2.1 prescribes.
func pathArgument(r *http.Request, name string) (string, error) {
	v := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return v, nil
	}
	dec, err := url.PathUnescape(v)
	if err != nil {
		return v, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the path holds a malformed escape",
			Fields: []contracts.FieldError{{Pointer: "/" + name, Detail: "is not a valid path segment"}}}
	}
	return dec, nil
}

// queryArguments turns a GET request's query into typed arguments, using
// the input schema's property types. Unknown and repeated parameters are
// refused.
func (s *server) queryArguments(r *http.Request, tool contracts.Tool) (map[string]any, error) {
	types := s.queryTypes[tool.Name]
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	args := map[string]any{}
	var fields []contracts.FieldError
	for name, vals := range q {
		typ, known := types[name]
		switch {
		case !known || name == tool.PathArgument:
			fields = append(fields, contracts.FieldError{Pointer: "/" + name, Detail: "is not a known parameter"})
		case len(vals) > 1:
			fields = append(fields, contracts.FieldError{Pointer: "/" + name, Detail: "must be given once"})
		case typ == "integer":
			if _, err := strconv.ParseInt(vals[0], 10, 64); err != nil {
				fields = append(fields, contracts.FieldError{Pointer: "/" + name, Keyword: "type", Detail: "must be of type integer"})
				continue
			}
			args[name] = json.Number(vals[0])
		case typ == "boolean":
			b, err := strconv.ParseBool(vals[0])
			if err != nil {
				fields = append(fields, contracts.FieldError{Pointer: "/" + name, Keyword: "type", Detail: "must be of type boolean"})
				continue
			}
			args[name] = b
		default:
			args[name] = vals[0]
		}
	}
	if len(fields) > 0 {
		return nil, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the query parameters do not match the input schema of " + tool.Name, Fields: fields}
	}
	return args, nil
}

// propertyTypes reads the top-level property types of an input schema.
func propertyTypes(schema json.RawMessage) map[string]string {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	out := make(map[string]string, len(s.Properties))
	for k, v := range s.Properties {
		out[k] = v.Type
	}
	return out
}
