package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/store"
)

// operations maps each implemented operationId (or praxec dispatch
// operation) to its implementation. An operation missing here answers
// not-implemented.
func (s *Service) operations() map[string]operation {
	return map[string]operation{
		"submitIntent":  {mutate: s.submitIntent},
		"getTrace":      {read: s.getTrace},
		"createMission": {mutate: s.createMission, header: createdHeader, prepare: s.prepareCreate, fires: s.firesCreate},
		"getMission":    {read: s.getMission},
		"signalMission": {mutate: s.signalMission, exists: s.missionExists, prepare: s.prepareSignal, fires: s.firesSignal},
		"cancelMission": {mutate: s.cancelMission, exists: s.missionExists},
		"getCoverage":   {read: s.getCoverage},

		string(contracts.OpHome):    {read: s.home, storeless: true},
		string(contracts.OpStart):   {mutate: s.completesPending(string(contracts.OpStart), s.praxecStart), prepare: s.prepareStart, fires: firesStart},
		string(contracts.OpSubmit):  {mutate: s.completesPending(string(contracts.OpSubmit), s.praxecSubmit), prepare: s.prepareSubmit, fires: s.firesSubmit},
		string(contracts.OpGet):     {read: s.praxecGet},
		string(contracts.OpExplain): {read: s.praxecExplain},

		"searchCapabilities":              {read: s.searchCapabilities, storeless: true},
		string(contracts.OpSearch):        {read: s.praxecSearch, storeless: true},
		string(contracts.OpDescribe):      {read: s.describe, storeless: true},
		string(contracts.OpLexiconSearch): {read: s.lexiconSearch},
		string(contracts.OpLexiconLookup): {read: s.lexiconLookup},
		string(contracts.OpDefine):        {mutate: s.defineTerm},

		string(contracts.OpCancelPendingSubject): {mutate: s.cancelPendingSubject},

		"getSkill":              {read: s.getSkill, storeless: true},
		"queryMemory":           {read: s.queryMemory},
		"listGoals":             {read: s.listGoals},
		"listWorldCertificates": {read: s.listWorldCertificates},
	}
}

// newID mints an identifier: prefix, underscore, 26 base32 letters (the
// time in milliseconds, then 80 bits from crypto/rand: gateway/ids).
func newID(prefix string) string { return ids.New(prefix) }

// NewIdempotencyKey mints a fresh key for the links the gateway hands out.
func NewIdempotencyKey() string {
	return newID("idem")
}

func marshal(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil // encoded already (homeBody)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// stringArg returns a string argument, "" when absent.
func stringArg(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

// stringsArg returns a string-array argument.
func stringsArg(args map[string]any, name string) []string {
	raw, _ := args[name].([]any)
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

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
func (s *Service) home(context.Context, store.ReadTx, *env) (any, error) {
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
