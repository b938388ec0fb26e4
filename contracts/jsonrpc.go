package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// JSONRPCVersion is the value of every message's "jsonrpc" member.
const JSONRPCVersion = "2.0"

// Standard JSON-RPC 2.0 error codes.
const (
	RPCParseError     = -32700
	RPCInvalidRequest = -32600
	RPCMethodNotFound = -32601
	RPCInvalidParams  = -32602
	RPCInternalError  = -32603
)

type idKind uint8

const (
	idNull idKind = iota
	idString
	idNumber
)

// ID is a JSON-RPC 2.0 request id: a string, a number or null. It keeps a
// number's exact text, so an id round-trips byte for byte. The zero ID is
// null.
type ID struct {
	kind idKind
	text string
}

// StringID returns a string id.
func StringID(s string) ID { return ID{kind: idString, text: s} }

// NumberID returns a numeric id.
func NumberID(n int64) ID { return ID{kind: idNumber, text: strconv.FormatInt(n, 10)} }

// IsNull reports whether the id is null.
func (id ID) IsNull() bool { return id.kind == idNull }

// IsString reports whether the id is a string.
func (id ID) IsString() bool { return id.kind == idString }

// IsNumber reports whether the id is a number.
func (id ID) IsNumber() bool { return id.kind == idNumber }

// String returns the id's text: the string itself, the number's digits, or
// "null".
func (id ID) String() string {
	if id.kind == idNull {
		return "null"
	}
	return id.text
}

// MarshalJSON implements json.Marshaler.
func (id ID) MarshalJSON() ([]byte, error) {
	switch id.kind {
	case idString:
		return json.Marshal(id.text)
	case idNumber:
		return []byte(id.text), nil
	default:
		return []byte("null"), nil
	}
}

// errBadID reports an id that is neither a string, a number nor null.
var errBadID = errors.New("contracts: a JSON-RPC id must be a string, a number or null")

// UnmarshalJSON implements json.Unmarshaler.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*id = ID{}
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = StringID(s)
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return errBadID
		}
		*id = ID{kind: idNumber, text: string(b)}
	default:
		return errBadID
	}
	return nil
}

// Request is a JSON-RPC 2.0 request, or a notification when ID is nil.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *ID             `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// IsNotification reports whether r expects no response.
func (r Request) IsNotification() bool { return r.ID == nil }

// UnmarshalJSON implements json.Unmarshaler. A present "id": null decodes to
// a non-nil ID that is null: such a message is a request, not a
// notification, and it encodes back with its null id.
func (r *Request) UnmarshalJSON(b []byte) error {
	type plain Request
	var aux struct {
		plain
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*r = Request(aux.plain)
	r.ID = nil
	if aux.ID != nil {
		var id ID
		if err := id.UnmarshalJSON(aux.ID); err != nil {
			return err
		}
		r.ID = &id
	}
	return nil
}

// Response is a JSON-RPC 2.0 response: exactly one of Result and Error is set.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC 2.0 error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *RPCError) Error() string {
	return "jsonrpc error " + strconv.Itoa(e.Code) + ": " + e.Message
}
