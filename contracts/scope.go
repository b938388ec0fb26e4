package contracts

import "slices"

// Scope is an OAuth 2 scope the gateway checks before it runs an operation.
// Scopes match exactly and case-sensitively.
type Scope string

// The nine scopes of the Praxa tool contract.
const (
	ScopeMissionsRead     Scope = "missions:read"
	ScopeMissionsWrite    Scope = "missions:write"
	ScopeCapabilitiesRead Scope = "capabilities:read"
	ScopeMemoryRead       Scope = "memory:read"
	ScopeSkillsRead       Scope = "skills:read"
	ScopeTracesRead       Scope = "traces:read"
	ScopeContextRead      Scope = "context:read"
	ScopeWorldRead        Scope = "world:read"
	ScopeCoverageRead     Scope = "coverage:read"
)

// Operator scopes, for operations that are not agent tools.
const (
	ScopeLexiconWrite   Scope = "lexicon:write"
	ScopeApprovalsWrite Scope = "approvals:write"
	ScopeCoverageWrite  Scope = "coverage:write"
	ScopeTokensWrite    Scope = "tokens:write"
	ScopeConfigWrite    Scope = "config:write"
	// ScopeCapabilitiesAdmin accepts the changed definition of a
	// quarantined imported capability.
	ScopeCapabilitiesAdmin Scope = "capabilities:admin"
)

var scopeDescriptions = map[Scope]string{
	ScopeMissionsRead:      "Read mission projections.",
	ScopeMissionsWrite:     "Submit intents and create, signal and cancel missions; start and advance praxec workflows.",
	ScopeCapabilitiesRead:  "Search and describe workflows, capabilities, connections and lexicon terms.",
	ScopeMemoryRead:        "Query purpose-filtered memory within the compartments and purposes the token allows.",
	ScopeSkillsRead:        "Read governed skills and their evidence state.",
	ScopeTracesRead:        "Read redacted audit traces.",
	ScopeContextRead:       "List purpose- and compartment-filtered context goals.",
	ScopeWorldRead:         "List signed model capability certificates.",
	ScopeCoverageRead:      "Read reference coverage evidence.",
	ScopeLexiconWrite:      "Define lexicon terms and aliases (operator).",
	ScopeApprovalsWrite:    "List and resolve pending human approvals (operator).",
	ScopeCoverageWrite:     "Record conformance runs as coverage evidence (operator).",
	ScopeTokensWrite:       "Revoke access tokens by jti (operator).",
	ScopeConfigWrite:       "Reload the gateway's configuration file (operator).",
	ScopeCapabilitiesAdmin: "Accept the changed upstream definition of a quarantined imported capability (operator).",
}

// Scopes returns every scope the gateway knows, sorted.
func Scopes() []Scope {
	out := make([]Scope, 0, len(scopeDescriptions))
	for s := range scopeDescriptions {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Known reports whether s is a scope of the contract.
func (s Scope) Known() bool {
	_, ok := scopeDescriptions[s]
	return ok
}

// Description says in one sentence what the scope grants; it is empty for an
// unknown scope.
func (s Scope) Description() string { return scopeDescriptions[s] }

// Operator reports whether s is an operator scope rather than one an agent
// tool requires.
func (s Scope) Operator() bool {
	switch s {
	case ScopeLexiconWrite, ScopeApprovalsWrite, ScopeCoverageWrite, ScopeTokensWrite, ScopeConfigWrite, ScopeCapabilitiesAdmin:
		return true
	}
	return false
}
