package store

import (
	"context"
	"time"
)

// The kinds of context record.
const (
	KindMemory = "memory"
	KindGoal   = "goal"
)

// ContextReadTx reads the purpose-filtered context (memory records and
// goals, tenant data) and the model capability certificates (gateway-wide).
type ContextReadTx interface {
	// GetContextRecord returns the tenant's record of the kind with the id,
	// or ErrNotFound (also for another tenant's record).
	GetContextRecord(ctx context.Context, kind, tenant, id string) (ContextRecord, error)
	// ListContextRecords returns the tenant's records of the kind in the
	// compartment whose Purposes hold purpose, ordered by id. An empty
	// purpose matches every record of the compartment; an empty compartment
	// matches every compartment. Nothing of another tenant, another
	// compartment or another purpose is ever returned.
	ListContextRecords(ctx context.Context, kind, tenant, compartment, purpose string) ([]ContextRecord, error)
	// GetCertificate returns the certificate with the id, or ErrNotFound.
	GetCertificate(ctx context.Context, id string) (Certificate, error)
	// ListCertificates returns every certificate, ordered by id; with an
	// issuer, only that issuer's.
	ListCertificates(ctx context.Context, issuer string) ([]Certificate, error)
}

// ContextTx writes the context records and the certificates.
type ContextTx interface {
	// PutContextRecord stores a record, replacing the tenant's record of the
	// same kind and id if there is one (an upsert: importing a file twice
	// never duplicates a record).
	PutContextRecord(ctx context.Context, r ContextRecord) error
	// PutCertificate stores a certificate, replacing the one with the same
	// id if there is one.
	PutCertificate(ctx context.Context, c Certificate) error
}

// ContextRecord is one memory record or goal of a tenant. The columns the
// store filters on are typed; what the record says (a memory's content, a
// goal's title and status) travels in Doc, an opaque JSON document.
type ContextRecord struct {
	// Kind is KindMemory or KindGoal.
	Kind   string
	Tenant string
	// ID is unique per tenant and kind.
	ID          string
	Compartment string
	// Purposes are the purposes the record may serve; a read for any other
	// purpose never sees it.
	Purposes  []string
	Tags      []string
	Doc       []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Certificate is one stored model capability certificate. Certificates
// describe models, not a tenant's data: like the lexicon overlay they are
// gateway-wide, read the same by every tenant, and written only by the
// operator (praxa certificates import). Doc is the certificate's JSON as
// imported, signature included; it is verified when read.
type Certificate struct {
	ID        string
	Issuer    string
	Subject   string
	Doc       []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}
