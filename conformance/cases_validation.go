package conformance

import (
	"bytes"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/praxa/praxa/contracts"
)

func validationCases() []Case {
	intents := []string{"submitIntent"}
	// postRaw sends a raw body to aura_submit_intent with a fresh key.
	postRaw := func(t *T, body []byte, header http.Header) *response {
		h := http.Header{"Idempotency-Key": {newKey()}}
		for k, v := range header {
			h[k] = v
		}
		return t.do(request{method: http.MethodPost, path: intentsPath, token: t.token(TenantA), header: h, body: body})
	}
	return []Case{
		{ID: "VAL-001", Group: GroupValidation, Proves: "standards #58",
			Title:      "Malformed JSON (truncated, trailing data, two values) is refused 400 malformed-json, never 500",
			Operations: intents, Run: func(t *T) {
				for _, body := range []string{`{"intent": "x"`, `{"intent": "x"} trailing`, `{"intent": "x"} {}`, `[`, `nul`} {
					t.expectProblem("body "+body, postRaw(t, []byte(body), nil), http.StatusBadRequest, contracts.CodeMalformedJSON)
				}
			}},
		{ID: "VAL-002", Group: GroupValidation, Proves: "standards #59",
			Title:      "Duplicate member names are refused 400",
			Operations: intents, Run: func(t *T) {
				resp := postRaw(t, []byte(`{"intent": "a", "intent": "b"}`), nil)
				t.expectStatus("duplicate member names", resp, http.StatusBadRequest)
				t.check(resp.Problem != nil, "the refusal is not a problem document")
			}},
		{ID: "VAL-003", Group: GroupValidation, Proves: "standards #60",
			Title:      "An unknown field is refused 400 with errors[].pointer naming it",
			Operations: intents, Run: func(t *T) {
				body := intentBody()
				body["unknownField"] = true
				resp := postRaw(t, mustJSON(t, body), nil)
				t.expectProblem("an unknown field", resp, http.StatusBadRequest, contracts.CodeInvalidParams)
				t.expectPointer("an unknown field", resp, "/unknownField")
			}},
		{ID: "VAL-004", Group: GroupValidation, Proves: "standards #61",
			Title:      "Every violation is reported, not only the first: wrong types and a missing member each get an errors[] entry",
			Operations: []string{"submitIntent", "signalMission"}, Run: func(t *T) {
				resp := postRaw(t, []byte(`{"intent": 5, "tags": "x"}`), nil)
				t.expectProblem("two wrong types", resp, http.StatusBadRequest, contracts.CodeInvalidParams)
				t.expectPointer("intent of the wrong type", resp, "/intent")
				t.expectPointer("tags of the wrong type", resp, "/tags")
				path := strings.Replace(mustTool(contracts.ToolSignalMission).Path, "{runId}", randomID("run"), 1)
				resp = t.post(path, t.token(TenantA), newKey(), map[string]any{})
				if resp.Status == http.StatusNotFound {
					return // ownership is checked first and the mission does not exist
				}
				t.expectProblem("a signal without signal and expectedVersion", resp, http.StatusBadRequest, contracts.CodeInvalidParams)
				t.expectPointer("missing signal", resp, "/signal")
				t.expectPointer("missing expectedVersion", resp, "/expectedVersion")
			}},
		{ID: "VAL-005", Group: GroupValidation, Proves: "standards #62",
			Title:      "Invalid UTF-8 and lone surrogate escapes are refused 400",
			Operations: intents, Run: func(t *T) {
				for what, body := range map[string][]byte{
					"invalid UTF-8":  []byte("{\"intent\": \"caf\xe9\"}"),
					"lone surrogate": []byte(`{"intent": "\ud800x"}`),
				} {
					resp := postRaw(t, body, nil)
					t.expectStatus(what, resp, http.StatusBadRequest)
					t.check(resp.Problem != nil, "%s: the refusal is not a problem document", what)
				}
			}},
		{ID: "VAL-006", Group: GroupValidation, Proves: "standards #63",
			Title:      "A body that is not application/json (text/plain, or no Content-Type) is refused 415",
			Operations: intents, Run: func(t *T) {
				body := mustJSON(t, intentBody())
				t.expectProblem("text/plain", postRaw(t, body, http.Header{"Content-Type": {"text/plain"}}),
					http.StatusUnsupportedMediaType, contracts.CodeUnsupportedMediaType)
				t.expectProblem("no Content-Type", postRaw(t, body, http.Header{"Content-Type": {""}}),
					http.StatusUnsupportedMediaType, contracts.CodeUnsupportedMediaType)
			}},
		{ID: "VAL-007", Group: GroupValidation, Proves: "standards #66",
			Title:      "A 2 MiB body is refused 413 content-too-large, with a Content-Length and chunked",
			Operations: intents, Run: func(t *T) {
				body := append([]byte(`{"intent": "`), bytes.Repeat([]byte("x"), 2<<20)...)
				body = append(body, `"}`...)
				t.expectProblem("a 2 MiB body", postRaw(t, body, nil), http.StatusRequestEntityTooLarge, contracts.CodeContentTooLarge)
				resp := t.do(request{method: http.MethodPost, path: intentsPath, token: t.token(TenantA),
					header: http.Header{"Idempotency-Key": {newKey()}}, body: body, chunked: true})
				t.expectProblem("a 2 MiB chunked body", resp, http.StatusRequestEntityTooLarge, contracts.CodeContentTooLarge)
			}},
		{ID: "VAL-008", Group: GroupValidation, Proves: "standards #67",
			Title:      "JSON nested 40 levels deep is refused 400 request-limits; an array of 100,000 elements is refused 400 or 413",
			Operations: []string{"createMission", "submitIntent"}, Run: func(t *T) {
				nested := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
				body := []byte(`{"goal": "conformance", "definitionId": "` + deployPipeline + `", "input": ` + nested + `}`)
				resp := t.do(request{method: http.MethodPost, path: mustTool(contracts.ToolCreateMission).Path, token: t.token(TenantA),
					header: http.Header{"Idempotency-Key": {newKey()}}, body: body})
				t.expectProblem("40 levels of nesting", resp, http.StatusBadRequest, contracts.CodeRequestLimits)
				big := `{"intent": "conformance", "tags": [` + strings.TrimSuffix(strings.Repeat(`"t",`, 100_000), ",") + `]}`
				resp = postRaw(t, []byte(big), nil)
				t.expectStatus("an array of 100,000 elements", resp, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
			}},
		{ID: "VAL-009", Group: GroupValidation, Proves: "standards #64",
			Title: "An unknown route is a 404 problem; a wrong method is a 405 problem listing the allowed methods",
			Run: func(t *T) {
				tok := t.token(TenantA)
				t.expectProblem("an unknown route", t.get("/v8/conformance-no-such-route", tok), http.StatusNotFound, contracts.CodeNotFound)
				resp := t.do(request{method: http.MethodDelete, path: missionPath(randomID("run")), token: tok})
				t.expectProblem("DELETE on a mission", resp, http.StatusMethodNotAllowed, contracts.CodeMethodNotAllowed)
				allow := resp.Header.Get("Allow")
				t.check(slices.ContainsFunc(strings.Split(allow, ","), func(m string) bool { return strings.TrimSpace(m) == http.MethodGet }),
					"the 405 must list GET in Allow, got %q", allow)
			}},
		{ID: "VAL-010", Group: GroupValidation, Proves: "standards #65",
			Title:      "Hostile path arguments (../, %00, 10 KiB, a space) answer 400 or 404, never 500",
			Operations: []string{"getMission", "getTrace"}, Run: func(t *T) {
				tok := t.token(TenantA)
				for _, seg := range []string{"..%2F..%2Fetc", "%00", strings.Repeat("r", 10<<10), "a%20b", "%C0%AF"} {
					for _, tool := range []string{contracts.ToolGetMission, contracts.ToolGetTrace} {
						path := strings.Replace(mustTool(tool).Path, "{"+mustTool(tool).PathArgument+"}", seg, 1)
						resp := t.get(path, tok)
						t.expectStatus(tool+" with "+truncate(seg, 20), resp, http.StatusBadRequest, http.StatusNotFound, http.StatusRequestURITooLong)
					}
				}
			}},
		{ID: "VAL-011", Group: GroupValidation, Proves: "standards #68",
			Title:      "A search limit above the maximum is refused 400",
			Operations: []string{"searchCapabilities", "praxecQuery"}, Run: func(t *T) {
				tok := t.token(TenantA)
				resp := t.call(tok, contracts.ToolSearchCapabilities, map[string]any{"query": "", "limit": 1000})
				t.expectProblem("aura_search_capabilities limit 1000", resp, http.StatusBadRequest, contracts.CodeInvalidParams)
				t.expectPointer("aura_search_capabilities limit 1000", resp, "/limit")
				resp = t.call(tok, contracts.ToolPraxecQuery, map[string]any{"query": "", "limit": 1000})
				t.expectProblem("praxec.query search limit 1000", resp, http.StatusBadRequest, contracts.CodeInvalidParams)
			}},
		{ID: "VAL-012", Group: GroupValidation, Proves: "DESIGN.md: GET tools take flat query parameters, strictly",
			Title:      "An unknown or repeated query parameter of a GET operation is refused 400",
			Operations: []string{"getCoverage"}, Run: func(t *T) {
				tok, path := t.token(TenantA), mustTool(contracts.ToolGetCoverage).Path
				resp := t.get(path+"?conformanceBogus=1", tok)
				t.expectProblem("an unknown query parameter", resp, http.StatusBadRequest, contracts.CodeInvalidParams)
				t.expectPointer("an unknown query parameter", resp, "/conformanceBogus")
				resp = t.get(path+"?operationId=getMission&operationId=getTrace", tok)
				t.expectProblem("a repeated query parameter", resp, http.StatusBadRequest, contracts.CodeInvalidParams)
			}},
		{ID: "VAL-013", Group: GroupValidation, Proves: "standards #63 (Accept: application/xml only -> 406); RFC 9110 section 12.5.1",
			Title:      "A /v8 request whose Accept admits neither application/json nor application/problem+json is refused 406 not-acceptable; */*, application/*, either type and no Accept are answered in JSON",
			Operations: []string{"getCoverage", "submitIntent"}, Run: func(t *T) {
				tok, path := t.token(TenantA), mustTool(contracts.ToolGetCoverage).Path
				get := func(accept string) *response {
					h := http.Header{}
					if accept != "" {
						h.Set("Accept", accept)
					}
					return t.do(request{method: http.MethodGet, path: path, token: tok, header: h})
				}
				for _, accept := range []string{"application/xml", "text/html, application/xml;q=0.9", "application/json;q=0", "*/*;q=0"} {
					t.expectProblem("Accept: "+accept, get(accept), http.StatusNotAcceptable, contracts.CodeNotAcceptable)
				}
				resp := t.do(request{method: http.MethodPost, path: intentsPath, token: tok, body: mustJSON(t, intentBody()),
					header: http.Header{"Idempotency-Key": {newKey()}, "Accept": {"application/xml"}}})
				t.expectProblem("POST with Accept: application/xml", resp, http.StatusNotAcceptable, contracts.CodeNotAcceptable)
				for _, accept := range []string{"", "*/*", "application/*", "application/json", "application/problem+json", "text/html, */*;q=0.1"} {
					resp := get(accept)
					t.expectStatus("Accept: "+accept, resp, http.StatusOK)
					mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
					t.check(mt == "application/json", "Accept: %s: answered %q, want application/json", accept, resp.Header.Get("Content-Type"))
				}
			}},
	}
}
