package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file serves SUBJECT_NEEDS_DEFINITION (seeds/000): a workflow may
// declare (config.Workflow.Subjects) input and argument fields whose values
// name lexicon subjects. A praxec start or submit whose field names no
// known term, ref or alias does not execute: it pauses, and the answer is an
// interaction (REST 200, MCP a normal result, never isError) that holds the
// queued command, the terms the subject may have meant (discovery's
// Candidates: Levenshtein distance and match kind) and three links:
// link_as_alias (the best candidate gains the subject as an alias),
// define_new (the subject becomes a term of its own), both when lexicon
// writes are enabled, and cancel (cancel_pending_subject drops the pause).
// Following link_as_alias or define_new and sending the queued command
// again completes it.
//
// The pause is kept in the store (store.PendingSubject, by tenant, the
// subject's key and the queued command's fingerprint), so every replica
// and a restart see it; a retry that completes drops its command's rows,
// cancel_pending_subject drops the subject's.
//
// The interaction consumes no idempotency key: the check runs in Invoke
// before the idempotency machinery (Service.mutate) is reached, in a
// transaction of its own that writes only the pending row and the audit
// event subject.needs_definition, and its answer is returned from there,
// never stored as an idempotency record. So the same request with the same
// key, sent again once the subject is defined, executes (and is recorded
// then). The check runs only on a submit that could fire (expectedVersion
// current, transition legal from the state): a stale version, an illegal
// transition and the exact replay of a submit that succeeded answer as
// they always did. aura_create_mission and aura_signal_mission are not
// paused (their output schemas hold a mission, not an interaction).

// interactionKind is the kind of the interaction.
const interactionKind = string(contracts.CodeSubjectNeedsDefinition)

// intentCancelPendingSubject is the intent of cancel_pending_subject.
const intentCancelPendingSubject = string(contracts.OpCancelPendingSubject)

// SubjectInteraction is the SUBJECT_NEEDS_DEFINITION answer.
type SubjectInteraction struct {
	Interaction   InteractionBody  `json:"interaction"`
	QueuedCommand QueuedCommand    `json:"queued_command"`
	Links         []contracts.Link `json:"links"`
}

// InteractionBody is the interaction member.
type InteractionBody struct {
	Kind           string                `json:"kind"`
	UnknownSubject string                `json:"unknown_subject"`
	Context        InteractionContext    `json:"context"`
	Candidates     []discovery.Candidate `json:"candidates"`
}

// InteractionContext says where the subject was met. BoundedContext is the
// best candidate's bounded context, null without one.
type InteractionContext struct {
	EncounteredIn  string  `json:"encountered_in"`
	BoundedContext *string `json:"bounded_context"`
}

// QueuedCommand is the paused command, to send again verbatim.
type QueuedCommand struct {
	Method string         `json:"method"`
	Args   map[string]any `json:"args"`
}

// PendingCancelled is the answer of cancel_pending_subject. Cancelled says
// a pending command was dropped.
type PendingCancelled struct {
	Cancelled      bool             `json:"cancelled"`
	UnknownSubject string           `json:"unknown_subject"`
	Dropped        int              `json:"dropped"`
	Links          []contracts.Link `json:"links"`
}

// subjectsDeclared says whether any workflow declares subjects; without
// one, starts and submits skip the check entirely. The catalogue in force
// computed it when it was installed.
func (s *Service) subjectsDeclared() bool { return s.cat.SubjectsDeclared() }

// unknownSubject is what the check found.
type unknownSubject struct {
	value, encounteredIn string
}

// findUnknownSubject returns the first declared subject field of a start
// or a submit that could fire whose value is not in the lexicon, or nil.
func (s *Service) findUnknownSubject(ctx context.Context, tx store.ReadTx, opName string, e *env) (*unknownSubject, error) {
	var defID, state, where string
	var values map[string]any
	switch opName {
	case string(contracts.OpStart):
		defID = stringArg(e.Args, "definitionId")
		d, ok := s.workflows.Lookup(defID)
		if !ok || len(d.Subjects) == 0 {
			return nil, nil
		}
		state = d.Initial
		values, _ = e.Args["input"].(map[string]any)
	case string(contracts.OpSubmit):
		in, _, err := s.missions.loadMission(ctx, tx, e.Principal.Tenant, false, stringArg(e.Args, "workflowId"))
		var ce *contracts.Error
		if errors.As(err, &ce) {
			return nil, nil // the submit answers it
		} else if err != nil {
			return nil, err
		}
		d, ok := s.workflows.Lookup(in.DefinitionID)
		transition := stringArg(e.Args, "transition")
		if !ok || len(d.Subjects) == 0 || in.Version != int64Arg(e.Args, "expectedVersion") ||
			!slices.ContainsFunc(d.Legal(in.State), func(t *workflow.Transition) bool { return t.Name == transition }) {
			return nil, nil
		}
		defID, state, where = in.DefinitionID, in.State, " transition:"+transition
		values, _ = e.Args["arguments"].(map[string]any)
	default:
		return nil, nil
	}
	if len(values) == 0 {
		return nil, nil
	}
	d, ok := s.workflows.Lookup(defID)
	if !ok {
		return nil, nil // replaced by a reload since: the move answers it
	}
	var lex *discovery.Lexicon
	for _, field := range d.Subjects {
		var names []string
		switch v := values[field].(type) {
		case string:
			names = []string{v}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					names = append(names, s)
				}
			}
		}
		for _, name := range names {
			if config.TermKey(name) == "" {
				continue
			}
			if lex == nil {
				var err error
				if lex, err = s.cat.Lexicon(ctx, tx); err != nil {
					return nil, err
				}
			}
			if _, known := lex.Lookup(name); !known {
				return &unknownSubject{value: name, encounteredIn: fmt.Sprintf("workflow:%s state:%s%s", defID, state, where)}, nil
			}
		}
	}
	return nil, nil
}

// pauseOnUnknownSubject answers the interaction when a start or submit
// names an unknown subject, recording the pause; nil lets the command run.
// It runs before the idempotency machinery and its answer is never
// recorded under a key.
func (s *Service) pauseOnUnknownSubject(ctx context.Context, opName string, e *env) *Result {
	if (opName != string(contracts.OpStart) && opName != string(contracts.OpSubmit)) || !s.subjectsDeclared() {
		return nil
	}
	var found *unknownSubject
	var lex *discovery.Lexicon
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		if found, err = s.findUnknownSubject(ctx, tx, opName, e); err != nil || found == nil {
			return err
		}
		lex, err = s.cat.Lexicon(ctx, tx)
		return err
	})
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	if found == nil {
		return nil
	}
	answer := s.interaction(lex, found, e)
	body, err := marshal(answer)
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	cmdKey, err := fingerprint(opName, e.Args)
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	doc, err := marshal(answer.QueuedCommand)
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	e.Events = e.Events[:0]
	e.Event("subject.needs_definition", map[string]any{"unknownSubject": found.value, "encounteredIn": found.encounteredIn,
		"operation": opName, "candidates": len(answer.Interaction.Candidates)})
	if wf := stringArg(e.Args, "workflowId"); wf != "" {
		e.Events[len(e.Events)-1].WorkflowID = wf
	}
	err = s.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutPendingSubject(ctx, store.PendingSubject{Tenant: e.Principal.Tenant, SubjectKey: config.TermKey(found.value),
			CommandKey: cmdKey, Subject: found.value, Doc: doc, CreatedBy: e.Principal.Subject, CreatedAt: e.Now}); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, e.Events)
	})
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	return &Result{Status: 200, Body: body, audited: true}
}

// interaction builds the answer for an unknown subject.
func (s *Service) interaction(lex *discovery.Lexicon, found *unknownSubject, e *env) SubjectInteraction {
	subject := found.value
	cands := lex.Candidates(subject)
	if cands == nil {
		cands = []discovery.Candidate{}
	}
	out := SubjectInteraction{
		Interaction: InteractionBody{Kind: interactionKind, UnknownSubject: subject,
			Context: InteractionContext{EncounteredIn: found.encounteredIn}, Candidates: cands},
		QueuedCommand: QueuedCommand{Method: e.Tool.Name, Args: maps.Clone(e.Args)},
		Links:         s.cat.ResolutionLinks(subject, cands),
	}
	if len(cands) > 0 && cands[0].BoundedContext != "" {
		bounded := cands[0].BoundedContext
		out.Interaction.Context.BoundedContext = &bounded
	}
	return out
}

// completesPending wraps the mutation of a start or submit: once it
// succeeds, the pending rows of the same command (paused earlier on a
// subject since defined) are dropped in its transaction.
func (s *Service) completesPending(opName string, mutate func(context.Context, store.Tx, *env) (any, error)) func(context.Context, store.Tx, *env) (any, error) {
	return func(ctx context.Context, tx store.Tx, e *env) (any, error) {
		out, err := mutate(ctx, tx, e)
		if err != nil || !s.subjectsDeclared() {
			return out, err
		}
		cmdKey, ferr := fingerprint(opName, e.Args)
		if ferr != nil {
			return nil, ferr
		}
		n, derr := tx.DeletePendingSubjects(ctx, e.Principal.Tenant, "", cmdKey)
		if derr != nil {
			return nil, derr
		}
		if n > 0 {
			e.Event("subject.pending_completed", map[string]any{"operation": opName, "dropped": n})
		}
		return out, nil
	}
}

// cancelPendingSubject serves praxec.command cancel_pending_subject: it
// drops the tenant's commands paused on the subject.
func (s *Service) cancelPendingSubject(ctx context.Context, tx store.Tx, e *env) (any, error) {
	if intent := stringArg(e.Args, "intent"); intent != intentCancelPendingSubject {
		return nil, &contracts.Error{Code: contracts.CodeInvalidParams, Message: fmt.Sprintf("%q is not an intent this gateway knows", intent),
			Hint:   "Send intent cancel_pending_subject with the unknown_subject of a SUBJECT_NEEDS_DEFINITION answer (its cancel link).",
			Fields: []contracts.FieldError{{Pointer: "/intent", Detail: "must be " + intentCancelPendingSubject}}}
	}
	subject := stringArg(e.Args, "unknown_subject")
	n, err := tx.DeletePendingSubjects(ctx, e.Principal.Tenant, config.TermKey(subject), "")
	if err != nil {
		return nil, err
	}
	e.Event("subject.pending_cancelled", map[string]any{"unknownSubject": subject, "dropped": n})
	return PendingCancelled{Cancelled: n > 0, UnknownSubject: subject, Dropped: n, Links: []contracts.Link{catalogue.HomeLink()}}, nil
}
