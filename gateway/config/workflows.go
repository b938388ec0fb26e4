package config

import (
	"encoding/json"
	"fmt"
)

// Workflow is one workflow definition: a state machine whose instances are
// missions. Its id is its key under workflows.
type Workflow struct {
	// Version is the definition's version; instances record the version
	// they started with.
	Version     int      `json:"version"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Initial is the state a new instance starts in.
	Initial string `json:"initial"`
	// States are keyed by name.
	States map[string]State `json:"states"`
	// Transitions in declaration order; deterministic ones are tried in
	// this order.
	Transitions []Transition `json:"transitions"`
	// InputSchema, when set, validates a start's input (JSON Schema
	// 2020-12, object root, local references only).
	InputSchema map[string]any `json:"inputSchema,omitempty"`
	// Subjects lists input and argument fields whose values name lexicon
	// subjects (the lexicon feature checks them).
	Subjects []string `json:"subjects,omitempty"`
}

// State is one state of a workflow.
type State struct {
	Title string `json:"title,omitempty"`
	// Terminal states end the workflow: no transition leaves them.
	Terminal bool `json:"terminal,omitempty"`
	// OnEnter runs when an instance enters the state.
	OnEnter *Executor `json:"onEnter,omitempty"`
}

// The actors of a transition.
const (
	ActorAgent         = "agent"
	ActorHuman         = "human"
	ActorDeterministic = "deterministic"
)

// Transition is one move of a workflow.
type Transition struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// From names the states the transition leaves: one or several.
	From StringList `json:"from"`
	To   string     `json:"to"`
	// Actor is agent (the default), human (firing it queues an approval)
	// or deterministic (fired by the runtime as soon as its guards pass).
	Actor string `json:"actor,omitempty"`
	// Guards run immediately before the executor; all must pass.
	Guards []Guard `json:"guards,omitempty"`
	// Executor does the transition's work (noop when absent).
	Executor *Executor `json:"executor,omitempty"`
	// InputSchema validates the transition's arguments.
	InputSchema map[string]any `json:"inputSchema,omitempty"`
	// Prefill holds arguments the transition's link carries pre-filled.
	Prefill map[string]any `json:"prefill,omitempty"`
	// Produces names the evidence the transition adds on success.
	Produces []string `json:"produces,omitempty"`
	// Set assigns context members on success: a value is a literal, or a
	// path ($.arguments.x, $.context.x, $.input.x, $.output.x).
	Set map[string]any `json:"set,omitempty"`
}

// Guard is a condition checked right before a transition's executor.
type Guard struct {
	// Kind is evidence: the instance must hold every evidence in Requires.
	Kind     string   `json:"kind"`
	Requires []string `json:"requires,omitempty"`
}

// Executor describes the work of a transition, a state's onEnter or a
// capability. Which members apply depends on Kind: noop; human (Queue);
// workflow (DefinitionID, Input, TimeoutMs); mcp (Connection, Tool, Map);
// cli (Connection, Args, TreatNonZeroAsFailure); rest (Connection, Method,
// Path, Query, Headers, Body). mcp, cli and rest name a connection of
// their kind and may bound one call with TimeoutMs.
type Executor struct {
	Kind string `json:"kind"`

	Queue string `json:"queue,omitempty"`

	DefinitionID string         `json:"definitionId,omitempty"`
	Input        map[string]any `json:"input,omitempty"`
	TimeoutMs    int            `json:"timeoutMs,omitempty"`

	Connection string         `json:"connection,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	Map        map[string]any `json:"map,omitempty"`

	Args                  []string `json:"args,omitempty"`
	TreatNonZeroAsFailure *bool    `json:"treatNonZeroAsFailure,omitempty"`
	// Paths are the path arguments of a cli call, checked against the
	// connection's roots before it runs.
	Paths *PathArgs `json:"paths,omitempty"`

	Method  string            `json:"method,omitempty"`
	Path    string            `json:"path,omitempty"`
	Query   map[string]any    `json:"query,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    any               `json:"body,omitempty"`

	// Script names the script a script executor runs: a file of the
	// scripts directory (package scripts).
	Script string `json:"script,omitempty"`
}

// The executor kinds.
const (
	ExecutorNoop     = "noop"
	ExecutorHuman    = "human"
	ExecutorWorkflow = "workflow"
	ExecutorMCP      = "mcp"
	ExecutorCLI      = "cli"
	ExecutorREST     = "rest"
	ExecutorScript   = "script"
)

// StringList is one string or a list of strings in the file; it is always
// a list in Go.
type StringList []string

// UnmarshalJSON accepts a string or an array of strings.
func (l *StringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = StringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings: %w", err)
	}
	*l = many
	return nil
}

// Policy configures decisions beyond scopes.
type Policy struct {
	// DenyDestructive lists the principals that may not call destructive
	// tools (those annotated destructiveHint): a call from a principal that
	// matches any entry answers 403 destructive-action-denied.
	DenyDestructive []PrincipalMatch `json:"denyDestructive,omitempty"`
	// AllowSelfApproval names the approval queues whose approvals the
	// principal that asked for them may grant itself ("" is the default
	// queue); everywhere else that answers 409 self-approval-forbidden.
	AllowSelfApproval []string `json:"allowSelfApproval,omitempty"`
}

// PrincipalMatch matches principals: every member given must match; an
// entry with no member matches everyone.
type PrincipalMatch struct {
	Tenant  string `json:"tenant,omitempty"`
	Subject string `json:"subject,omitempty"`
	Client  string `json:"client,omitempty"`
	// ToolSet matches calls from principals whose token tool allowlist is
	// exactly this named tool set, and calls through a surface that serves
	// only this set.
	ToolSet string `json:"toolSet,omitempty"`
}
