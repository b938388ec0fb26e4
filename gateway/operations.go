package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// operations maps each operationId (or praxec dispatch operation) the
// root implements to its implementation: the missions' (missions.
// operations), the home read and the subject commands; the feature
// packages add theirs (Register). An operation missing from both answers
// not-implemented.
func (s *Service) operations() map[string]operation {
	ops := s.missions.operations()
	// A start or submit that succeeds drops the pending rows of the same
	// command, paused earlier on a subject since defined (subjects.go).
	for _, name := range []contracts.Operation{contracts.OpStart, contracts.OpSubmit} {
		o := ops[string(name)]
		o.mutate = s.completesPending(string(name), o.mutate)
		ops[string(name)] = o
	}
	ops[string(contracts.OpHome)] = operation{read: home, storeless: true}
	ops[string(contracts.OpCancelPendingSubject)] = operation{mutate: s.cancelPendingSubject}
	return ops
}

// operations are the missions' operations, by operationId or praxec
// dispatch operation, as the service's pipeline runs them.
func (ms *missions) operations() map[string]operation {
	return map[string]operation{
		"submitIntent":  {mutate: ms.submitIntent},
		"createMission": {mutate: ms.createMission, header: createdHeader, prepare: ms.prepareCreate, fires: ms.firesCreate},
		"getMission":    {read: ms.getMission},
		"signalMission": {mutate: ms.signalMission, exists: ms.missionExists, prepare: ms.prepareSignal, fires: ms.firesSignal},
		"cancelMission": {mutate: ms.cancelMission, exists: ms.missionExists},

		string(contracts.OpStart):   {mutate: ms.praxecStart, prepare: ms.prepareStart, fires: firesStart},
		string(contracts.OpSubmit):  {mutate: ms.praxecSubmit, prepare: ms.prepareSubmit, fires: ms.firesSubmit},
		string(contracts.OpGet):     {read: ms.praxecGet},
		string(contracts.OpExplain): {read: ms.praxecExplain},
	}
}

// Register adds the operations of a feature package (package op) to those
// the service dispatches. Each passes the same pipeline as the root's own:
// admission (its scope, idempotency class and schema come from the
// contract, by its Name), then a read in one read transaction (none when
// Storeless) whose events are recorded asynchronously, or a mutation in
// the write transaction that commits its idempotency record and events.
// Register panics on a wiring mistake: a name already registered, or an
// operation that sets neither or both of Read and Mutate. Call it before
// the service serves calls; it is not safe for use beside them.
func (s *Service) Register(ops ...op.Operation) {
	for _, o := range ops {
		if _, taken := s.ops[o.Name]; taken {
			panic(fmt.Sprintf("gateway: operation %q registered twice", o.Name))
		}
		switch read, mutate := o.Read, o.Mutate; {
		case read != nil && mutate == nil:
			s.ops[o.Name] = operation{storeless: o.Storeless,
				read: func(ctx context.Context, tx store.ReadTx, e *env) (any, error) { return read(ctx, tx, &e.Request) }}
		case mutate != nil && read == nil:
			s.ops[o.Name] = operation{
				mutate: func(ctx context.Context, tx store.Tx, e *env) (any, error) { return mutate(ctx, tx, &e.Request) }}
		default:
			panic(fmt.Sprintf("gateway: operation %q must set one of Read and Mutate", o.Name))
		}
	}
}

// newID mints an identifier: prefix, underscore, 26 base32 letters (the
// time in milliseconds, then 80 bits from crypto/rand: gateway/ids).
func newID(prefix string) string { return ids.New(prefix) }

// NewIdempotencyKey mints a fresh key for the links the gateway hands out.
func NewIdempotencyKey() string {
	return newID("idem")
}

// marshal encodes an answer (op.Marshal).
func marshal(v any) ([]byte, error) { return op.Marshal(v) }

// stringArg returns a string argument, "" when absent (op.StringArg).
func stringArg(args map[string]any, name string) string { return op.StringArg(args, name) }

// stringsArg returns a string-array argument (op.StringsArg).
func stringsArg(args map[string]any, name string) []string { return op.StringsArg(args, name) }

// Home is the answer of praxec.query home: three links to enumerate what
// the gateway offers.
type Home struct {
	Resource map[string]string `json:"resource"`
	Result   ResultStatus      `json:"result"`
	Links    []contracts.Link  `json:"links"`
}

// home serves praxec.query home, the entry point of a cold-start model. The
// answer is the same for every caller and configuration, so it is encoded
// once (homeBody).
func home(context.Context, store.ReadTx, *env) (any, error) {
	return homeBody, nil
}

// homeBody is the encoded answer of praxec.query home, clipped so that an
// append by a writer copies it rather than writing into it.
var homeBody = func() json.RawMessage {
	b, err := marshal(Home{
		Resource: map[string]string{"type": "gateway", "id": "home"},
		Result:   ResultStatus{Status: "ready", Message: "Search here for the workflows and proxy capabilities this gateway offers."},
		Links: []contracts.Link{
			{Rel: "search", Title: "Search workflows and capabilities", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": ""},
				InputSchema: json.RawMessage(`{"type":"object","required":["query"],"properties":{"query":{"type":"string"},"kind":{"type":"string","enum":["workflow","capability","connection"]},"limit":{"type":"integer","default":10}},"additionalProperties":false}`)},
			{Rel: "list_workflows", Title: "List configured workflows", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": "", "kind": "workflow"}},
			{Rel: "list_capabilities", Title: "List proxy capabilities", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": "", "kind": "capability"}},
		},
	})
	if err != nil {
		panic(fmt.Sprintf("gateway: encoding the home answer: %v", err))
	}
	return slices.Clip(json.RawMessage(b))
}()

// newTraceID mints a W3C trace id (16 random bytes, hex).
func newTraceID() string { return ids.Trace() }
