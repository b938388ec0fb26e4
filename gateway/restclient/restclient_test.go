package restclient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/restclient"
)

// seen is what the fake gateway received.
type seen struct {
	method, uri, key, body string
}

func fakeGateway(t *testing.T) (*restclient.Client, *seen) {
	t.Helper()
	var s seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s = seen{method: r.Method, uri: r.RequestURI, key: r.Header.Get("Idempotency-Key"), body: string(b)}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	c, err := restclient.New(srv.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, &s
}

func TestCallToolMapsArguments(t *testing.T) {
	c, s := fakeGateway(t)
	for _, tc := range []struct {
		tool, args string
		want       seen
	}{
		{contracts.ToolGetMission, `{"runId":"wf_1"}`, seen{method: "GET", uri: "/v8/missions/wf_1"}},
		// A path value is escaped once, not twice.
		{contracts.ToolGetMission, `{"runId":"a b/c"}`, seen{method: "GET", uri: "/v8/missions/a%20b%2Fc"}},
		{contracts.ToolListWorldCertificates, `{"limit":5,"issuer":"x y"}`, seen{method: "GET", uri: "/v8/world-model/certificates?issuer=x+y&limit=5"}},
		{contracts.ToolSignalMission, `{"runId":"wf_1","idempotencyKey":"key-0000000000000001","signal":"go","expectedVersion":2}`,
			seen{method: "POST", uri: "/v8/missions/wf_1/signals", key: "key-0000000000000001", body: `{"expectedVersion":2,"signal":"go"}`}},
		{contracts.ToolPraxecCommand, `{"definitionId":"d"}`, seen{method: "POST", uri: "/v8/praxec/command", body: `{"definitionId":"d"}`}},
	} {
		if _, err := c.CallTool(context.Background(), tc.tool, []byte(tc.args)); err != nil {
			t.Errorf("%s %s: %v", tc.tool, tc.args, err)
			continue
		}
		if *s != tc.want {
			t.Errorf("%s %s: sent %+v, want %+v", tc.tool, tc.args, *s, tc.want)
		}
	}
}

// Arguments that cannot become the REST request are refused with the
// contract error the gateway would give, and nothing is sent.
func TestCallToolRefusesUnsendableArguments(t *testing.T) {
	c, s := fakeGateway(t)
	for _, tc := range []struct {
		tool, args string
		code       contracts.Code
		pointer    string
	}{
		{contracts.ToolGetMission, `{}`, contracts.CodeInvalidParams, "/runId"},
		{contracts.ToolGetMission, `{"runId":7}`, contracts.CodeInvalidParams, "/runId"},
		{contracts.ToolGetMission, `{"runId":""}`, contracts.CodeInvalidParams, "/runId"},
		{contracts.ToolPraxecQuery, `[1]`, contracts.CodeInvalidParams, ""},
		{contracts.ToolPraxecQuery, `null`, contracts.CodeInvalidParams, ""},
		{contracts.ToolSubmitIntent, `{"idempotencyKey":7,"intent":"x"}`, contracts.CodeIdempotencyKeyInvalid, "/idempotencyKey"},
		// Decoding would keep the last "query"; the gateway refuses both.
		{contracts.ToolPraxecQuery, `{"query":"a","kind":"workflow","query":"b"}`, contracts.CodeMalformedJSON, "-"},
	} {
		*s = seen{}
		_, err := c.CallTool(context.Background(), tc.tool, []byte(tc.args))
		var ce *contracts.Error
		if !errors.As(err, &ce) || ce.Code != tc.code || (tc.pointer != "-" && (len(ce.Fields) != 1 || ce.Fields[0].Pointer != tc.pointer)) {
			t.Errorf("%s %s: %v, want %s at %q", tc.tool, tc.args, err, tc.code, tc.pointer)
		}
		if *s != (seen{}) {
			t.Errorf("%s %s: a request was sent: %+v", tc.tool, tc.args, *s)
		}
	}
	if _, err := c.CallTool(context.Background(), "nope", nil); !errors.Is(err, restclient.ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}
}
