package memstore

import (
	"context"
	"slices"
	"strings"

	"github.com/praxa/praxa/gateway/store"
)

// The purpose-filtered context and the certificates. A DB keeps them in
// maps created on the first write; a transaction stages its writes in maps
// of its own.

type contextKey struct{ kind, tenant, id string }

type contextData struct {
	records map[contextKey]store.ContextRecord
	certs   map[string]store.Certificate
}

func copyContextRecord(r store.ContextRecord) store.ContextRecord {
	r.Purposes = append([]string{}, r.Purposes...)
	r.Tags = append([]string{}, r.Tags...)
	r.Doc = append([]byte{}, r.Doc...)
	return r
}

func copyCertificate(c store.Certificate) store.Certificate {
	c.Doc = append([]byte{}, c.Doc...)
	return c
}

// applyContext moves the staged records and certificates into the DB.
func (t *txn) applyContext() {
	merge(&t.db.context.records, t.context.records)
	merge(&t.db.context.certs, t.context.certs)
}

// GetContextRecord implements store.ReadTx.
func (t *txn) GetContextRecord(ctx context.Context, kind, tenant, id string) (store.ContextRecord, error) {
	return getCopy(t.context.records, t.db.context.records, contextKey{kind, tenant, id}, copyContextRecord)
}

// ListContextRecords implements store.ReadTx.
func (t *txn) ListContextRecords(ctx context.Context, kind, tenant, compartment, purpose string) ([]store.ContextRecord, error) {
	keep := func(r store.ContextRecord) bool {
		return r.Kind == kind && r.Tenant == tenant && (compartment == "" || r.Compartment == compartment) &&
			(purpose == "" || slices.Contains(r.Purposes, purpose))
	}
	out := firstOf(rows(t.context.records, t.db.context.records), keep, func(a, b store.ContextRecord) int {
		return strings.Compare(a.ID, b.ID)
	}, 0)
	for i, r := range out {
		out[i] = copyContextRecord(r)
	}
	return out, nil
}

// PutContextRecord implements store.Tx.
func (t *txn) PutContextRecord(ctx context.Context, r store.ContextRecord) error {
	t.mustWrite()
	r = copyContextRecord(r)
	r.CreatedAt, r.UpdatedAt = normTime(r.CreatedAt), normTime(r.UpdatedAt)
	put(&t.context.records, contextKey{r.Kind, r.Tenant, r.ID}, r)
	return nil
}

// GetCertificate implements store.ReadTx.
func (t *txn) GetCertificate(ctx context.Context, id string) (store.Certificate, error) {
	return getCopy(t.context.certs, t.db.context.certs, id, copyCertificate)
}

// ListCertificates implements store.ReadTx.
func (t *txn) ListCertificates(ctx context.Context, issuer string) ([]store.Certificate, error) {
	var out []store.Certificate
	for _, id := range sortedKeys(t.context.certs, t.db.context.certs) {
		c, _ := get(t.context.certs, t.db.context.certs, id)
		if issuer == "" || c.Issuer == issuer {
			out = append(out, copyCertificate(c))
		}
	}
	return out, nil
}

// PutCertificate implements store.Tx.
func (t *txn) PutCertificate(ctx context.Context, c store.Certificate) error {
	t.mustWrite()
	c = copyCertificate(c)
	c.CreatedAt, c.UpdatedAt = normTime(c.CreatedAt), normTime(c.UpdatedAt)
	put(&t.context.certs, c.ID, c)
	return nil
}
