package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/strictjson"
)

// FuzzRequestID: the edge reads a refused request's id from an untrusted
// body. It never panics; an id it finds is a string or number member "id"
// of a JSON object, and reads back the same from its own encoding.
func FuzzRequestID(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":7,"method":"x"}`, `{"id":"a"}`, `{"id":null}`, `{"id":{}}`,
		`[{"id":1}]`, `{"id":1e400}`, `{"id":-0.5}`, `{"id":"\u0000"}`, `{`, ``, `{"id":1,"id":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id := requestID(body)
		if id.IsNull() {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("id %s from a body that is not an object: %q", id, body)
		}
		b, err := json.Marshal(map[string]any{"id": id})
		if err != nil {
			t.Fatal(err)
		}
		if again := requestID(b); again != id {
			t.Fatalf("id %s reads back as %s", id, again)
		}
	})
}

// FuzzParseEnvelope: an /mcp body is untrusted. ParseEnvelope never
// panics; what it refuses is a parse error or an invalid request; what it
// accepts the strict decoder accepts too, and each message it returns is
// the decoded one: jsonrpc "2.0", the same method, id (within MaxIDBytes)
// and params.
func FuzzParseEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b","params":[1]}]`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
		`{"jsonrpc":"2.0","id":null,"method":"x","params":{"_meta":{"a":"\ud800"}}}`,
		`{"jsonrpc":"\u0032.0","id":1e3,"method":"x"}`, `[]`, `5`, `{"id":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, rerr := ParseEnvelope(body)
		if rerr != nil {
			if rerr.Code != contracts.RPCParseError && rerr.Code != contracts.RPCInvalidRequest || rerr.Message == "" {
				t.Fatalf("%q: refused with %+v", body, rerr)
			}
			if rerr.Code == contracts.RPCParseError {
				if _, err := strictjson.DecodeWith(body, strictjson.Limits{MaxDepth: maxMessageDepth, MaxElements: 1 << 30}); err == nil {
					t.Fatalf("%q: a parse error for a body the strict decoder accepts", body)
				}
			}
			return
		}
		v, err := strictjson.DecodeWith(body, strictjson.Limits{MaxDepth: maxMessageDepth, MaxElements: 1 << 30})
		if err != nil {
			t.Fatalf("%q: accepted, but the strict decoder refuses it: %v", body, err)
		}
		msgs, envs := []any{v}, []Envelope{env}
		if env.Batch != nil {
			arr, ok := v.([]any)
			if !ok || len(arr) != len(env.Batch) {
				t.Fatalf("%q: a batch of %d read as %v", body, len(env.Batch), v)
			}
			msgs, envs = arr, env.Batch
		}
		for i, m := range msgs {
			obj, ok := m.(map[string]any)
			e := envs[i]
			if !ok || obj["jsonrpc"] != "2.0" {
				t.Fatalf("%q: message %d accepted: %v", body, i, m)
			}
			if method, _ := obj["method"].(string); method != e.Method {
				t.Fatalf("%q: method %q, decoded %v", body, e.Method, obj["method"])
			}
			rawID, hasID := obj["id"]
			if hasID != (e.ID != nil) {
				t.Fatalf("%q: id %v, decoded %v", body, e.ID, rawID)
			}
			if e.ID != nil && len(e.ID.String()) > MaxIDBytes {
				t.Fatalf("%q: an id of %d bytes accepted", body, len(e.ID.String()))
			}
			for name, raw := range map[string]json.RawMessage{"params": e.Params, "result": e.Result, "error": e.Error} {
				want, has := obj[name]
				if has != (raw != nil) {
					t.Fatalf("%q: %s %s, decoded %v", body, name, raw, want)
				}
				if has {
					got, err := strictjson.DecodeWith(raw, strictjson.Limits{MaxDepth: maxMessageDepth, MaxElements: 1 << 30})
					a, _ := json.Marshal(got)
					b, _ := json.Marshal(want)
					if err != nil || string(a) != string(b) {
						t.Fatalf("%q: %s reads %s, decoded %s (%v)", body, name, raw, b, err)
					}
				}
			}
		}
	})
}

// nopBackend answers nothing; the fuzz target below never calls it.
type nopBackend struct{}

func (nopBackend) Call(context.Context, string, json.RawMessage) Outcome { return Outcome{} }

// FuzzStatelessTake: the stateless request path reads an untrusted body's
// params and _meta (take). It never panics, and a call it takes is one go-sdk
// would serve the same: a tools/call with an id, of a tool the server
// registers, whose name the Mcp-Name header carries, whose arguments are an
// object, and whose _meta names 2026-07-28 and carries client capabilities.
func FuzzStatelessTake(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"praxec.query","arguments":{},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"praxec.query",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"praxec.query","arguments":[],` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"praxec.query","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"x","icons":[]},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"a":{}}}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0070raxec.query",` + meta + `}}`,
	} {
		f.Add([]byte(s), "praxec.query")
	}
	b, err := newServer(nopBackend{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	p := newStatelessPath(b)
	f.Fuzz(func(t *testing.T, body []byte, name string) {
		env, rerr := ParseEnvelope(body)
		if rerr != nil {
			return
		}
		r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		if err != nil {
			return
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set(headerProtocolVersion, revisionStateless)
		r.Header.Set(headerMethod, "tools/call")
		r.Header.Set(headerName, name)
		c, ok := p.take(r, &env)
		if !ok {
			return
		}
		if env.ID == nil || env.Method != "tools/call" || c.name != name || c.name == "" {
			t.Fatalf("took %+v from %q", c, body)
		}
		if _, registered := b.tool(c.name); !registered {
			t.Fatalf("took a call of %q, which the server does not register", c.name)
		}
		if c.args != nil && firstByte(c.args) != '{' {
			t.Fatalf("took arguments that are not an object: %s", c.args)
		}
		if c.meta[mcp.MetaKeyProtocolVersion] != revisionStateless || c.meta[mcp.MetaKeyClientCapabilities] == nil {
			t.Fatalf("took _meta %v", c.meta)
		}
	})
}

// FuzzPlainDecode: on any text strictjson.Check accepts, plainDecode
// decodes what json.Unmarshal decodes into an any, and fails where it
// fails.
func FuzzPlainDecode(f *testing.F) {
	for _, s := range []string{
		`{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}`,
		` [ 1 , -2.5e-3 , 1e400 , "a\u00e9\n" , true , false , null , { } , [ ] ] `,
		`{"a":{"b":[{"c":"\ud83d\ude00"}]},"n":12345678901234567890}`,
		`"x"`, `0`, `-0`, `1E+2`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if strictjson.Check(raw, maxMessageDepth) != nil {
			return
		}
		var want any
		werr := json.Unmarshal(raw, &want)
		got, ok := plainDecode(raw)
		if ok != (werr == nil) || ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: plainDecode %#v %v, json.Unmarshal %#v %v", raw, got, ok, want, werr)
		}
	})
}
