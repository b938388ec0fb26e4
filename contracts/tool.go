package contracts

import (
	"encoding/json"
	"iter"
	"slices"
)

// Idempotency is a tool's mutation class.
type Idempotency string

const (
	// IdempotencyRequired marks a mutation that must carry one stable
	// idempotencyKey per logical mutation; a retry with the same key replays.
	IdempotencyRequired Idempotency = "required"
	// IdempotencySafeRead marks a read without side effects; it takes no key.
	IdempotencySafeRead Idempotency = "safe-read"
	// IdempotencyVersioned marks praxec.command: start is deduplicated by
	// runId, submit by expectedVersion plus exact replay. Its schema carries
	// no key; over REST an Idempotency-Key header is honoured when sent.
	IdempotencyVersioned Idempotency = "versioned"
)

// Annotations are the MCP tool annotations. They are hints for hosts, never
// a security control: the gateway enforces scopes and policy itself.
type Annotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// Tool is one tool of the contract. Its JSON form uses the field names of the
// Praxa tool list (inputSchema, operationId, requiredScope, pathArgument, ...)
// with outputSchema beside them.
//
// A Tool obtained from this package is a detached copy: changing it, or the
// bytes of its schemas, changes nothing in the contract.
type Tool struct {
	Name          string          `json:"name"`
	Title         string          `json:"title"`
	Description   string          `json:"description"`
	InputSchema   json.RawMessage `json:"inputSchema"`
	OutputSchema  json.RawMessage `json:"outputSchema"`
	OperationID   string          `json:"operationId"`
	Method        string          `json:"method"`
	Path          string          `json:"path"`
	RequiredScope Scope           `json:"requiredScope"`
	Idempotency   Idempotency     `json:"idempotency"`
	Annotations   Annotations     `json:"annotations"`
	PathArgument  string          `json:"pathArgument,omitempty"`
	// SuccessStatus is the HTTP status of a successful REST answer (200, or
	// 201 for a creation).
	SuccessStatus int `json:"successStatus"`
	// Errors lists the codes the operation can answer with beyond those every
	// operation of its class shares; ErrorCodes returns the complete list.
	Errors []Code `json:"-"`
}

// Clone returns a deep copy of t.
func (t Tool) Clone() Tool {
	t.InputSchema = cloneRaw(t.InputSchema)
	t.OutputSchema = cloneRaw(t.OutputSchema)
	t.Errors = slices.Clone(t.Errors)
	return t
}

// Mutates reports whether the tool changes state.
func (t Tool) Mutates() bool { return t.Idempotency != IdempotencySafeRead }

// ErrorCodes returns every code the operation can answer with over REST,
// sorted: those every authenticated operation shares, those its idempotency
// class and method imply, and its own.
func (t Tool) ErrorCodes() []Code {
	set := baseErrorCodes(t.Method, t.PathArgument)
	set[CodeToolNotAllowed] = true
	switch t.Idempotency {
	case IdempotencyRequired:
		for _, c := range []Code{CodeIdempotencyKeyMissing, CodeIdempotencyKeyInvalid, CodeIdempotencyKeyReused, CodeIdempotencyInProgress, CodeIdempotencyKeyExpired} {
			set[c] = true
		}
	case IdempotencyVersioned:
		for _, c := range []Code{CodeIdempotencyKeyInvalid, CodeIdempotencyKeyReused, CodeIdempotencyInProgress, CodeIdempotencyKeyExpired} {
			set[c] = true
		}
	}
	if t.Annotations.DestructiveHint {
		set[CodeDestructiveActionDenied] = true
	}
	return sortedCodes(set, t.Errors)
}

// baseErrorCodes are the codes every authenticated operation can answer
// with (not-acceptable: an Accept that admits neither of its media types),
// and those its method and path argument imply.
func baseErrorCodes(method, pathArgument string) map[Code]bool {
	set := map[Code]bool{
		CodeUnauthenticated: true, CodeInvalidToken: true, CodeInvalidRequest: true,
		CodeInsufficientScope: true, CodeInvalidParams: true, CodeNotAcceptable: true,
		CodeRateLimited: true, CodeInternal: true, CodeUnavailable: true,
	}
	if method == "POST" {
		for _, c := range []Code{CodeMalformedJSON, CodeRequestLimits, CodeContentTooLarge, CodeUnsupportedMediaType} {
			set[c] = true
		}
	}
	if pathArgument != "" {
		set[CodeNotFound] = true
	}
	return set
}

// sortedCodes adds own to set and returns the codes sorted.
func sortedCodes(set map[Code]bool, own []Code) []Code {
	for _, c := range own {
		set[c] = true
	}
	out := make([]Code, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Tool names, exactly as hosts register them.
const (
	ToolSubmitIntent          = "aura_submit_intent"
	ToolCreateMission         = "aura_create_mission"
	ToolGetMission            = "aura_get_mission"
	ToolSignalMission         = "aura_signal_mission"
	ToolCancelMission         = "aura_cancel_mission"
	ToolSearchCapabilities    = "aura_search_capabilities"
	ToolQueryMemory           = "aura_query_memory"
	ToolGetSkill              = "aura_get_skill"
	ToolGetTrace              = "aura_get_trace"
	ToolListGoals             = "aura_list_goals"
	ToolListWorldCertificates = "aura_list_world_certificates"
	ToolGetCoverage           = "aura_get_coverage"
	ToolPraxecQuery           = "praxec.query"
	ToolPraxecCommand         = "praxec.command"
)

// catalogue holds the definitions in their stable order (the seeds/003 table
// order, then the praxec pair). It is built once and never handed out.
var catalogue = buildCatalogue()

var catalogueIndex = indexBy(catalogue, func(t Tool) string { return t.Name }, "tool name")

// Tools returns a copy of every tool in the contract's stable order: the twelve
// aura_* tools in the order of the Praxa tool table, then praxec.query and
// praxec.command.
func Tools() []Tool { return clones(catalogue) }

// All iterates over copies of every tool in the stable order of Tools.
func All() iter.Seq[Tool] { return cloneSeq(catalogue) }

// Names returns every tool name in the stable order of Tools.
func Names() []string {
	out := make([]string, len(catalogue))
	for i, t := range catalogue {
		out[i] = t.Name
	}
	return out
}

// Lookup returns a copy of the tool with exactly this wire name.
func Lookup(name string) (Tool, bool) { return cloneAt(catalogue, catalogueIndex, name) }

// ByOperationID returns a copy of the tool whose operationId is id.
func ByOperationID(id string) (Tool, bool) {
	for _, t := range catalogue {
		if t.OperationID == id {
			return t.Clone(), true
		}
	}
	return Tool{}, false
}

// IsAura reports whether name is one of the twelve aura_* tools.
func IsAura(name string) bool {
	_, ok := catalogueIndex[name]
	return ok && name != ToolPraxecQuery && name != ToolPraxecCommand
}

// MarshalToolList renders the complete tool list as tools.json holds it:
// an indented JSON array in the stable order, ending in a newline. The output
// is deterministic.
func MarshalToolList(tools []Tool) ([]byte, error) {
	b, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
