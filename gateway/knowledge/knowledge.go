// Package knowledge serves what the gateway knows beside the missions: a
// tenant's purpose-filtered context (aura_query_memory, aura_list_goals,
// and their imports), the governed skills (aura_get_skill), the model
// capability certificates (aura_list_world_certificates and their import),
// the coverage evidence of conformance runs (aura_get_coverage and the
// operator endpoint that records a run) and the audit trail of one trace
// (aura_get_trace).
//
// It is a feature package (package op): it owns its state (the skills and
// trusted certificate issuers of the configuration in force), hands the
// service its operations (Operations) and stages a reload's skills and
// issuers (Stage). The service's pipeline admits every call before an
// operation runs and commits its events; the imports and the coverage
// recording are operator actions that write, with their audit event, in
// one transaction of their own.
//
// Build it on the store the service runs on, audit hooks included
// (audit.WithHooks), so that its events reach the same sinks.
package knowledge

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
)

// Knowledge serves the knowledge reads and imports. Its methods are safe
// for use by multiple goroutines.
type Knowledge struct {
	store store.Store
	now   func() time.Time
	log   *slog.Logger
	quota ImportQuota
	cur   atomic.Pointer[parts]
}

// parts are one configuration's skills and trusted certificate issuers,
// swapped together by a reload so that a call reads those of one
// configuration.
type parts struct {
	skills  *skills.Catalog
	issuers certs.Issuers
}

// ImportQuota checks a memory or goals import against the tenant's quotas
// inside the import's write transaction, before any record is written
// (gateway.Service implements it: the quotas are the pipeline's).
type ImportQuota interface {
	// CheckImportQuota returns the refusal of an import that adds added
	// records of kind (store.KindMemory or store.KindGoal) to tenant's
	// context; writes are the records it would write.
	CheckImportQuota(ctx context.Context, tx store.Tx, kind, tenant string, added int, writes []store.ContextRecord) error
}

// Options configure a Knowledge. The zero value is usable.
type Options struct {
	// Now is the clock (default time.Now): certificates are verified at
	// it, imports and recorded runs are dated by it.
	Now func() time.Time
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
	// Skills are the governed skills aura_get_skill serves (none when
	// nil); a reload replaces them (Stage).
	Skills *skills.Catalog
	// CertificateIssuers are the trusted issuers of model capability
	// certificates (see CertificateIssuers); a certificate from any other
	// is listed as unknown_issuer. A reload replaces them.
	CertificateIssuers certs.Issuers
	// Quota checks the memory and goals imports against the tenant quotas
	// (nil: imports are not limited).
	Quota ImportQuota
}

// New returns a Knowledge over st.
func New(st store.Store, opts *Options) *Knowledge {
	o := *cmp.Or(opts, &Options{})
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Logger = cmp.Or(o.Logger, slog.Default())
	k := &Knowledge{store: st, now: o.Now, log: o.Logger, quota: o.Quota}
	k.install(o.Skills, o.CertificateIssuers)
	return k
}

// Operations are the operations Knowledge serves, for
// gateway.Service.Register.
func (k *Knowledge) Operations() []op.Operation {
	return []op.Operation{
		{Name: "queryMemory", Read: k.queryMemory},
		{Name: "listGoals", Read: k.listGoals},
		{Name: "getSkill", Read: k.getSkill, Storeless: true},
		{Name: "listWorldCertificates", Read: k.listWorldCertificates},
		{Name: "getCoverage", Read: k.getCoverage},
		{Name: "getTrace", Read: k.getTrace},
	}
}

// Stage implements op.Reloadable: it builds the trusted certificate
// issuers of the staged configuration and returns what swaps them in,
// with its skills, at once. Issuers that do not decode refuse the reload.
func (k *Knowledge) Stage(s op.Staged) (apply func(), err error) {
	issuers, err := CertificateIssuers(s.Config.Certificates)
	if err != nil {
		return nil, fmt.Errorf("certificate issuers: %w", err)
	}
	return func() { k.install(s.Skills, issuers) }, nil
}

// install makes cat (nil: none) and issuers the skills and issuers in
// force.
func (k *Knowledge) install(cat *skills.Catalog, issuers certs.Issuers) {
	if cat == nil {
		cat = &skills.Catalog{}
	}
	k.cur.Store(&parts{skills: cat, issuers: issuers})
}

// CertificateIssuers turns the configuration's certificate issuers into the
// keys Options.CertificateIssuers takes. config.Parse has checked every
// key, so an error here means the configuration was built in code.
func CertificateIssuers(cfg config.Certificates) (certs.Issuers, error) {
	out := certs.Issuers{}
	for _, is := range cfg.Issuers {
		key, err := is.Key()
		if err != nil {
			return nil, err
		}
		out[is.ID] = key
	}
	return out, nil
}

// authorizationLink is the next move of a refusal that only another token
// lifts.
func authorizationLink(what string) contracts.Link { return op.AuthorizationLink(what) }
