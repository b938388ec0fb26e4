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

// The approvers of a human executor (Executor.Approver).
const (
	ApproverQueue = "queue"
	ApproverHost  = "host"
)

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

// Guard is a condition checked right before a transition's executor. Kind
// decides which members apply:
//
//   - evidence (Requires): the instance must hold every evidence named;
//   - argument (Argument and at least one of Equals, In, Matches, Min,
//     Max): the call's argument must satisfy every predicate given;
//   - schedule (Timezone and at least one of Weekdays, Hours): the call
//     must come on an allowed weekday, within an allowed window, in the
//     named IANA time zone.
type Guard struct {
	Kind     string   `json:"kind"`
	Requires []string `json:"requires,omitempty"`

	// Argument names the top-level argument an argument guard checks.
	Argument string `json:"argument,omitempty"`
	// Equals is the value the argument must equal (JSON equality: numbers
	// by value, objects member by member).
	Equals any `json:"equals,omitempty"`
	// In lists the values the argument must be one of.
	In []any `json:"in,omitempty"`
	// Matches is a regular expression (RE2 syntax, at most
	// MaxGuardPatternLength bytes) the whole argument, a string, must
	// match.
	Matches string `json:"matches,omitempty"`
	// Min and Max bound the argument, a number, inclusively.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`

	// Timezone is the IANA time zone a schedule guard reads the clock in
	// (Europe/Paris, UTC).
	Timezone string `json:"timezone,omitempty"`
	// Weekdays are the days a call is allowed on (mon … sun); all when
	// empty.
	Weekdays []string `json:"weekdays,omitempty"`
	// Hours are the windows a call is allowed in, each "HH:MM-HH:MM", the
	// start included and the end excluded (24:00 is the end of the day);
	// the whole day when empty.
	Hours []string `json:"hours,omitempty"`
}

// The guard kinds.
const (
	GuardEvidence = "evidence"
	GuardArgument = "argument"
	GuardSchedule = "schedule"
)

// Executor describes the work of a transition, a state's onEnter or a
// capability. Which members apply depends on Kind (Kind.Members, as the
// table of kinds says); a kind that NeedsConnection names a connection of
// its Connection kind and may bound one call with TimeoutMs.
type Executor struct {
	Kind Kind `json:"kind"`

	Queue string `json:"queue,omitempty"`
	// Approver says who may be asked to approve a human executor's
	// approval: ApproverQueue (the default: only the operators of the
	// queue, on their own surfaces) or ApproverHost (also the user of the
	// MCP host whose agent asked, through a URL elicitation to the
	// gateway's approval page, where that person signs in on their own).
	Approver string `json:"approver,omitempty"`

	DefinitionID string         `json:"definitionId,omitempty"`
	Input        map[string]any `json:"input,omitempty"`
	TimeoutMs    int            `json:"timeoutMs,omitempty"`

	Connection string         `json:"connection,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	Map        map[string]any `json:"map,omitempty"`

	Args                  []string `json:"args,omitempty"`
	TreatNonZeroAsFailure *bool    `json:"treatNonZeroAsFailure,omitempty"`
	// Paths are the path arguments of a cli call, checked against the
	// connection's roots before it runs; the command receives each one as
	// the absolute path that was checked, never as the caller spelled it.
	Paths *PathArgs `json:"paths,omitempty"`
	// UnconfinedArguments lets a cli executor pass $. arguments that no
	// paths entry declares: the operator says they are not paths. Without
	// it such an argument is refused when the configuration is loaded,
	// and `praxa config validate` warns about every executor that sets it.
	UnconfinedArguments bool `json:"unconfinedArguments,omitempty"`
	// OptionArguments lists the $. arguments of a cli executor whose
	// values may start with '-' (the command reads them as options). Any
	// other value from the scope that starts with '-' is refused before
	// the command runs: a caller's value is data, never an option.
	OptionArguments []string `json:"optionArguments,omitempty"`

	Method  string            `json:"method,omitempty"`
	Path    string            `json:"path,omitempty"`
	Query   map[string]any    `json:"query,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    any               `json:"body,omitempty"`

	// Branches are the executors a parallel executor runs at once, by
	// name; its output holds each branch's output under its name.
	Branches map[string]Executor `json:"branches,omitempty"`
	// Policy says when a parallel executor ends: ParallelWaitAll (the
	// default) or ParallelFailFast.
	Policy string `json:"policy,omitempty"`

	// Prompt is the user message of an llm call and System its system
	// message: templates whose {{$.arguments.NAME}}, {{$.context.NAME}}
	// and {{$.input.NAME}} placeholders are filled from the scope.
	Prompt string `json:"prompt,omitempty"`
	System string `json:"system,omitempty"`
	// OutputSchema, when set, is the JSON Schema the model's answer, read
	// as JSON, must satisfy.
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
	// MaxTokens is the token budget of an llm call (the completion tokens
	// of its requests, a repair included): DefaultLLMMaxTokens when 0.
	MaxTokens int `json:"maxTokens,omitempty"`

	// Script names the script a script executor runs: a file of the
	// scripts directory (package scripts).
	Script string `json:"script,omitempty"`
}

// The policies of a parallel executor.
const (
	// ParallelWaitAll runs every branch to its end, whatever the others
	// answer.
	ParallelWaitAll = "waitAll"
	// ParallelFailFast cancels the branches still running at the first
	// branch that fails.
	ParallelFailFast = "failFast"
)

// DefaultLLMMaxTokens is the token budget of an llm executor that sets no
// maxTokens.
const DefaultLLMMaxTokens = 1024

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
