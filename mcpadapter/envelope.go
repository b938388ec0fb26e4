package mcpadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/strictjson"
)

// MaxIDBytes bounds a JSON-RPC request id on /mcp: a string id of at most
// this many bytes (UTF-8, unescaped), a number of at most this many
// characters. A longer id is refused, never echoed.
const MaxIDBytes = 256

// maxMessageDepth bounds the nesting of a JSON-RPC message on /mcp: the
// go-sdk's own bound (internal/json, 1000), far above any message's and a
// tool's arguments' (server.limits.maxDepth bounds those, as a tool error).
const maxMessageDepth = 1000

// Envelope is one JSON-RPC 2.0 message as ParseEnvelope reads it: a
// request (Method set, ID not nil), a notification (Method set, ID nil) or
// a response (Method empty, Result or Error set).
type Envelope struct {
	// ID is the message's id; nil when it has none. A present "id": null
	// is a null ID, not nil.
	ID     *contracts.ID
	Method string
	// Params, Result and Error are the raw text of those members; nil
	// when absent. ParseEnvelope checked them as it checked the rest.
	Params, Result, Error json.RawMessage
	// Batch holds the messages of a batch (a JSON array), each read as
	// one message; the fields above are then zero. MCP has had no
	// batches since 2025-06-18; the SDK still serves them at earlier
	// revisions, and refuses them after.
	Batch []Envelope
}

// ParseEnvelope reads an /mcp request body, once and strictly (JSON-RPC
// 2.0 and RFC 8259 as strictjson.Check enforces them): exactly one JSON
// value, valid UTF-8 with no unpaired surrogate escape anywhere, no member
// name twice in any object, nesting at most maxMessageDepth deep; an object
// (or a batch of them) whose "jsonrpc" is "2.0", whose "id", when present,
// is a string, a number or null within MaxIDBytes, and whose "method", when
// present, is a string. Member names are matched exactly, as the go-sdk
// matches them. Members it does not know are kept in the text, not read.
//
// A failure is the JSON-RPC error to answer (HTTP 400): a parse error
// (-32700) for text that is not JSON or not UTF-8; an invalid request
// (-32600) for anything else. The returned envelope then holds the
// message's id when it was read whole (a string or number within the
// bound), for the error to name; the id is otherwise null.
func ParseEnvelope(body []byte) (Envelope, *contracts.RPCError) {
	if err := strictjson.Check(body, maxMessageDepth); err != nil {
		ce := contracts.AsError(err)
		if ce.Code == contracts.CodeRequestLimits || errors.Is(err, strictjson.ErrDuplicateName) {
			return Envelope{}, invalidRequest("%s", ce.Message)
		}
		return Envelope{}, &contracts.RPCError{Code: contracts.RPCParseError, Message: "parse error: " + ce.Message}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if trimmed[0] == '[' {
		var batch []Envelope
		for elem := range strictjson.Elements(trimmed) {
			env, rerr := parseMessage(elem)
			if rerr != nil {
				return Envelope{}, rerr // a batch's error names no id
			}
			batch = append(batch, env)
		}
		if batch == nil {
			batch = []Envelope{}
		}
		return Envelope{Batch: batch}, nil
	}
	return parseMessage(trimmed)
}

// parseMessage reads one message of a body Check accepted.
func parseMessage(msg []byte) (Envelope, *contracts.RPCError) {
	var env Envelope
	if msg[0] != '{' {
		return env, invalidRequest("a JSON-RPC message is a JSON object")
	}
	var version, id, method json.RawMessage
	for name, raw := range strictjson.Members(msg) {
		switch string(name) {
		case "jsonrpc":
			version = raw
		case "id":
			id = raw
		case "method":
			method = raw
		case "params":
			env.Params = raw
		case "result":
			env.Result = raw
		case "error":
			env.Error = raw
		}
	}
	if id != nil {
		parsed, rerr := parseID(id)
		if rerr != nil {
			return Envelope{}, rerr
		}
		env.ID = &parsed
	}
	if !bytes.Equal(version, []byte(`"`+contracts.JSONRPCVersion+`"`)) { // its usual spelling, without a copy
		if v, ok := strictjson.String(version); !ok || v != contracts.JSONRPCVersion {
			return env, invalidRequest(`"jsonrpc" must be "2.0"`)
		}
	}
	if method != nil {
		m, ok := strictjson.String(method)
		if !ok {
			return env, invalidRequest(`"method" must be a string`)
		}
		env.Method = m
	}
	return env, nil
}

// parseID reads an id: a string, a number or null, within MaxIDBytes.
func parseID(raw []byte) (contracts.ID, *contracts.RPCError) {
	var id contracts.ID
	if s, ok := strictjson.String(raw); ok {
		if len(s) > MaxIDBytes {
			return id, invalidRequest("the id is a string of %d bytes; at most %d are accepted", len(s), MaxIDBytes)
		}
		return contracts.StringID(s), nil
	}
	if len(raw) > MaxIDBytes && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return id, invalidRequest("the id is a number of %d characters; at most %d are accepted", len(raw), MaxIDBytes)
	}
	if len(raw) == 0 || len(raw) > MaxIDBytes || id.UnmarshalJSON(raw) != nil {
		return id, invalidRequest("the id must be a string, a number or null")
	}
	return id, nil
}

func invalidRequest(format string, args ...any) *contracts.RPCError {
	return &contracts.RPCError{Code: contracts.RPCInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
}
