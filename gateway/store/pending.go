package store

import (
	"context"
	"time"
)

// PendingReadTx reads the commands paused on an unknown lexicon subject
// (SUBJECT_NEEDS_DEFINITION).
type PendingReadTx interface {
	// ListPendingSubjects returns the tenant's pending commands waiting on
	// the subject key (an empty subjectKey: on any subject), ordered by
	// subject key, then command key. Nothing of another tenant is ever
	// returned.
	ListPendingSubjects(ctx context.Context, tenant, subjectKey string) ([]PendingSubject, error)
}

// PendingTx writes the paused commands.
type PendingTx interface {
	// PutPendingSubject stores a pending command, replacing the one with
	// the same tenant, subject key and command key (pausing the same
	// command twice keeps one row).
	PutPendingSubject(ctx context.Context, p PendingSubject) error
	// DeletePendingSubjects drops the tenant's pending commands with the
	// subject key and the command key; an empty subjectKey or commandKey
	// matches any. It returns how many it dropped.
	DeletePendingSubjects(ctx context.Context, tenant, subjectKey, commandKey string) (int, error)
}

// PendingSubject is one command paused because a field the workflow
// declares as a lexicon subject named no known term or alias. It is kept
// in the store so that every replica, and a restart, sees it; it is keyed
// by tenant, the unknown subject's key and the queued command's
// fingerprint.
type PendingSubject struct {
	Tenant string
	// SubjectKey is the lookup key of the unknown subject (config.TermKey).
	SubjectKey string
	// CommandKey identifies the queued command (a fingerprint of its
	// method and arguments).
	CommandKey string
	// Subject is the unknown subject as it was sent.
	Subject string
	// Doc is the interaction's JSON document (the queued command).
	Doc []byte
	// CreatedBy is the subject of the principal whose command paused.
	CreatedBy string
	CreatedAt time.Time
}
